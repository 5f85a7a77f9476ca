package pipeline

import (
	"slices"
	"strings"
	"testing"
)

// An edit that adds a figure no quote holds is warned of, by the figure;
// figures the quotes or the post hold, and the digits of a link, are not;
// a quote left out or on a dropped page holds nothing.
func TestUnheldFiguresWarned(t *testing.T) {
	c := &Check{
		Post: Post{Text: "Springfield banned bicycles on 3 streets!"},
		Sources: []Source{
			{URL: "https://www.reuters.com/a", Status: StatusUsed},
			{URL: "https://apnews.com/b", Status: StatusUsed, Dropped: true},
		},
		Evidence: []Evidence{
			{SourceURL: "https://www.reuters.com/a", Quote: "The council voted 7-2 to add lanes costing $1,200,000.", Kind: KindRefutes, Verified: true, Included: true},
			{SourceURL: "https://www.reuters.com/a", Quote: "About 40% of residents cycle.", Kind: KindContext, Verified: true, Included: false},
			{SourceURL: "https://apnews.com/b", Quote: "Work starts in 2025.", Kind: KindContext, Verified: true, Included: true},
		},
		Correction: Correction{Text: "The post's 3 streets were never banned: the council voted 7-2 for lanes costing $1200000. https://www.reuters.com/a/2024/03/01"},
	}
	warned := func() []string {
		var out []string
		for _, w := range c.CorrectionWarnings() {
			if strings.HasPrefix(w, "the figure ") {
				out = append(out, w)
			}
		}
		return out
	}
	if w := warned(); len(w) != 0 {
		t.Errorf("figures the quotes and the post hold are warned of: %q", w)
	}
	c.Correction.Text = "The council voted 7-2; 40% of residents cycle and work starts in 2025, at 12 sites. https://www.reuters.com/a"
	c.Correction.Edited = true
	want := []string{
		"the figure 40 is in no quote the correction rests on, nor in the post: check it against the pages",
		"the figure 2025 is in no quote the correction rests on, nor in the post: check it against the pages",
		"the figure 12 is in no quote the correction rests on, nor in the post: check it against the pages",
	}
	if w := warned(); !slices.Equal(w, want) {
		t.Errorf("warnings %q, want %q", w, want)
	}
}
