package notes

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/notewriter"
	"github.com/musecheck/muse/sources/notewriter/notewritertest"
)

func writer(t *testing.T, x *notewritertest.Server, live bool) *Writer {
	k := notewritertest.Keys
	w, err := New(&setup.Config{XAPIKey: k.APIKey, XAPIKeySecret: k.APISecret, XAccessToken: k.AccessToken, XAccessTokenSecret: k.AccessSecret,
		XAPIURL: x.URL, XLiveNotes: live, DataDir: t.TempDir()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// refuted is a check whose note passes the pre-flight.
func refuted(id, post string) *pipeline.Check {
	const page = "https://www.reuters.com/world/us/springfield-fact-check"
	return &pipeline.Check{ID: id, Post: pipeline.Post{Text: "The mayor banned bicycles", URL: "https://x.com/a/status/" + post},
		Sources:    []pipeline.Source{{URL: page, Title: "Fact check", Publisher: "Reuters", Domain: "reuters.com", Status: pipeline.StatusUsed}},
		Evidence:   []pipeline.Evidence{{SourceURL: page, Quote: "The city council has not banned bicycles.", Kind: pipeline.KindRefutes, Verified: true, Included: true}},
		Correction: pipeline.Correction{Text: "The council has not banned bicycles. " + page, URLs: []string{page}}}
}

// TestLiveNeedsConsentAndAdmission: a live note is refused without
// x.live_notes, and with it until the ledger meets the bar; nothing is
// sent either way.
func TestLiveNeedsConsentAndAdmission(t *testing.T) {
	x := notewritertest.New(t, notewritertest.Post{ID: "1900", Lang: "en"})
	c := refuted("c1", "1900")
	if _, err := writer(t, x, false).Submit(context.Background(), c, true); err == nil || !strings.Contains(err.Error(), "x.live_notes") {
		t.Errorf("live without consent: %v", err)
	}
	if _, err := writer(t, x, true).Submit(context.Background(), c, true); err == nil || !strings.Contains(err.Error(), "wait for admission: 0 of 50") {
		t.Errorf("live before admission: %v", err)
	}
	if len(x.Notes()) != 0 || c.XNote != nil && c.XNote.NoteID != "" {
		t.Fatalf("a refused live note was sent: %+v", x.Notes())
	}
	id, err := writer(t, x, true).Submit(context.Background(), c, false)
	if err != nil || c.XNote.NoteID != id || c.XNote.Live || c.XNote.PostID != "1900" || c.XNote.SubmittedText == "" {
		t.Fatalf("test mode: %v %+v", err, c.XNote)
	}
	if _, err := writer(t, x, true).Submit(context.Background(), c, false); !errors.Is(err, ErrSubmitted) {
		t.Errorf("a second submission: %v", err)
	}
}

// TestApply: X's word on the notes written reaches the case by the note's
// ID, or, for a case that never submitted one, by its post's newest note.
func TestApply(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	written := []notewriter.WrittenNote{
		{ID: "9", PostID: "1900", Text: "newest", Scores: map[string]string{"ClaimOpinion": "low"}},
		{ID: "8", PostID: "1900", Text: "older", Scores: map[string]string{"ClaimOpinion": "high"}},
	}
	mine := refuted("c1", "1900")
	mine.XNote = &pipeline.XNote{PostID: "1900", NoteID: "8"}
	if !Apply(mine, written, now) || mine.XNote.Scores["ClaimOpinion"] != "high" || !mine.XNote.StatusAt.Equal(now) {
		t.Errorf("by note ID: %+v", mine.XNote)
	}
	if Apply(mine, written, now) {
		t.Error("nothing new, yet the case changed")
	}
	other := refuted("c2", "1900")
	if !Apply(other, written, now) || other.XNote.NoteID != "9" || other.XNote.SubmittedText != "newest" {
		t.Errorf("by post: %+v", other.XNote)
	}
	if Apply(refuted("c3", "42"), written, now) {
		t.Error("a case of another post changed")
	}
}

// TestPostFromEligible: an offered post becomes a post to check with its
// photos, alt text, quoted post as context, and its note requests kept.
func TestPostFromEligible(t *testing.T) {
	at := time.Date(2024, 2, 1, 12, 0, 0, 0, time.UTC)
	p, x := Post(notewriter.EligiblePost{ID: "1900", Text: "Bikes banned", Lang: "es", CreatedAt: at,
		Media:    []notewriter.Media{{Type: "photo", URL: "https://pbs.twimg.com/a.jpg", AltText: "A sign"}, {Type: "video", Preview: "https://pbs.twimg.com/v.jpg"}},
		Requests: []notewriter.Request{{Suggestion: "No vote", SourceLink: "https://r.example/"}},
		Sources:  []notewriter.SuggestedSource{{URL: "https://r.example/", Count: 2}},
		Quoted:   &notewriter.EligiblePost{ID: "1800", Text: "Council agenda"}})
	if p.URL != "https://x.com/i/status/1900" || p.Language != "es" || !p.PostedAt.Equal(at) || len(p.Images) != 1 || p.AltTexts[p.Images[0]] != "A sign" ||
		len(p.Context) != 1 || p.Context[0].Kind != pipeline.ContextQuote || p.Context[0].Text != "Council agenda" || p.NeedsReading() {
		t.Errorf("post: %+v", p)
	}
	if x.PostID != "1900" || len(x.Requests) != 1 || x.Requests[0].Suggestion != "No vote" || len(x.Sources) != 1 || x.Sources[0].Count != 2 {
		t.Errorf("xnote: %+v", x)
	}
	if p, _ := Post(notewriter.EligiblePost{ID: "1", Text: "😀😀", Lang: "zxx"}); p.Language != "" {
		t.Errorf("X's no-language code kept: %q", p.Language)
	}
}
