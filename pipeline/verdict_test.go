package pipeline

import "testing"

// TestVerdictBounds: the model's verdict stands only where the evidence
// allows it; otherwise the verdict is derived from the stances.
func TestVerdictBounds(t *testing.T) {
	src := func(host string, tier Tier) Source {
		return Source{URL: "https://" + host + "/a", Domain: host, Tier: tier, Status: StatusUsed, Paragraphs: []string{"x"}}
	}
	q := func(host string, k Kind, claim int) Evidence {
		return Evidence{SourceURL: "https://" + host + "/a", Quote: "q " + host, Kind: k, Claim: claim, Verified: true, Included: true}
	}
	for _, tc := range []struct {
		name       string
		correction string
		claims     []Claim
		ev         []Evidence
		want       Verdict
		by         string
	}{
		{"refuted without a refuting quote", "This post is false: …", nil,
			[]Evidence{q("a.example", KindSupports, 0)}, VerdictSupported, VerdictByEvidence},
		{"supported without a confirming quote", "This post is accurate [S1].", nil,
			[]Evidence{q("a.example", KindContext, 0)}, VerdictMisleading, VerdictByEvidence},
		{"supported beside a refutation", "This post is accurate [S1].", nil,
			[]Evidence{q("a.example", KindSupports, 0), q("b.example", KindRefutes, 0)}, VerdictConflicting, VerdictByEvidence},
		{"false with a refutation", "This post is false [S1].", nil,
			[]Evidence{q("a.example", KindRefutes, 0)}, VerdictRefuted, VerdictByModel},
		{"misleading with context", "This post is misleading [S1].", nil,
			[]Evidence{q("a.example", KindSupports, 0), q("b.example", KindContext, 0)}, VerdictMisleading, VerdictByModel},
		{"a low-rated page does not make a dispute", "This post is false [S1].", nil,
			[]Evidence{q("a.example", KindRefutes, 0), q("low.example", KindSupports, 0)}, VerdictRefuted, VerdictByModel},
		{"no evidence", "", nil, nil, VerdictNotEnough, VerdictByEvidence},
		{"two claims, one holds", "This post is accurate [S1].", []Claim{{Text: "one"}, {Text: "two"}},
			[]Evidence{q("a.example", KindSupports, 1), q("b.example", KindRefutes, 2)}, VerdictMisleading, VerdictByEvidence},
		{"two claims, one unknown", "", []Claim{{Text: "one"}, {Text: "two"}},
			[]Evidence{q("a.example", KindRefutes, 1)}, VerdictRefuted, VerdictByEvidence},
		{"a claim's verdict set by the checker", "", []Claim{{Text: "one", CheckerVerdict: VerdictSupported}, {Text: "two"}},
			[]Evidence{q("b.example", KindSupports, 2)}, VerdictSupported, VerdictByChecker},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Check{Post: Post{Text: "p"}, Claims: tc.claims, Evidence: tc.ev, Correction: Correction{Text: tc.correction},
				Sources: []Source{src("a.example", TierHigh), src("b.example", TierMedium), src("low.example", TierLow)}}
			v := c.Verdicts()
			if v.Post != tc.want || v.By != tc.by {
				t.Fatalf("%s by %s, want %s by %s", v.Post, v.By, tc.want, tc.by)
			}
		})
	}
	if v := (&Check{NoLLM: true, Post: Post{Text: "p"}}).Verdicts(); v.Post != "" {
		t.Errorf("the extractive digest gave a verdict: %s", v.Post)
	}
}

func TestProposedVerdict(t *testing.T) {
	for text, want := range map[string]Verdict{
		"This post is accurate: the council voted [S1].":     VerdictSupported,
		"**This post is false.** The council [S1]":           VerdictRefuted,
		"This post is not true: …":                           VerdictRefuted,
		"This post is inaccurate: …":                         VerdictRefuted,
		"This post is partly accurate: …":                    VerdictMisleading,
		"This post is misleading, because …":                 VerdictMisleading,
		"This post is disputed: …":                           VerdictConflicting,
		"This post is unverified: no source …":               VerdictNotEnough,
		"Este post es falso: …":                              "",
		NoSourceText:                                         "",
		"This post is about the council's vote, which [S1]…": "",
	} {
		if got := ProposedVerdict(Correction{Text: text}); got != want {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
}
