package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/musecheck/muse/pipeline"
)

// The whole post (p) shows what the post points at as context, apart from
// the author's words; a digit leaves an item out, which makes the queries
// and what follows stale, and s runs again from the queries without it.
func TestPostContextShownAndLeftOut(t *testing.T) {
	m, r := finished(t, 100, 40)
	m.check.Post.Context = []pipeline.ContextItem{
		{Kind: pipeline.ContextParent, Text: "The council banned all bicycles from Main Street", Author: "City Rumours", Handle: "@cityrumours",
			PostedAt: time.Date(2024, 1, 25, 9, 0, 0, 0, time.UTC)},
		{Kind: pipeline.ContextLink, URL: "http://www.rumours.example/springfield-bans-bikes", Title: "Springfield BANS bicycles!",
			Site: "Rumours Daily", Text: "Springfield banned bicycles from Main Street, insiders say.", TextFrom: "article"},
	}
	m.check.Post.Notes = []string{"the quoted post was deleted"}
	press(t, m, "p")
	flat := strings.Join(strings.Fields(ansi.Strip(m.View())), " ")
	for _, want := range []string{"[x] 1 context · The post this replies to — City Rumours (@cityrumours), 2024-01-25",
		"The council banned all bicycles", "[x] 2 context · The article this post shares — Rumours Daily",
		"read from the article: its card said too little", "! the quoted post was deleted", "1…2 leaves out or brings back a context item"} {
		if !strings.Contains(flat, want) {
			t.Errorf("post view lacks %q:\n%s", want, m.View())
		}
	}
	// The parent comes before the post's own words, the card after.
	if i, j, k := strings.Index(flat, "The post this replies to"), strings.Index(flat, strings.Fields(m.check.Post.Text)[0]), strings.Index(flat, "The article this post shares"); !(i < j && j < k) {
		t.Errorf("order: parent %d, post %d, card %d", i, j, k)
	}
	press(t, m, "1")
	if !m.check.Post.Context[0].Excluded || m.check.Stage(pipeline.StageQueries).State != pipeline.StateStale ||
		m.check.Stage(pipeline.StageCorrection).State != pipeline.StateStale || m.overlay != overlayPost {
		t.Fatalf("after 1: item %+v, queries %s, overlay %v", m.check.Post.Context[0], m.check.Stage(pipeline.StageQueries).State, m.overlay)
	}
	if flat := strings.Join(strings.Fields(ansi.Strip(m.View())), " "); !strings.Contains(flat, "[ ] 1 context") || strings.Contains(flat, "banned all bicycles") {
		t.Errorf("a left-out item still shown as in:\n%s", m.View())
	}
	press(t, m, "9")
	if !strings.Contains(m.status, "points at 2 items") {
		t.Errorf("status %q", m.status)
	}
	press(t, m, "s")
	froms, seen := r.runs()
	if froms[len(froms)-1] != pipeline.StageQueries || !seen[len(seen)-1].Post.Context[0].Excluded || m.overlay != overlayNone {
		t.Errorf("s ran from %s with context %+v", froms[len(froms)-1], seen[len(seen)-1].Post.Context)
	}
	// Brought back with the same key.
	press(t, m, "p", "1")
	if m.check.Post.Context[0].Excluded {
		t.Error("1 did not bring the item back")
	}
}
