package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
)

// The sources pane and "why this source" say when each page was published
// relative to the post, flag a page years older than the post, and put a
// page about the post itself (one that links to it) first, marked.
func TestSourcesShowTimeRelativeToThePost(t *testing.T) {
	w := englishWorld
	w.pages = slices.Clone(w.pages)
	nyt := &w.pages[len(w.pages)-1] // March 6, the day after the post
	nyt.Links = []string{"https://twitter.com/truthbomb/status/1765001?ref_src=twsrc%5Etfw"}
	m := finishedIn(t, 160, 48, testPost, w, NewStyles(true, false))
	if !m.check.Cutoff.IsZero() {
		t.Fatalf("cutoff %v by default", m.check.Cutoff)
	}
	if first := m.check.Sources[0]; first.URL != nyt.URL || first.OfPost != pipeline.OfPostLinks {
		t.Errorf("first source %s (%q), want the page linking to the post, %s", first.URL, first.OfPost, nyt.URL)
	}
	m.sel = stageIndex(pipeline.StageSources)
	v := m.View()
	for _, want := range []string{
		"★ The New York Times links to or embeds this post, 2024-03-06 (https://www.nytimes.com/",
		"vs post",
		"★ The New York Times",
		"1d after",
		"3d before",
		"5y before ⚠", // the BBC's 2018 story
	} {
		if !strings.Contains(v, want) {
			t.Errorf("sources pane lacks %q:\n%s", want, v)
		}
	}
	m.setCursor(pipeline.StageSources, 0)
	press(t, m, "enter")
	why := func() string { return strings.Join(strings.Fields(m.whyPane(100, 80)), " ") }
	v = why()
	for _, want := range []string{
		"1 day after the post: the post's author could not have seen it",
		"links to or embeds this post",
		"it links to or embeds the post, so it is read first",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("why this source lacks %q:\n%s", want, v)
		}
	}
	press(t, m, "esc")
	bbc := slices.IndexFunc(m.check.Sources, func(s pipeline.Source) bool { return strings.Contains(s.URL, "bbc.com") })
	m.setCursor(pipeline.StageSources, bbc)
	press(t, m, "enter")
	if v := why(); !strings.Contains(v, "5 years before the post — possibly out of date: check that it still held when the post appeared") {
		t.Errorf("why this source does not flag the 2018 page:\n%s", v)
	}
}

// The cutoff field: empty is none, "post" the posted time (the paper's
// protocol), which a post without a time cannot have; a case whose cutoff
// is its post's time reopens showing "post".
func TestCutoffFieldPost(t *testing.T) {
	st := NewStyles(true, false)
	c := newCompose(st, pipeline.Post{Text: "The bridge fell"}, time.Time{})
	if got, err := c.check(fixedNow); err != nil || !got.Cutoff.IsZero() {
		t.Fatalf("empty cutoff: %v, %v", got, err)
	}
	c.inputs[fieldCutoff].SetValue("post")
	if _, err := c.check(fixedNow); err == nil || !strings.Contains(err.Error(), "the post's time is not known") {
		t.Errorf("\"post\" without a posted time: %v", err)
	}
	c.inputs[fieldPosted].SetValue("2024-03-05 09:12")
	if got, err := c.check(fixedNow); err != nil || !got.Cutoff.Equal(testPost.PostedAt) {
		t.Errorf("\"post\": cutoff %v, %v; want %v", got.Cutoff, err, testPost.PostedAt)
	}
	// A post still to be read from its URL has its time once read.
	u := newCompose(st, pipeline.Post{URL: testPost.URL}, time.Time{})
	u.inputs[fieldCutoff].SetValue("POST")
	if got, err := u.check(fixedNow); err != nil || !got.Cutoff.IsZero() {
		t.Errorf("\"post\" of a post to read: %v, %v", got, err)
	}
	if v := newCompose(st, testPost, testPost.PostedAt).inputs[fieldCutoff].Value(); v != "post" {
		t.Errorf("a cutoff at the post's time reopens as %q", v)
	}
	if v := newCompose(st, testPost, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)).inputs[fieldCutoff].Value(); v != "2024-03-01" {
		t.Errorf("a cutoff date reopens as %q", v)
	}
}
