package export

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/fetch"
)

// TestXLinks: the tokens X's URL evaluator reads as links, with the
// variants it tries — its own examples, and the words its optional scheme
// turns into links.
func TestXLinks(t *testing.T) {
	for text, want := range map[string][][]string{
		"See https://www.reuters.com/a.":        {{"https://www.reuters.com/a.", "https://www.reuters.com/a"}},
		"Built on Node.js and report.pdf here":  {{"Node.js"}, {"report.pdf"}},
		"(see example.com/path)":                {{"example.com/path)", "example.com/path"}},
		"Read www.bbc.co.uk, then decide":       {{"www.bbc.co.uk"}},
		"The council voted on 3 March.":         nil,
		"Lire https://exemple.fr/été et ça":     {{"https://exemple.fr/été"}},
		"Le site café.fr dit non":               {{"café.fr"}},
		"Escaped: https://a.example/?x=1&amp;y": {{"https://a.example/?x=1&y"}},
		"An abbreviation e.g. is not one":       nil,
	} {
		var got [][]string
		for _, l := range XLinks(text) {
			got = append(got, l.Variants)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("XLinks(%q) = %q, want %q", text, got, want)
		}
	}
	ls := XLinks("Node.js https://a.example/x")
	if !ls[0].Bare || ls[1].Bare {
		t.Errorf("bare: %+v", ls)
	}
}

func TestXLength(t *testing.T) {
	if n := XLength("False. https://www.reuters.com/" + strings.Repeat("a", 300)); n != len("False. ")+1 {
		t.Errorf("a long URL counts %d, want 1 for it", n-len("False. "))
	}
	if n := XLength("Node.js é"); n != 3 {
		t.Errorf("XLength(Node.js é) = %d, want 3 (the token 1, space, é)", n)
	}
}

// TestPreflightNote: each of X's rules fails on its own, with a fix.
func TestPreflightNote(t *testing.T) {
	ok := pipeline.NoteFields{Classification: pipeline.ClassMisleading, Tags: []pipeline.NoteTag{{Tag: pipeline.TagFactualError, Reason: "r"}}}
	for _, tc := range []struct {
		text  string
		f     pipeline.NoteFields
		rules []string
		lang  string
	}{
		{"The council approved cycle lanes, not a ban. https://www.reuters.com/a", ok, nil, ""},
		{"The council approved cycle lanes, not a ban.", ok, []string{"url"}, ""},
		{"Community Note: the council approved lanes https://www.reuters.com/a", ok, []string{"prefix"}, ""},
		{"Lanes, not a ban #fakenews https://www.reuters.com/a", ok, []string{"hashtag"}, ""},
		{"Lanes, not a ban 🚲 https://www.reuters.com/a", ok, []string{"emoji"}, ""},
		{"Lanes on Node.js https://www.reuters.com/a", ok, []string{"bare_link"}, ""},
		{strings.Repeat("word ", 60) + "https://www.reuters.com/a", ok, []string{"length"}, ""},
		{"Lanes https://www.reuters.com/a", pipeline.NoteFields{Abstain: "NOT ENOUGH EVIDENCE"}, []string{"abstain"}, ""},
		{"Lanes https://www.reuters.com/a", pipeline.NoteFields{Classification: pipeline.ClassMisleading}, []string{"tags"}, ""},
		{"Issue #12 of the plan https://www.reuters.com/a", ok, []string{"hashtag"}, ""},
		{"It's important to note that the council approved lanes https://www.reuters.com/a", ok, []string{"filler"}, ""},
		{"The council approved lanes. [Source] https://www.reuters.com/a", ok, []string{"filler"}, ""},
		{"NOT ENOUGH EVIDENCE TO WRITE A GOOD COMMUNITY NOTE. https://www.reuters.com/a", ok, []string{"refusal"}, ""},
		{"El ayuntamiento aprobó nuevos carriles para bicicletas en la calle Mayor y no prohibió su uso https://www.reuters.com/a", ok, []string{"language"}, "en"},
		{"El ayuntamiento aprobó nuevos carriles para bicicletas en la calle Mayor y no prohibió su uso https://www.reuters.com/a", ok, nil, "es"},
		{"The council approved new cycle lanes on Main Street and banned nothing at all https://www.reuters.com/a", ok, nil, "en"},
		{"Lanes https://www.reuters.com/a", ok, nil, "es"}, // too short to tell
	} {
		p := PreflightNote(tc.text, tc.f, tc.lang)
		var rules []string
		for _, pr := range p.Problems {
			rules = append(rules, pr.Rule)
			if pr.Fix == "" || pr.What == "" {
				t.Errorf("%q: a problem without its words or fix: %+v", tc.text, pr)
			}
		}
		if !slices.Equal(rules, tc.rules) {
			t.Errorf("%q: problems %v, want %v (%+v)", tc.text, rules, tc.rules, p.Problems)
		}
	}
}

