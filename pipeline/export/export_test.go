package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources"
)

func sample() *pipeline.Check {
	return &pipeline.Check{
		ID:        "0hx3k9ab7qz2m1",
		CreatedAt: time.Date(2024, 3, 2, 10, 0, 0, 0, time.UTC),
		Post: pipeline.Post{Text: "The council banned *all* bicycles from Monday!", Author: "Jo Doe", Handle: "@jodoe",
			PostedAt: time.Date(2024, 3, 1, 9, 30, 0, 0, time.UTC), URL: "https://x.com/jodoe/status/1", Platform: "x"},
		Queries: []pipeline.Query{{Text: "council bicycle ban", Enabled: true}, {Text: "off", Enabled: false}},
		Sources: []pipeline.Source{
			{URL: "https://blog.example/c", Domain: "blog.example", Tier: pipeline.TierExcluded, Status: pipeline.StatusExcludedRating,
				Reason: "publisher rated low factuality"},
			{URL: "https://www.reuters.com/a", Title: "Council approves [cycle] lanes", Publisher: "Reuters", PublisherRated: true, Domain: "reuters.com",
				Tier: pipeline.TierHigh, Factuality: "very high", Bias: "least biased", Status: pipeline.StatusUsed,
				Reason: "refutes the post", Published: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC),
				FetchedAt: time.Date(2024, 3, 2, 10, 1, 0, 0, time.UTC)},
		},
		Evidence: []pipeline.Evidence{
			{SourceURL: "https://www.reuters.com/a", Quote: "The council approved\nnew cycle lanes.", Kind: pipeline.KindRefutes, Verified: true, Included: true},
			{SourceURL: "https://www.reuters.com/a", Quote: "unticked quote", Kind: pipeline.KindContext, Verified: true, Included: false},
		},
		Correction: pipeline.Correction{Text: "This post is false: the council approved cycle lanes, not a ban. https://www.reuters.com/a",
			URLs: []string{"https://www.reuters.com/a"}, Model: "gpt-x"},
		Usage: pipeline.Usage{Usage: pipeline.StageUsage{LLMCalls: 3, PromptTokens: 900, CompletionTokens: 120, CostUSD: 0.0042}, Seconds: 12},
	}
}

