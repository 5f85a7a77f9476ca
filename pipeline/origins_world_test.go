package pipeline_test

import (
	"fmt"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/testworld"
)

// TestWorldPublishersAreIndependent: the loopback world's publishers write
// their pages in one template, each with its own reporting; a check of the
// world counts each quoted publisher as its own origin and flags none of
// them as another's copy.
func TestWorldPublishersAreIndependent(t *testing.T) {
	env := testworld.New(t, nil)
	c, err := env.Check(t, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	origins, pages := c.Origins(), 0
	for _, o := range origins {
		pages += len(o.URLs)
		if len(o.URLs) != 1 {
			t.Errorf("one origin for %d publishers: %+v", len(o.URLs), o)
		}
	}
	if pages < 2 {
		t.Fatalf("%d pages quoted, want several publishers", pages)
	}
	if got, want := c.OriginsSummary(), fmt.Sprintf("%d pages, %d origins", pages, len(origins)); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	for _, s := range c.Sources {
		for _, f := range s.Flags {
			if f.Kind == pipeline.FlagCopy {
				t.Errorf("%s flagged: %s", s.URL, f.Reason)
			}
		}
	}
}