// TestLivePreflight: every link is fetched through the safe fetcher, HEAD
// then GET; only an answer of 200 (after redirects) passes.
func TestLivePreflight(t *testing.T) {
	mux := http.NewServeMux()
	page := "<!doctype html><html><head><title>Council approves lanes</title></head><body><p>The council approved new cycle lanes.</p></body></html>"
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	})
	mux.HandleFunc("/gone", http.NotFound)
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusMovedPermanently) })
	mux.HandleFunc("/nohead", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Write([]byte(page))
	})
	busy := 0
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		if busy++; busy <= 2 { // HEAD and GET of the first try
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(page))
	})
	done := make(chan struct{})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	})
	var methods []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods = append(methods, r.Method+" "+r.URL.Path)
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer close(done)
	// X's pattern reads no port, so the pages are named as on the web and
	// the loopback server is the fetcher's proxy.
	proxy, _ := url.Parse(srv.URL)
	client := fetch.New(fetch.Options{AllowPrivate: true, Timeout: 500 * time.Millisecond,
		Proxy: http.ProxyURL(proxy),
		LookupIP: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}}).Client()
	const site = "http://pages.example"
	defer func(w []time.Duration) { liveRetryWaits = w }(liveRetryWaits)
	liveRetryWaits = []time.Duration{time.Millisecond, time.Millisecond}

	for _, tc := range []struct {
		path    string
		ok      bool
		status  int
		methods []string
	}{
		{"/ok", true, 200, []string{"HEAD /ok"}},
		{"/gone", false, 404, []string{"HEAD /gone", "GET /gone"}},
		{"/moved", true, 200, []string{"HEAD /moved", "HEAD /ok"}},
		{"/nohead", true, 200, []string{"HEAD /nohead", "GET /nohead"}},
		// No answer, or a 503, is tried again after a short wait, as X's
		// evaluator retries; a 404 is not.
		{"/slow", false, 0, []string{"HEAD /slow", "GET /slow", "HEAD /slow", "GET /slow", "HEAD /slow", "GET /slow"}},
		{"/busy", true, 200, []string{"HEAD /busy", "GET /busy", "HEAD /busy"}},
	} {
		methods = nil
		p := PreflightNote("The council approved lanes. "+site+tc.path, pipeline.NoteFields{Classification: pipeline.ClassNotMisleading}, "")
		LivePreflight(context.Background(), client, &p)
		if len(p.Live) != 1 || p.Live[0].OK != tc.ok || p.Live[0].Status != tc.status {
			t.Errorf("%s: live %+v, want ok %v status %d", tc.path, p.Live, tc.ok, tc.status)
		}
		if p.OK() != tc.ok {
			t.Errorf("%s: problems %+v", tc.path, p.Problems)
		}
		if !slices.Equal(methods, tc.methods) {
			t.Errorf("%s: requests %v, want %v", tc.path, methods, tc.methods)
		}
	}
	// A trailing full stop is tried with and without, as X does.
	methods = nil
	p := PreflightNote("Lanes, not a ban: "+site+"/ok.", pipeline.NoteFields{Classification: pipeline.ClassNotMisleading}, "")
	LivePreflight(context.Background(), client, &p)
	if !p.OK() || !slices.Equal(methods, []string{"HEAD /ok.", "GET /ok.", "HEAD /ok"}) {
		t.Errorf("trailing stop: %+v, requests %v", p, methods)
	}
}

// TestNoteJSON: the JSON form carries the text, the fields derived from
// the verdict, and the pre-flight.
func TestNoteJSON(t *testing.T) {
	b, err := Render(sample(), Options{Format: "note-json"})
	if err != nil {
		t.Fatal(err)
	}
	var d NoteDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Text != sample().Correction.Text || d.Classification != pipeline.ClassMisleading ||
		!slices.Equal(d.MisleadingTags, []string{pipeline.TagFactualError}) || !strings.Contains(d.Reasons[pipeline.TagFactualError], "Reuters") {
		t.Errorf("note JSON: %s", b)
	}
	if !d.Preflight.OK() || len(d.Preflight.Links) != 1 {
		t.Errorf("pre-flight: %+v", d.Preflight)
	}
	c := sample()
	c.Evidence = nil
	if d := NoteFor(context.Background(), c, nil); d.Classification != "" || d.Preflight.OK() || d.Preflight.Problems[0].Rule != "abstain" {
		t.Errorf("with no evidence: %+v", d)
	}
}

// TestClaimReviewRatingFromNoteChoice: the checker's note choice gives the
// ClaimReview its rating, so the checker answers once; without a choice
// the verdict does; a rating given still wins.
func TestClaimReviewRatingFromNoteChoice(t *testing.T) {
	c := &pipeline.Check{ID: "c", Post: pipeline.Post{Text: "Bikes banned", URL: "https://x.com/a/status/1"},
		Correction: pipeline.Correction{Text: "No ban."}, CheckerVerdict: pipeline.VerdictRefuted}
	rev := Reviewer{Name: "Desk", URL: "https://desk.example/"}
	rating := func(r Rating) string {
		b, err := ClaimReview(c, rev, r)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			ReviewRating struct {
				AlternateName string `json:"alternateName"`
				RatingValue   int    `json:"ratingValue"`
			} `json:"reviewRating"`
		}
		json.Unmarshal(b, &doc)
		return doc.ReviewRating.AlternateName + fmt.Sprint(doc.ReviewRating.RatingValue)
	}
	if got := rating(Rating{}); got != "False1" {
		t.Errorf("no choice: %s, want the verdict's False", got)
	}
	for tags, want := range map[string]string{"missing_important_context": "Missing context3", "outdated_information missing_important_context": "Outdated0",
		"disputed_claim_as_fact": "Misleading2", "factual_error manipulated_media": "False1"} {
		if err := c.SetNoteChoice(pipeline.ClassMisleading, strings.Fields(tags)); err != nil {
			t.Fatal(err)
		}
		if got := rating(Rating{}); got != want {
			t.Errorf("%s: %s, want %s", tags, got, want)
		}
	}
	c.SetNoteChoice(pipeline.ClassNotMisleading, nil)
	if got := rating(Rating{}); got != "True5" {
		t.Errorf("not misleading: %s", got)
	}
	if got := rating(Rating{AlternateName: "Mostly true", Value: 4, Best: 5, Worst: 1}); got != "Mostly true4" {
		t.Errorf("a rating given: %s", got)
	}
}
