package tui

import (
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/extract"
)

// A page read only up to its paywall, and one a bot protection refused,
// say so in the sources pane and in "why this source": the wall and what
// showed it, the words read, and the summary that counts them apart.
func TestWhyThisSourceNamesTheWall(t *testing.T) {
	m, _ := finished(t, 120, 60)
	m.sel = stageIndex(pipeline.StageSources)
	s := &m.check.Sources[0]
	s.Status, s.Words = pipeline.StatusPartial, 79
	s.Wall = &extract.Wall{Kind: extract.WallPaywall, Signs: []string{"isAccessibleForFree: false"}}
	s.Reason = "paywalled: only the first 79 words were readable, and the model read them: none of them refutes or explains the post"
	b := &m.check.Sources[1]
	b.Status, b.Reason, b.Paragraphs, b.Words = pipeline.StatusBlocked, "the site's bot protection refused muse (Cloudflare, HTTP 403)", nil, 0
	m.check.Evidence = nil
	pane := strings.Join(strings.Fields(m.View()), " ")
	for _, want := range []string{"~ partial", "✗ bot wall"} {
		if !strings.Contains(pane, want) {
			t.Errorf("the sources pane does not show %q:\n%s", want, m.View())
		}
	}
	press(t, m, "enter")
	why := strings.Join(strings.Fields(strings.ReplaceAll(m.View(), "│", " ")), " ")
	for _, want := range []string{"paywall (isAccessibleForFree: false) — only the opening was read", "only the first 79 words were readable",
		"became partial", "behind a paywall: only its first 79 words could be read", "could not be read: the site's bot protection refused muse (HTTP 403)"} {
		if !strings.Contains(why, want) {
			t.Errorf("why this source does not say %q:\n%s", want, m.View())
		}
	}
	if strings.Contains(why, "none addresses the post") || strings.Contains(why, "was read and it does not address") {
		t.Errorf("the partial page is counted as read:\n%s", m.View())
	}
}
