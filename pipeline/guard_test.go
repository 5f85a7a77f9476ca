package pipeline

import (
	"slices"
	"strings"
	"testing"
)

func TestVerifyQuote(t *testing.T) {
	page := "The agency said on Tuesday that the vaccine \u201cdoes not alter\u201d human DNA \u2014 a claim\u00a0repeated online.\n\nOther text."
	cases := []struct {
		quote string
		want  bool
	}{
		{`the vaccine "does not alter" human DNA - a claim repeated online.`, true},
		{"  \u201cThe agency said on Tuesday that the vaccine\u201d ", true},
		{"The agency said on   Tuesday\nthat the vaccine", true},
		{"the vaccine does alter human DNA", false},                                     // invented wording
		{"THE AGENCY SAID ON TUESDAY THAT THE VACCINE", true},                           // case is form (issue 11)
		{"The agency said on Tuesday that the vaccine \"does alter\" human DNA", false}, // a flipped negation
		{"Other text.", false}, // too short to prove anything
		{"", false},
		{"repeated online.\n\nOther text. And more text invented", false},
	}
	for _, c := range cases {
		if got := VerifyQuote(c.quote, page); got != c.want {
			t.Errorf("VerifyQuote(%q) = %v, want %v", c.quote, got, c.want)
		}
	}
}

func TestGuardCorrection(t *testing.T) {
	allowed := []string{"https://www.reuters.com/world/a", "http://apnews.com/b"}
	text := "This post is misleading. Reuters reported the opposite (https://reuters.com/world/a/?utm_source=x). " +
		"See also [AP](https://apnews.com/b) and [this blog](https://fake.example/post), or https://invented.example/x."
	got, cited, warns := GuardCorrection(text, allowed)
	if strings.Contains(got, "fake.example") || strings.Contains(got, "invented.example") {
		t.Fatalf("invented URL kept: %q", got)
	}
	if !strings.Contains(got, "https://reuters.com/world/a/?utm_source=x") || !strings.Contains(got, "[AP](https://apnews.com/b)") {
		t.Fatalf("evidence URL removed: %q", got)
	}
	if !strings.Contains(got, "and this blog, or.") && !strings.Contains(got, "and this blog, or") {
		t.Errorf("label of removed link not kept: %q", got)
	}
	if !slices.Equal(cited, allowed) {
		t.Errorf("cited = %v, want %v", cited, allowed)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], "hxxps://fake[.]example/post") || !strings.Contains(warns[1], "hxxps://invented[.]example/x") {
		t.Errorf("warnings = %v", warns)
	}
}

// Tidying the hole a removed URL leaves must not join the text around it
// into a new, unchecked URL (found by FuzzGuardCorrection).
func TestGuardCorrectionTidyCannotForgeURL(t *testing.T) {
	allowed := []string{"https://www.reuters.com/world/a"}
	got, cited, warns := GuardCorrection("Proof: https ://evil.example/proof https://evil.example/decoy", allowed)
	if strings.Contains(got, "evil.example") {
		t.Fatalf("forged URL survived the guard: %q", got)
	}
	if len(cited) != 0 || len(warns) != 2 {
		t.Errorf("cited = %v, warnings = %v; want none cited and both removals named", cited, warns)
	}
}

func TestGuardCorrectionNoURLs(t *testing.T) {
	got, cited, warns := GuardCorrection("  This post is accurate.  ", nil)
	if got != "This post is accurate." || cited != nil || warns != nil {
		t.Fatalf("got %q %v %v", got, cited, warns)
	}
}

