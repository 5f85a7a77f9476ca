package notewriter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/notewriter"
	"github.com/musecheck/muse/sources/notewriter/notewritertest"
)

var keys = notewritertest.Keys

func TestEvaluateAndSubmit(t *testing.T) {
	srv := notewritertest.New(t, notewritertest.Post{ID: "1900", Text: "Bikes banned", Lang: "en"})
	c := notewriter.New(srv.URL, keys, nil)
	score, err := c.Evaluate(context.Background(), "1900", "The council approved lanes. https://www.reuters.com/a")
	if err != nil || score != 0.8 {
		t.Fatalf("evaluate: %v %v", score, err)
	}
	id, err := c.Submit(context.Background(), notewriter.Note{PostID: "1900", Text: "The council approved lanes. https://www.reuters.com/a",
		Classification: "misinformed_or_potentially_misleading", MisleadingTags: []string{"factual_error"}}, false)
	if err != nil || id == "" {
		t.Fatalf("submit: %q %v", id, err)
	}
	got := srv.Requests()
	if got[0].Body["post_id"] != "1900" || got[0].Body["note_text"] == nil {
		t.Errorf("evaluate body: %v", got[0].Body)
	}
	info, _ := got[1].Body["info"].(map[string]any)
	if got[1].Body["test_mode"] != true || got[1].Body["post_id"] != "1900" || info["classification"] != "misinformed_or_potentially_misleading" ||
		fmt.Sprint(info["misleading_tags"]) != "[factual_error]" || info["trustworthy_sources"] != true {
		t.Errorf("submit body: %v", got[1].Body)
	}
	if n := srv.Notes(); len(n) != 1 || n[0].ID != id || !n[0].TestMode {
		t.Errorf("notes taken: %+v", n)
	}

	// A wrong secret does not verify.
	bad := keys
	bad.AccessSecret = "stolen"
	if _, err := notewriter.New(srv.URL, bad, nil).Evaluate(context.Background(), "1900", "x"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong secret: %v", err)
	}
	// X refuses a misleading note without tags, and the error says X's words.
	if _, err := c.Submit(context.Background(), notewriter.Note{PostID: "1900", Text: "t", Classification: "misinformed_or_potentially_misleading"}, false); err == nil ||
		!strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "misleading_tags") {
		t.Errorf("a misleading note without tags: %v", err)
	}
}

func TestNotEnrolled(t *testing.T) {
	srv := notewritertest.New(t, notewritertest.Post{ID: "1900", Lang: "en"})
	srv.SetEnrolled(false)
	_, err := notewriter.New(srv.URL, keys, nil).Submit(context.Background(), notewriter.Note{PostID: "1900", Text: "t", Classification: "not_misleading"}, false)
	if !errors.Is(err, notewriter.ErrNotEnrolled) || !strings.Contains(err.Error(), "not signed up for the AI Note Writer API") ||
		!strings.Contains(err.Error(), "muse cases export ID --format note") {
		t.Errorf("403: %v", err)
	}
	if len(srv.Notes()) != 0 {
		t.Errorf("the refused note was taken: %v", srv.Notes())
	}
}

