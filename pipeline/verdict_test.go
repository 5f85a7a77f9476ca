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
			[]Evidence{q("a.example", KindRefutes, 0)}, VerdictRefuted, VerdictByCorrection},
		{"misleading with context", "This post is misleading [S1].", nil,
			[]Evidence{q("a.example", KindSupports, 0), q("b.example", KindContext, 0)}, VerdictMisleading, VerdictByCorrection},
		{"a low-rated page does not make a dispute", "This post is false [S1].", nil,
			[]Evidence{q("a.example", KindRefutes, 0), q("low.example", KindSupports, 0)}, VerdictRefuted, VerdictByCorrection},
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

// TestSettled: enough once each claim has two independent pages agreeing,
// in either stance; a disagreement, a claim with one page, or two pages
// of one publisher keep reading.
func TestSettled(t *testing.T) {
	src := func(host, path string) Source {
		return Source{URL: "https://" + host + path, Domain: host, Tier: TierHigh, Status: StatusUsed}
	}
	q := func(host, path string, k Kind, claim int) Evidence {
		return Evidence{SourceURL: "https://" + host + path, Quote: "q", Kind: k, Claim: claim, Verified: true, Included: true}
	}
	wire := func(host string) Source {
		s := src(host, "/ap")
		s.Paragraphs = []string{"WASHINGTON (AP) — The council did not vote on it, officials said."}
		return s
	}
	flagged := src("reuters-news.example", "/1")
	flagged.Flags = []SourceFlag{{Kind: FlagLookalike}}
	unrated := src("u.example", "/1")
	unrated.Tier = TierUnrated
	farm := src("farm.example", "/1")
	farm.Tier = TierUnrated
	farm.Flags = []SourceFlag{{Kind: FlagMachineText}}
	srcs := []Source{src("a.example", "/1"), src("a.example", "/2"), src("b.example", "/1"), src("c.example", "/1"),
		wire("d.example"), wire("e.example"), flagged, unrated, farm}
	for _, tc := range []struct {
		name   string
		claims []Claim
		ev     []Evidence
		want   bool
	}{
		{"two confirm", nil, []Evidence{q("a.example", "/1", KindSupports, 0), q("b.example", "/1", KindSupports, 0)}, true},
		{"two refute", nil, []Evidence{q("a.example", "/1", KindRefutes, 0), q("c.example", "/1", KindRefutes, 0)}, true},
		{"one publisher twice", nil, []Evidence{q("a.example", "/1", KindRefutes, 0), q("a.example", "/2", KindRefutes, 0)}, false},
		{"disagreement", nil, []Evidence{q("a.example", "/1", KindSupports, 0), q("b.example", "/1", KindSupports, 0), q("c.example", "/1", KindRefutes, 0)}, false},
		{"one AP story on two sites", nil, []Evidence{q("d.example", "/ap", KindRefutes, 0), q("e.example", "/ap", KindRefutes, 0)}, false},
		{"an AP story and another", nil, []Evidence{q("d.example", "/ap", KindRefutes, 0), q("b.example", "/1", KindRefutes, 0)}, true},
		{"a flagged page does not settle", nil, []Evidence{q("b.example", "/1", KindRefutes, 0), q("reuters-news.example", "/1", KindRefutes, 0)}, false},
		{"a flagged page does not settle among unrated pages either", nil, []Evidence{q("u.example", "/1", KindRefutes, 0), q("farm.example", "/1", KindRefutes, 0)}, false},
		{"context only", nil, []Evidence{q("a.example", "/1", KindContext, 0), q("b.example", "/1", KindContext, 0)}, false},
		{"a claim without enough", []Claim{{Text: "one"}, {Text: "two"}},
			[]Evidence{q("a.example", "/1", KindSupports, 1), q("b.example", "/1", KindSupports, 1), q("c.example", "/1", KindRefutes, 2)}, false},
		{"each claim settled", []Claim{{Text: "one"}, {Text: "two"}},
			[]Evidence{q("a.example", "/1", KindSupports, 1), q("b.example", "/1", KindSupports, 1), q("c.example", "/1", KindRefutes, 2), q("a.example", "/2", KindRefutes, 2)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &run{e: &Engine{opts: Options{RefutingPages: 2}}, c: &Check{Post: Post{Text: "p"}, Claims: tc.claims, Sources: srcs, Evidence: tc.ev}}
			if got := r.settled(); got != tc.want {
				t.Errorf("settled %v, want %v", got, tc.want)
			}
		})
	}
}