func TestMarkdown(t *testing.T) {
	md := Markdown(sample())
	for _, want := range []string{
		"# Correction — Refuted (the correction's, within what the evidence allows)\n\nThis post is false",
		"written by gpt-x",
		"- **refutes**: “The council approved new cycle lanes.” — [Reuters](https://www.reuters.com/a), read 2024-03-02",
		"[Council approves \\[cycle\\] lanes](https://www.reuters.com/a) — Reuters; high tier (factuality very high, bias least biased); used: refutes the post; published 2024-03-01; read 2024-03-02",
		"; excluded rating: publisher rated low factuality",
		"> The council banned \\*all\\* bicycles from Monday!", // the post is text: its markup escaped
		"— Jo Doe, @jodoe, x, 2024-03-01 09:30 UTC, <https://x.com/jodoe/status/1>",
		"- council bicycle ban\n",
		"3 model calls, 900 prompt and 120 completion tokens, $0.0042",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	// An unticked quote is listed only under "Left out", with why, as
	// `muse check` prints it: never among the quotes the correction rests on.
	if i, l := strings.Index(md, "unticked quote"), strings.Index(md, "## Left out"); l < 0 || i < l || strings.Contains(md, "- off") {
		t.Errorf("Markdown shows an unticked quote outside \"Left out\", or a disabled query:\n%s", md)
	}
	if strings.Index(md, "reuters.com/a) — Reuters") > strings.Index(md, "blog.example") {
		t.Error("used sources must come before the others")
	}
	c := sample()
	c.Correction = pipeline.Correction{}
	if md := Markdown(c); !strings.Contains(md, "_No correction was written._") {
		t.Errorf("empty correction:\n%s", md)
	}
}

// A page that states only its year is listed with the year, never as the
// first of January, and its JSON keeps the year apart from "published".
func TestMarkdownPartialDate(t *testing.T) {
	c := sample()
	c.Sources = append(c.Sources, pipeline.Source{URL: "https://harbourlanebakery.example/about", Title: "About us", Domain: "harbourlanebakery.example",
		Tier: pipeline.TierUnrated, Status: pipeline.StatusUndated, Reason: "no publication day: the page gives only 2008, so it cannot be shown to predate the cutoff",
		PublishedPartial: sources.PartialDate{Year: 2008}})
	md := Markdown(c)
	if !strings.Contains(md, "; published 2008 (no day stated)") || strings.Contains(md, "2008-01-01") {
		t.Errorf("Markdown does not give the year alone:\n%s", md)
	}
	b, err := JSON(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"published_partial":"2008"`) && !strings.Contains(string(b), `"published_partial": "2008"`) {
		t.Errorf("JSON has no published_partial 2008:\n%s", b)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	b, err := JSON(sample())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	corr, _ := m["correction"].(map[string]any)
	if m["id"] != "0hx3k9ab7qz2m1" || corr["text"] == nil || m["usage"].(map[string]any)["cost_usd"] != 0.0042 {
		t.Errorf("JSON keys: %s", b)
	}
	var back pipeline.Check
	if err := json.Unmarshal(b, &back); err != nil || back.Sources[1].Tier != pipeline.TierHigh {
		t.Errorf("decode back: %v %+v", err, back)
	}
	if _, err := JSON(nil); err == nil {
		t.Error("nil check must fail")
	}
}

func TestNoteLength(t *testing.T) {
	long := "https://www.reuters.com/world/europe/a-very-long-article-slug-that-goes-on-and-on-2024-03-01/?utm=x"
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"  abc  ", 3},
		{long, 1},
		{"See " + long + ".", 6}, // "See " + 1 + "."
		{"(" + long + ")", 3},    // the closing parenthesis is not the URL's
		{"a http://x.y/(b) c", 5},
		{"two " + long + " " + long, 7},
		{"caf\u00e9", 4},            // precomposed é
		{"cafe\u0301", 4},           // e + combining acute: one character
		{"\U0001F44D", 1},           // 👍
		{"\U0001F44D\U0001F3FD", 1}, // 👍🏽 skin tone
		{"\U0001F468\u200D\U0001F469\u200D\U0001F467", 1}, // family ZWJ sequence
		{"\U0001F1EB\U0001F1F7", 1},                       // flag
		{"事实核查", 4},
		{"line\nbreak", 10},
	} {
		if got := NoteLength(tc.s); got != tc.want {
			t.Errorf("NoteLength(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestNote(t *testing.T) {
	c := sample()
	n, err := Note(c)
	if err != nil || n != c.Correction.Text {
		t.Fatalf("Note = %q, %v", n, err)
	}

	// Markdown flattened; URL appended when the text cites none inline.
	// A note links only to the check's pages: these are two more.
	long := "https://www.reuters.com/world/a-very-long-url-" + strings.Repeat("x", 300)
	c.Sources = append(c.Sources, pipeline.Source{URL: "https://apnews.com/b"}, pipeline.Source{URL: long})
	c.Correction.Text = "This post is **false**: see [Reuters](https://www.reuters.com/a) and <https://apnews.com/b>."
	if n, _ := Note(c); n != "This post is false: see Reuters https://www.reuters.com/a and https://apnews.com/b." {
		t.Errorf("flattened = %q", n)
	}
	c.Correction.Text = "This post is false:\n\nthe council approved lanes."
	if n, _ := Note(c); n != "This post is false: the council approved lanes. https://www.reuters.com/a" {
		t.Errorf("appended URL = %q", n)
	}

	// Too long: trailing sentences go, the citation stays.
	s1 := "This post is false: the council approved new cycle lanes on 1 March and did not ban bicycles anywhere in the city, according to Reuters."
	s2 := " The vote passed 7-2 after a long debate about parking, delivery vans, school routes and the cost of repainting roads."
	s3 := " Officials said the lanes would open in stages over the summer and that no fines for cyclists were proposed at any point."
	c.Correction.Text = s1 + s2 + s3 + " Source: " + long
	n, err = Note(c)
	if err != nil {
		t.Fatal(err)
	}
	if NoteLength(n) > NoteLimit || !strings.HasPrefix(n, s1) || !strings.Contains(n, long) || strings.Contains(n, "summer") {
		t.Errorf("shortened note (%d) = %q", NoteLength(n), n)
	}
	if !strings.HasSuffix(strings.TrimSuffix(n, " "+long), ".") {
		t.Errorf("note cut mid-sentence: %q", n)
	}

	// The checker's edit is never shortened: refused, with the overrun.
	c.Correction.Edited = true
	if n, err := Note(c); !errors.Is(err, ErrTooLong) || n != "" || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("edited and too long: note %q, err = %v", n, err)
	}
	c.Correction.Edited = false

	// A first sentence that cannot fit is refused with the overrun.
	c.Correction.Text = strings.Repeat("word ", 70) + "end. " + long
	if _, err := Note(c); !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("too long: err = %v", err)
	}

	c.Correction = pipeline.Correction{Text: "This post is false."}
	if _, err := Note(c); !errors.Is(err, ErrNoURL) {
		t.Errorf("no URL: err = %v", err)
	}
	c.Correction = pipeline.Correction{Text: pipeline.NoSourceText}
	if _, err := Note(c); !errors.Is(err, ErrNoCorrection) {
		t.Errorf("no-source text: err = %v", err)
	}
	c = sample()
	c.NoLLM = true
	if _, err := Note(c); !errors.Is(err, ErrDigest) {
		t.Errorf("digest: err = %v", err)
	}
}

func TestSentences(t *testing.T) {
	got := sentences("The U.S. Senate met on Jan. 5 at https://x.y/a.b. It voted no! Why? Because. https://z.w/")
	want := []string{"The U.S. Senate met on Jan. 5 at https://x.y/a.b.", "It voted no!", "Why?", "Because. https://z.w/"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sentences = %q\nwant %q", got, want)
	}
}

func TestClaimReview(t *testing.T) {
	rating, err := ParseRating("mostly false")
	if err != nil {
		t.Fatal(err)
	}
	r := Reviewer{Name: "Example Checks", URL: "https://checks.example", ReviewURL: "https://checks.example/2024/bikes",
		Published: time.Date(2024, 3, 3, 8, 0, 0, 0, time.UTC)}
	b, err := ClaimReview(sample(), r, rating)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	str := func(v any, key string) string {
		t.Helper()
		obj, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: not an object in %s", key, b)
		}
		s, ok := obj[key].(string)
		if !ok {
			t.Fatalf("%s is %T, want a string, in %s", key, obj[key], b)
		}
		return s
	}
	num := func(v any, key string) float64 {
		t.Helper()
		f, ok := v.(map[string]any)[key].(float64)
		if !ok {
			t.Fatalf("%s is not a number in %s", key, b)
		}
		return f
	}
	checks := map[string]string{
		str(m, "@context"):      "https://schema.org",
		str(m, "@type"):         "ClaimReview",
		str(m, "claimReviewed"): "The council banned *all* bicycles from Monday!",
		str(m, "datePublished"): "2024-03-03",
		str(m, "url"):           "https://checks.example/2024/bikes",
	}
	for got, want := range checks {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	rr := m["reviewRating"]
	if str(rr, "@type") != "Rating" || str(rr, "alternateName") != "Mostly false" ||
		num(rr, "ratingValue") != 2 || num(rr, "bestRating") != 5 || num(rr, "worstRating") != 1 {
		t.Errorf("reviewRating = %v", rr)
	}
	au := m["author"]
	if str(au, "@type") != "Organization" || str(au, "name") != "Example Checks" || str(au, "url") != "https://checks.example" {
		t.Errorf("author = %v", au)
	}
	it := m["itemReviewed"]
	if str(it, "@type") != "Claim" || str(it, "datePublished") != "2024-03-01" {
		t.Errorf("itemReviewed = %v", it)
	}
	if p := it.(map[string]any)["author"]; str(p, "@type") != "Person" || str(p, "name") != "Jo Doe" {
		t.Errorf("claim author = %v", p)
	}
	apps, ok := it.(map[string]any)["appearance"].([]any)
	if !ok || len(apps) != 1 {
		t.Fatalf("appearance = %v", it)
	}
	if str(apps[0], "@type") != "SocialMediaPosting" || str(apps[0], "url") != "https://x.com/jodoe/status/1" {
		t.Errorf("appearance = %v", apps[0])
	}
	if !strings.HasPrefix(str(m, "reviewBody"), "This post is false") {
		t.Errorf("reviewBody = %v", m["reviewBody"])
	}

	// Free-text verdicts carry no scale; a plain web page is a CreativeWork.
	c := sample()
	c.Post.Platform, c.Post.Handle = "", ""
	free, _ := ParseRating("Satire presented as news")
	b, err = ClaimReview(c, Reviewer{Name: "X", URL: "https://x.example"}, free)
	if err != nil {
		t.Fatal(err)
	}
	m = nil
	json.Unmarshal(b, &m)
	if _, has := m["reviewRating"].(map[string]any)["ratingValue"]; has || str(m, "url") != "https://x.example" {
		t.Errorf("free rating / fallback url: %s", b)
	}
	if app := m["itemReviewed"].(map[string]any)["appearance"].([]any)[0]; str(app, "@type") != "CreativeWork" {
		t.Errorf("appearance type: %v", app)
	}
	if _, err := time.Parse(time.DateOnly, str(m, "datePublished")); err != nil {
		t.Errorf("default date: %v", err)
	}

	for name, tc := range map[string]struct {
		r  Reviewer
		rt Rating
	}{
		"no name":      {Reviewer{URL: "https://x.example"}, rating},
		"no url":       {Reviewer{Name: "X"}, rating},
		"bad url":      {Reviewer{Name: "X", URL: "ftp://x"}, rating},
		"no verdict":   {r, Rating{}}, // the sample is made an extractive digest below
		"bad scale":    {r, Rating{AlternateName: "False", Value: 9, Best: 5, Worst: 1}},
		"upside scale": {r, Rating{AlternateName: "False", Value: 1, Best: 1, Worst: 5}},
	} {
		c := sample()
		c.NoLLM = name == "no verdict"
		if _, err := ClaimReview(c, tc.r, tc.rt); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}

	// Without a rating given, the rating is the check's verdict; with
	// the quotes unticked, the verdict and so the rating follow.
	c0 := sample()
	for want, untick := range map[string]bool{"False": false, "Unproven": true} {
		for i := range c0.Evidence {
			c0.Evidence[i].Included = !untick
		}
		b, err := ClaimReview(c0, r, Rating{})
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		json.Unmarshal(b, &got)
		if rr := got["reviewRating"].(map[string]any); rr["alternateName"] != want {
			t.Errorf("rating %v, want %s", rr, want)
		}
	}
	if _, err := ParseRating("  "); err == nil {
		t.Error("empty rating must fail")
	}
}

func TestRender(t *testing.T) {
	c := sample()
	for _, f := range Formats {
		o := Options{Format: f, Reviewer: Reviewer{Name: "X", URL: "https://x.example"}, Rating: Rating{AlternateName: "False"}}
		b, err := Render(c, o)
		if err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
			t.Errorf("Render %s = %q, %v", f, b, err)
		}
	}
	if _, err := Render(c, Options{Format: "pdf"}); err == nil || !strings.Contains(err.Error(), "claimreview") {
		t.Errorf("unknown format: %v", err)
	}
}

// Page and model text cannot drive a terminal from an export: control
// characters and escape sequences are gone from Markdown and notes.
func TestExportsAreTerminalSafe(t *testing.T) {
	c := sample()
	c.Correction.Text = "This post is false\x1b]0;pwned\x07: the council approved lanes \x1b[2J(https://www.reuters.com/a)."
	c.Sources[0].Title = "Council \x1b]52;c;cm0gLXJmIH4=\x07approves"
	c.Evidence[0].Quote = "The council\u009b31m approved new cycle lanes."
	for name, text := range map[string]string{"markdown": Markdown(c), "report": Report(c)} {
		if strings.ContainsAny(text, "\x1b\x07\u009b") {
			t.Errorf("%s keeps a control character: %q", name, text)
		}
	}
	note, err := Note(c)
	if err != nil || strings.ContainsAny(note, "\x1b\x07") || !strings.Contains(note, "https://www.reuters.com/a") {
		t.Errorf("note %q, %v", note, err)
	}
}

// Prompt tokens the server read from its prompt cache are said apart in
// the Markdown's cost line and in the usage line `muse check` prints.
func TestCachedPromptTokensSaid(t *testing.T) {
	c := sample()
	c.Usage.PromptTokens, c.Usage.CachedPromptTokens = 300, 600
	if md := Markdown(c); !strings.Contains(md, "3 model calls, 900 prompt tokens (600 of them from the server's prompt cache) and 120 completion tokens, $0.0042") {
		t.Errorf("Markdown cost line:\n%s", md)
	}
	if l := UsageLine(c.Usage); !strings.HasPrefix(l, "3 model calls, 1020 tokens (600 prompt tokens from the server's prompt cache), $0.0042") {
		t.Errorf("usage line %q", l)
	}
	if l := UsageLine(sample().Usage); !strings.HasPrefix(l, "3 model calls, 1020 tokens, $0.0042") {
		t.Errorf("usage line without a prompt cache %q", l)
	}
}

// A ClaimReview names the claim as the reviewer states it when one is
// given, and the post's text otherwise.
func TestClaimReviewClaim(t *testing.T) {
	r := Reviewer{Name: "Desk", URL: "https://desk.example", Claim: "Springfield banned bicycles."}
	for _, c := range []struct {
		r    Reviewer
		want string
	}{{r, "Springfield banned bicycles."}, {Reviewer{Name: "Desk", URL: "https://desk.example"}, sample().Post.Text}} {
		b, err := ClaimReview(sample(), c.r, Rating{AlternateName: "False"})
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			ClaimReviewed string `json:"claimReviewed"`
		}
		if err := json.Unmarshal(b, &doc); err != nil || doc.ClaimReviewed != c.want {
			t.Errorf("claimReviewed %q (%v), want %q", doc.ClaimReviewed, err, c.want)
		}
	}
}

// The report says how much of a page cut to its passages the model was
// shown, and what the evidence step expected and sent; the JSON carries
// both records.
func TestMarkdownSaysWhatWasSent(t *testing.T) {
	c := sample()
	c.Sources[1].Sent = &pipeline.PageSent{Tokens: 1480, PageTokens: 6200, Cap: 1500, Why: "the page being longer than the cap",
		ChosenBy: "shared words", Passages: []pipeline.SentPassage{{Offset: 0, Bytes: 30, Tokens: 1480, Rank: 1}}}
	c.EvidencePlan = &pipeline.EvidencePlan{Pages: 1, PageTokens: 1500, Setting: 1500, Calls: 1, Tokens: 4000, CostUSD: 0.01, Cut: 1}
	c.Usage.ByStage = map[string]pipeline.StageUsage{"evidence": {LLMCalls: 1, PromptTokens: 3000, CompletionTokens: 200, CostUSD: 0.008}}
	md := Markdown(c)
	for _, want := range []string{
		"; the model was shown 1480 of 6200 tokens",
		"Evidence: expected up to 1 page, about 4000 tokens (up to $0.0100); sent 1480 tokens of page text from 1 page (0 whole, 1 cut to its passages), 1 model calls, 3200 tokens",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	raw, err := JSON(c)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"sent":{"tokens":1480,"page_tokens":6200,"whole":false`, `"passages":[{"offset":0,"bytes":30,"tokens":1480,"rank":1}]`, `"evidence_plan":{"pages":1,"page_tokens":1500`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}