func TestCloneIsDeep(t *testing.T) {
	c := &Check{Queries: []Query{{Text: "a"}}, Sources: []Source{{URL: "u", Paragraphs: []string{"p"}}},
		Correction: Correction{URLs: []string{"x"}}, Usage: Usage{ByStage: map[string]StageUsage{"q": {LLMCalls: 1}}}}
	d := c.Clone()
	d.Queries[0].Text = "b"
	d.Sources[0].Paragraphs[0] = "changed"
	d.Correction.URLs[0] = "y"
	d.Usage.ByStage["q"] = StageUsage{LLMCalls: 9}
	if c.Queries[0].Text != "a" || c.Sources[0].Paragraphs[0] != "p" || c.Correction.URLs[0] != "x" || c.Usage.ByStage["q"].LLMCalls != 1 {
		t.Fatal("Clone shares memory with the original")
	}
	if (*Check)(nil).Clone() != nil {
		t.Fatal("nil Clone")
	}
	score := 0.5
	c.XNote = &XNote{PostID: "1", ClaimOpinion: &score, Requests: []XNoteRequest{{Suggestion: "s"}}, Scores: map[string]string{"ClaimOpinion": "high"}}
	d = c.Clone()
	*d.XNote.ClaimOpinion = 0.9
	d.XNote.Requests[0].Suggestion = "t"
	d.XNote.Scores["ClaimOpinion"] = "low"
	if *c.XNote.ClaimOpinion != 0.5 || c.XNote.Requests[0].Suggestion != "s" || c.XNote.Scores["ClaimOpinion"] != "high" {
		t.Fatal("Clone shares the XNote with the original")
	}
}

func TestSelectParagraphsBudget(t *testing.T) {
	post := "The mayor of Springfield banned bicycles on Main Street"
	paras := []string{
		strings.Repeat("Weather report for the weekend with sunshine and light rain. ", 10),
		"The mayor of Springfield did not ban bicycles on Main Street, a spokesperson said.",
		strings.Repeat("Sports results from the league. ", 20),
		"Bicycles remain allowed on Main Street according to the city council of Springfield.",
	}
	got := selectParagraphs(newParaQuery(Text{Text: post}, nil, ""), paras, 50)
	if len(got) != 2 || got[0] != paras[1] || got[1] != paras[3] {
		t.Fatalf("selected %q", got)
	}
	one := selectParagraphs(newParaQuery(Text{Text: "weather"}, nil, ""), []string{strings.Repeat("Weather is fine today. ", 100)}, 20)
	if len(one) != 1 || pageTokens(one[0]) > 20 || !strings.HasSuffix(one[0], ".") {
		t.Fatalf("over-budget paragraph not cut at a sentence: %q", one)
	}
}

func TestLexicalRelevance(t *testing.T) {
	post := Text{Text: "BREAKING: Pfizer vaccine contains microchips, says CDC whistleblower https://t.co/x @someone"}
	related := LexicalRelevance(post, "No, the Pfizer vaccine does not contain microchips",
		Text{Text: "The CDC said claims from a so-called whistleblower are false."})
	unrelated := LexicalRelevance(post, "Stocks rally", Text{Text: "Markets rose on Tuesday as investors cheered earnings."})
	if related < 0.6 || unrelated > 0.1 {
		t.Fatalf("related %.2f unrelated %.2f", related, unrelated)
	}
	if LexicalRelevance(Text{Text: "🔥🔥 https://t.co/x"}, "t", Text{Text: "anything"}) != 0 {
		t.Fatal("a post of only emoji and URLs has no words to match")
	}
}