// TestEligible: the feed is asked as the template writer asks it (test
// mode, fields, expansions, the language by post_selection) and read with
// its media, note requests and suggested sources.
func TestEligible(t *testing.T) {
	at := time.Date(2024, 1, 30, 9, 0, 0, 0, time.UTC)
	srv := notewritertest.New(t,
		notewritertest.Post{ID: "1901", Text: "Bikes banned from Main Street!", Lang: "en", AuthorID: "77", CreatedAt: at,
			Photos:   []string{"https://pbs.twimg.com/media/a.jpg"},
			Requests: []notewriter.Request{{ID: "5", Suggestion: "The ban was never voted", SourceLink: "https://www.reuters.com/x"}},
			Sources:  []notewriter.SuggestedSource{{URL: "https://www.reuters.com/x", Count: 3}}},
		notewritertest.Post{ID: "1902", Text: "Bicis prohibidas", Lang: "es"},
	)
	c := notewriter.New(srv.URL, keys, nil)
	ps, _, err := c.Eligible(context.Background(), notewriter.EligibleOptions{Max: 5})
	if err != nil || len(ps) != 1 {
		t.Fatalf("eligible: %v %+v", err, ps)
	}
	p := ps[0]
	if p.ID != "1901" || p.Lang != "en" || !p.CreatedAt.Equal(at) || len(p.Media) != 1 || p.Media[0].URL != "https://pbs.twimg.com/media/a.jpg" ||
		len(p.Requests) != 1 || p.Requests[0].Suggestion != "The ban was never voted" || len(p.Sources) != 1 || p.Sources[0].Count != 3 {
		t.Errorf("post: %+v", p)
	}
	q := srv.Requests()[0].Query
	if q.Get("test_mode") != "true" || q.Get("max_results") != "5" || !strings.Contains(q.Get("tweet.fields"), "note_request_suggestions") ||
		!strings.Contains(q.Get("expansions"), "attachments.media_keys") || q.Get("post_selection") != "" {
		t.Errorf("query: %v", q)
	}
	ps, _, err = c.Eligible(context.Background(), notewriter.EligibleOptions{Lang: "es"})
	if err != nil || len(ps) != 1 || ps[0].ID != "1902" || srv.Requests()[1].Query.Get("post_selection") != "feed_lang:es" {
		t.Errorf("feed_lang es: %v %+v", err, ps)
	}
}

// TestNotesWrittenAndLedger: notes_written is read page by page with the
// evaluator's buckets, and the ledger says the four ratios and how many
// more notes the bar needs.
func TestNotesWrittenAndLedger(t *testing.T) {
	srv := notewritertest.New(t)
	high := map[string]string{"ClaimOpinion": "High", "UrlValidity": "High", "HarassmentAbuse": "High"}
	low := map[string]string{"ClaimOpinion": "Low", "UrlValidity": "Low", "HarassmentAbuse": "High"}
	var ns []notewritertest.Note
	for i := range 30 {
		s := high
		if i%3 == 0 {
			s = low // 10 low of 30
		}
		ns = append(ns, notewritertest.Note{ID: fmt.Sprint(100 + i), PostID: fmt.Sprint(i), Text: "n", TestMode: true, Scores: s})
	}
	ns = append(ns, notewritertest.Note{ID: "999", PostID: "9", Text: "pending", TestMode: true})
	srv.AddNotes(ns...)
	c := notewriter.New(srv.URL, keys, nil)
	got, err := c.NotesWritten(context.Background(), false, 200)
	if err != nil || len(got) != 31 || got[0].Scores["ClaimOpinion"] != "low" || got[1].Scores["UrlValidity"] != "high" || got[30].Scores != nil {
		t.Fatalf("notes written: %v %d %+v", err, len(got), got[:2])
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests for 31 notes at 100 a page", n)
	}
	l := notewriter.NewLedger(got)
	// 20 high of 31: 64%; 10 low: 32% (over 30%); URL 20/31 = 64%;
	// harassment 30/31 (the pending one is not high).
	if l.Written != 31 || l.Pending != 1 || l.Meets || l.Bars[0].Count != 20 || !l.Bars[0].OK || !strings.Contains(l.Bars[0].String(), "20/31") {
		t.Errorf("ledger: %+v", l)
	}
	if l.Bars[1].Count != 10 || l.Bars[1].OK == true {
		t.Errorf("low bar: %+v", l.Bars[1])
	}
	// With k perfect notes the window is k perfect, then the newest 50-k.
	// The URL bar (≥95%, 48 of 50) rules: the low ones among the kept must
	// be at most 2, which needs k ≥ 50-7 = 43 (notes 0..6 hold 3 lows: 0,3,6 → k=44).
	if l.More != 44 {
		t.Errorf("more = %d, want 44", l.More)
	}
	if !strings.Contains(l.Summary(), "44 more notes") {
		t.Errorf("summary: %s", l.Summary())
	}
	var all []notewriter.WrittenNote
	for range 50 {
		all = append(all, notewriter.WrittenNote{Scores: map[string]string{"ClaimOpinion": "high", "UrlValidity": "high", "HarassmentAbuse": "high"}})
	}
	if l := notewriter.NewLedger(all); !l.Meets || l.More != 0 {
		t.Errorf("50 perfect notes: %+v", l)
	}
}

