package prompts

import (
	"strings"
	"testing"
	"time"
)

// TestCorrectionNamesSharedOrigins: sources carrying one report (copies
// of one wire story) are marked as one origin in the correction's prompt,
// each naming the others by id, and the model is told not to present them
// as independent; a prompt whose sources share nothing says neither.
func TestCorrectionNamesSharedOrigins(t *testing.T) {
	day := time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC)
	ev := []EvidenceItem{
		{URL: "https://www.sfgate.example/a", Publisher: "SFGate", Tier: "high", Published: day, Relevance: 0.9, Kind: KindRefutes,
			Quotes: []string{"Mayor Dana Ruiz said no ban on cycling had ever been drafted."}, Origin: "AP"},
		{URL: "https://www.gazette.example/b", Publisher: "Springfield Gazette", Tier: "high", Published: day, Relevance: 0.8, Kind: KindRefutes,
			Quotes: []string{"Nobody we met had heard of any plan to ban bicycles."}},
		{URL: "https://www.wtop.example/c", Publisher: "WTOP", Tier: "high", Published: day, Relevance: 0.7, Kind: KindRefutes,
			Quotes: []string{"No ban on cycling had ever been drafted, the mayor said."}, Origin: "AP"},
	}
	msgs, err := Correction(Post{Text: "Springfield banned bicycles!", PostedAt: day.AddDate(0, 0, 2)}, ev, "")
	if err != nil {
		t.Fatal(err)
	}
	p := msgs[len(msgs)-1].Content
	for _, want := range []string{
		"[S1] SFGate, high priority, 3 Jan 2024 (the same AP report as [S3]: one origin, not independent)",
		"[S3] WTOP, high priority, 3 Jan 2024 (the same AP report as [S1]: one origin, not independent)",
		"- never presents sources of one origin as independent confirmation",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "[S2] Springfield Gazette, high priority, 3 Jan 2024 (") {
		t.Errorf("an independent source marked as shared:\n%s", p)
	}
	ev[2].Origin = ""
	msgs, err = Correction(Post{Text: "Springfield banned bicycles!"}, ev, "")
	if err != nil {
		t.Fatal(err)
	}
	if p := msgs[len(msgs)-1].Content; strings.Contains(p, "one origin") {
		t.Errorf("a source alone with its origin is marked shared:\n%s", p)
	}
}