func TestKeyPhrasesAndFallback(t *testing.T) {
	post := "Joe Biden signed an order banning gas stoves in New York, starting 2025! https://t.co/abc #gasstoves"
	qs := keyPhrases(Text{Text: post}, 3)
	if len(qs) == 0 || !strings.Contains(qs[0], "Joe Biden") || !strings.Contains(qs[0], "New York") {
		t.Fatalf("key phrases %q", qs)
	}
	if fq := fallbackQuery(post); strings.Contains(fq, "t.co") || !strings.HasPrefix(fq, "Joe Biden") {
		t.Fatalf("fallback query %q", fq)
	}
	if fallbackQuery("🔥🔥🔥 https://t.co/x") != "" {
		t.Fatal("emoji-only post made a query")
	}
	if len(keyPhrases(Text{Text: "🙂 🙂"}, 3)) != 0 {
		t.Fatal("emoji-only post made key phrases")
	}
	// A sentence's capitalised first word is not a name on its own; one
	// the post capitalises again, or spells with capitals inside, is.
	for post, want := range map[string]string{
		"False positives and rapid tests are why cases are up. Stop testing!": "",
		"Trump signed it. Then Trump left for Florida.":                       "Trump Florida",
		"NASA says the moon is flat.":                                         "NASA",
		"“Wow.” Obama said in 2012 that Greta Thunberg lied.":                 "2012 Greta Thunberg",
	} {
		qs := keyPhrases(Text{Text: post, Lang: "en"}, 3)
		names := ""
		if len(qs) > 1 {
			names = qs[0]
		}
		if names != want {
			t.Errorf("%q: names query %q, want %q (all: %q)", post, names, want, qs)
		}
	}
}

// A link X would make is a link: a bare or percent-encoded domain is
// removed and named defanged; HTML tags go whole; prose with dots stays.
func TestGuardCorrectionHostileForms(t *testing.T) {
	ev := "https://www.reuters.com/world/a"
	for _, c := range []struct {
		in, want string
		warn     []string
	}{
		{"False, see %68ttps://evil-proof.com/e and " + ev, "False, and " + ev,
			[]string{"removed hxxps://evil-proof[.]com/e"}},
		{"False: evil-proof.com says otherwise, but " + ev + " shows it.", "False: says otherwise, but " + ev + " shows it.",
			[]string{"removed hxxps://evil-proof[.]com"}},
		{"False " + ev + ` <meta http-equiv="refresh" content="0;url=https://evil.example/x"> <svg onload=alert(1)></svg>`, "False " + ev,
			[]string{"removed hxxps://evil[.]example/x", "removed HTML markup: <meta>, <svg>"}},
		{"False <script>fetch('//evil.example/k')</script>" + ev, "False " + ev, []string{"removed HTML markup: <script>"}},
		{`False, as <a href="` + ev + `">Reuters</a> found.`, "False, as [Reuters](" + ev + ") found.", []string{"removed HTML markup"}[:0]},
		{"The U.S. agency, e.g. in Node.js docs and main.go, says 3.5 " + ev, "The U.S. agency, e.g. in Node.js docs and main.go, says 3.5 " + ev, nil},
	} {
		got, cited, warns := GuardCorrection(c.in, []string{ev})
		if got != c.want {
			t.Errorf("GuardCorrection(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
		if !slices.Equal(cited, []string{ev}) {
			t.Errorf("GuardCorrection(%q) cited %q", c.in, cited)
		}
		if len(warns) != len(c.warn) {
			t.Errorf("GuardCorrection(%q) warnings %q, want %q", c.in, warns, c.warn)
			continue
		}
		for i, w := range c.warn {
			if !strings.HasPrefix(warns[i], w) {
				t.Errorf("GuardCorrection(%q) warning %q, want %q…", c.in, warns[i], w)
			}
		}
	}
}

// A quote's shortest length holds the same amount of text in every
// script: ten characters of Japanese (about five words) is a quote, as
// twenty of English are; three characters, like "Yes.", are not.
func TestShortestQuoteInEveryScript(t *testing.T) {
	page := "大阪府は１４日、新しい条例を可決したと発表した。市民の反対は多かった。"
	for _, c := range []struct {
		quote string
		ok    bool
	}{
		{"新しい条例を可決した", true},
		{"可決した", false},
		{"The council voted.", false},
		{"The council voted no.", true},
	} {
		text := page
		if !strings.ContainsRune(c.quote, '可') {
			text = "The council voted no. It met on Monday."
		}
		if m := LocateQuote(c.quote, text); m.Verified != c.ok {
			t.Errorf("%q: verified %v (%s), want %v", c.quote, m.Verified, m.Reason, c.ok)
		}
	}
}
