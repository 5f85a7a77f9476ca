package prompts

import (
	"strings"
	"testing"
	"time"
)

func TestTimingOf(t *testing.T) {
	posted := time.Date(2024, 3, 10, 14, 5, 0, 0, time.UTC)
	paris := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		name      string
		published time.Time
		relation  string
		days      int
		text      string
		stale     bool
	}{
		{"hours after", posted.Add(3 * time.Hour), TimingAfter, 0, "3 hours after the post", false},
		{"days after", posted.Add(10*24*time.Hour + time.Hour), TimingAfter, 10, "1 week after the post", false},
		{"minutes before", posted.Add(-20 * time.Minute), TimingBefore, 0, "20 minutes before the post", false},
		{"a day-only date after", time.Date(2024, 3, 13, 0, 0, 0, 0, time.UTC), TimingAfter, 3, "3 days after the post", false},
		{"a day-only date before", time.Date(2024, 3, 9, 0, 0, 0, 0, time.UTC), TimingBefore, -1, "1 day before the post", false},
		// The day alone does not say whether the page came before or after.
		{"a day-only date on the post's day", time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC), TimingSameDay, 0, "the same day as the post", false},
		// Compared by the page's own calendar: 00:00 in Paris is 23:00 UTC the day before.
		{"a day-only date in its zone", time.Date(2024, 3, 11, 0, 0, 0, 0, paris), TimingAfter, 1, "1 day after the post", false},
		{"two years before", time.Date(2022, 1, 5, 0, 0, 0, 0, time.UTC), TimingBefore, -795, "2 years before the post", true},
		{"just under a year before", posted.Add(-364 * 24 * time.Hour), TimingBefore, -364, "12 months before the post", false},
		{"exactly a year before", posted.Add(-StaleAge), TimingBefore, -365, "1 year before the post", true},
	} {
		got := TimingOf(tc.published, posted)
		if got == nil {
			t.Fatalf("%s: no timing", tc.name)
		}
		if got.Relation != tc.relation || got.Days != tc.days || got.Text != tc.text || got.Stale != tc.stale {
			t.Errorf("%s: got %+v, want %s %d %q stale=%t", tc.name, *got, tc.relation, tc.days, tc.text, tc.stale)
		}
		if got.After() != (tc.relation == TimingAfter) {
			t.Errorf("%s: After() = %t", tc.name, got.After())
		}
	}
	if TimingOf(time.Time{}, posted) != nil || TimingOf(posted, time.Time{}) != nil {
		t.Error("a timing without both dates")
	}
	var none *Timing
	if none.After() {
		t.Error("no timing is after the post")
	}
}

// The correction prompt says which facts came after the post, and asks for
// "Since the post, …" only when one did.
func TestCorrectionPromptAfterThePost(t *testing.T) {
	post := Post{Text: "The minister resigned this morning.", PostedAt: time.Date(2024, 3, 10, 9, 0, 0, 0, time.UTC)}
	before := EvidenceItem{URL: "https://apnews.com/a", Publisher: "AP", Tier: "high", Kind: KindContext,
		Published: time.Date(2021, 6, 1, 0, 0, 0, 0, time.UTC), Quotes: []string{"The minister took office in 2019."}}
	after := EvidenceItem{URL: "https://www.reuters.com/b", Publisher: "Reuters", Tier: "high", Kind: KindRefutes,
		Published: time.Date(2024, 3, 10, 16, 30, 0, 0, time.UTC), Quotes: []string{"The minister denied resigning."}}
	msgs, err := Correction(post, []EvidenceItem{before, after}, "")
	if err != nil {
		t.Fatal(err)
	}
	u := userText(t, msgs)
	for _, want := range []string{
		"[S1] Reuters, high priority, 10 Mar 2024 (published 7 hours after the post)\nRefutes: The minister denied resigning.",
		"[S2] AP, high priority, 1 Jun 2021 (2 years before the post: it may be out of date)\nContext:",
		`("Since the post, Reuters reported …")`,
	} {
		if !strings.Contains(u, want) {
			t.Errorf("correction prompt lacks %q:\n%s", want, u)
		}
	}
	msgs, err = Correction(post, []EvidenceItem{before}, "")
	if err != nil {
		t.Fatal(err)
	}
	if u := userText(t, msgs); strings.Contains(u, "Since the post") || strings.Contains(u, "published after") {
		t.Errorf("no fact came after the post, yet the prompt speaks of one:\n%s", u)
	}
}