// TestQueueWaits: the client holds X's 90 requests per 15 minutes itself,
// waits (and says so) for X's reset after a 429 instead of failing, fails
// with the time when the wait would be too long, and stops when cancelled.
func TestQueueWaits(t *testing.T) {
	srv := notewritertest.New(t, notewritertest.Post{ID: "1900", Lang: "en"})
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var waits []notewriter.Wait
	lim := notewriter.NewLimiter(notewriter.Limits{Requests: 2, Window: 15 * time.Minute, Submissions: 1, Day: 24 * time.Hour,
		MaxWait: 20 * time.Minute, Retries: 2}, t.TempDir()+"/x-limits.json")
	lim.Now = func() time.Time { return now }
	lim.Sleep = func(ctx context.Context, d time.Duration) error { now = now.Add(d); return ctx.Err() }
	lim.OnWait = func(w notewriter.Wait) { waits = append(waits, w) }
	c := notewriter.New(srv.URL, keys, nil).WithLimiter(lim)
	ctx := context.Background()
	for range 3 {
		if _, err := c.Evaluate(ctx, "1900", "x"); err != nil {
			t.Fatal(err)
		}
	}
	if len(waits) != 1 || waits[0].For != 15*time.Minute || !strings.Contains(waits[0].String(), "waiting 15m0s until 12:15:00 UTC") ||
		!strings.Contains(waits[0].Why, "2 requests per 15 minutes") {
		t.Errorf("waits: %v", waits)
	}
	// A 429: the queue waits for X's reset and sends it again.
	srv.TooMany(1, now.Add(20*time.Minute)) // the queue first waits 15 minutes for its own window
	waits = nil
	if _, err := c.Evaluate(ctx, "1900", "x"); err != nil {
		t.Fatalf("after a 429: %v", err)
	}
	if len(waits) == 0 || !strings.Contains(waits[len(waits)-1].Why, "429") {
		t.Errorf("waits after a 429: %v", waits)
	}
	// A submission beyond the day's limit is an error with the time, sent nowhere.
	if _, err := c.Submit(ctx, notewriter.Note{PostID: "1900", Text: "t https://a.example/", Classification: "not_misleading"}, false); err != nil {
		t.Fatal(err)
	}
	n := len(srv.Requests())
	_, err := c.Submit(ctx, notewriter.Note{PostID: "1900", Text: "t https://a.example/", Classification: "not_misleading"}, false)
	var le *notewriter.LimitError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "1 notes a day") || !strings.Contains(err.Error(), "nothing was sent") || len(srv.Requests()) != n {
		t.Errorf("over the day's limit: %v", err)
	}
	// The limits are remembered in the file: another limiter on it waits too.
	lim2 := notewriter.NewLimiter(notewriter.Limits{Requests: 2, Window: 15 * time.Minute, Submissions: 1, Day: 24 * time.Hour, MaxWait: time.Second}, t.TempDir()+"/none.json")
	lim2.Now = lim.Now
	if err := lim2.Acquire(ctx, true); err != nil {
		t.Errorf("a fresh file: %v", err)
	}
	// x-rate-limit-remaining 0 closes the slots until the reset; Ctrl-C stops the wait.
	srv.Remaining(0, now.Add(19*time.Minute))
	if _, err := c.Evaluate(ctx, "1900", "x"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	lim.Sleep = func(ctx context.Context, d time.Duration) error { return ctx.Err() }
	if _, err := c.Evaluate(cctx, "1900", "x"); err == nil || !strings.Contains(err.Error(), "stopped while waiting") {
		t.Errorf("cancelled: %v", err)
	}
}
