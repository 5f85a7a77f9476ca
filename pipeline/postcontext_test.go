package pipeline

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestPostContextJSONAndUntick(t *testing.T) {
	c := &Check{Post: Post{Text: "Exactly.", Notes: []string{"the quoted post was deleted"}, Context: []ContextItem{
		{Kind: ContextParent, Root: true, Text: "The thread starts here", Handle: "@a"},
		{Kind: ContextParent, Text: "The council banned bicycles", Author: "City Rumours", Handle: "@cityrumours"},
		{Kind: ContextLink, URL: "https://www.rumours.example/a", Title: "Springfield BANS bicycles!", Description: "Read more.", Site: "Rumours Daily"},
	}}}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"context":[{"kind":"parent"`, `"root":true`, `"kind":"link","url":"https://www.rumours.example/a","title":"Springfield BANS bicycles!"`,
		`"notes":["the quoted post was deleted"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
	if got := []string{c.Post.ItemLabel(0), c.Post.ItemLabel(1), c.Post.ItemLabel(2)}; strings.Join(got, "|") !=
		"The thread's first post|The post this replies to|The article this post shares" {
		t.Errorf("labels %q", got)
	}
	if w := c.Post.Context[1].Who(); w != "City Rumours (@cityrumours)" {
		t.Errorf("who %q", w)
	}
	d := c.Clone()
	d.Post.Context[0].Text = "changed"
	if c.Post.Context[0].Text == "changed" {
		t.Error("Clone shares the context")
	}
	c.setStage(StageInfo{Stage: StageQueries, State: StateDone})
	c.setStage(StageInfo{Stage: StageCorrection, State: StateDone})
	c.setStage(StageInfo{Stage: StageImages, State: StateDone})
	if err := c.SetContextIncluded(1, false); err != nil {
		t.Fatal(err)
	}
	if c.Stage(StageQueries).State != StateStale || c.Stage(StageCorrection).State != StateStale || c.Stage(StageImages).State != StateDone {
		t.Errorf("stages after an untick: %+v", c.Stages)
	}
	pc := promptContext(c.Post)
	if len(pc) != 2 || strings.Contains(pc[0].Text+pc[1].Text, "banned") {
		t.Errorf("an unticked item reaches the prompts: %+v", pc)
	}
	if s := postForSearch(c); strings.Contains(s, "banned") || !strings.Contains(s, "Springfield BANS") {
		t.Errorf("search text %q", s)
	}
	// A long thread cannot crowd the prompts: posts further up get less room.
	long := strings.Repeat("The council met again about the bicycles. ", 100)
	c.Post.Context[0].Text, c.Post.Context[1].Text, c.Post.Context[1].Excluded = long, long, false
	pc = promptContext(c.Post)
	if len(pc[0].Text) > maxUpThreadChars+10 || len(pc[1].Text) > maxContextChars+10 || len(pc[1].Text) <= maxUpThreadChars+10 {
		t.Errorf("context sizes %d (up the thread) and %d (replied to)", len(pc[0].Text), len(pc[1].Text))
	}
	if err := c.SetContextIncluded(5, true); !errors.Is(err, ErrNotInCheck) {
		t.Errorf("item 6: %v", err)
	}
}
