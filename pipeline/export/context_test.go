package export

import (
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
)

// The Markdown report shows what the post points at as context, apart
// from the author's words, and says what could not be read.
func TestMarkdownContext(t *testing.T) {
	c := sample()
	c.Post.Context = []pipeline.ContextItem{
		{Kind: pipeline.ContextParent, Text: "Cyclists will be fined 500 dollars", Author: "City Rumours", Handle: "@cityrumours"},
		{Kind: pipeline.ContextLink, URL: "https://www.rumours.example/a", Title: "Springfield BANS bicycles!", Site: "Rumours Daily", Excluded: true},
	}
	c.Post.Notes = []string{"the quoted post was deleted"}
	md := Markdown(c)
	for _, want := range []string{"Context — The post this replies to, by City Rumours (@cityrumours): Cyclists will be fined 500 dollars\n",
		"Context — The article this post shares, by Rumours Daily (left out by the checker): Springfield BANS bicycles! (<https://www.rumours.example/a>)",
		"Note: the quoted post was deleted"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if post := md[strings.Index(md, "## Post"):strings.Index(md, "Context —")]; strings.Contains(post, "fined") {
		t.Errorf("the context is quoted as the post:\n%s", post)
	}
}
