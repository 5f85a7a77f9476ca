package cases

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
)

// BenchmarkSaveAfterEvent measures one Save of a check the size of a full
// run (12 read pages of ~20,000 characters, 200 events), changed by one
// event each time, as the engine's event loop would call it.
func BenchmarkSaveAfterEvent(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "cases.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c := sampleCheck()
	c.ID = NewID()
	para := strings.Repeat("The council approved new cycle lanes after a long debate. ", 30)
	for i := range 12 {
		src := c.Sources[0]
		src.URL = fmt.Sprintf("https://www.reuters.com/%d", i)
		src.Paragraphs = make([]string, 12)
		for j := range src.Paragraphs {
			src.Paragraphs[j] = para
		}
		c.Sources = append(c.Sources, src)
	}
	for i := range 200 {
		c.Events = append(c.Events, pipeline.Event{Kind: pipeline.EventItem, Message: fmt.Sprintf("event %d", i)})
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.Usage.LLMCalls = i
		if err := s.Save(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}
