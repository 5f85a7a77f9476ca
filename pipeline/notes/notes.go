// Package notes takes a check's Community Note to X's AI Note Writer API
// (sources/notewriter) and brings X's answers back into the case: an
// eligible post becomes a post to check with its note requests kept, the
// note is pre-flighted before X sees it, evaluated, submitted in test mode
// (live only when the configuration allows it and the admission ledger
// meets X's bar), and its status and evaluator scores are read back by
// the post's ID.
package notes

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/notewriter"
	"github.com/musecheck/muse/sources/posts"
)

// ErrNoKeys: the configuration lacks some of the writer's keys.
var ErrNoKeys = errors.New("muse notes needs the writer's OAuth 1.0a keys")

// Writer is the AI Note Writer API as muse uses it.
type Writer struct {
	Client *notewriter.Client
	// Live: the configuration lets notes be submitted live (x.live_notes).
	Live bool
	// Links fetches a note's links for the live pre-flight; nil: the
	// pre-flight is offline only.
	Links *http.Client
	// User is the checker named on a submission.
	User string
	Now  func() time.Time
}

// New is the writer of the configuration's keys, its requests queued
// under X's limits in the data directory's x-limits.json (so every muse
// on the machine counts together), onWait told of each wait.
func New(cfg *setup.Config, transport http.RoundTripper, onWait func(notewriter.Wait)) (*Writer, error) {
	keys := notewriter.Keys{APIKey: cfg.XAPIKey, APISecret: cfg.XAPIKeySecret, AccessToken: cfg.XAccessToken, AccessSecret: cfg.XAccessTokenSecret}
	if m := keys.Missing(); len(m) > 0 {
		var conf []string
		for _, k := range m {
			conf = append(conf, "x."+strings.ToLower(strings.TrimPrefix(k, "X_")))
		}
		return nil, fmt.Errorf("%w: set %s (or %s in the config file's [x] table)", ErrNoKeys, strings.Join(m, ", "), strings.Join(conf, ", "))
	}
	lim := notewriter.NewLimiter(notewriter.DefaultLimits, "")
	if cfg.DataDir != "" {
		lim = notewriter.NewLimiter(notewriter.DefaultLimits, filepath.Join(cfg.DataDir, "x-limits.json"))
	}
	lim.OnWait = onWait
	return &Writer{Client: notewriter.New(strings.TrimSpace(cfg.XAPIURL), keys, transport).WithLimiter(lim),
		Live: cfg.XLiveNotes, User: cfg.User, Now: time.Now}, nil
}

// Post is an eligible post as a post to check, and what X said with it
// for the case to keep.
func Post(p notewriter.EligiblePost) (pipeline.Post, *pipeline.XNote) {
	post := pipeline.Post{Text: p.Text, URL: p.URL(), Platform: posts.X, PostedAt: p.CreatedAt, Language: p.Lang}
	if p.Lang == "und" || p.Lang == "zxx" || p.Lang == "qme" || p.Lang == "qht" {
		post.Language = "" // X's codes for no language: muse detects it
	}
	for _, m := range p.Media {
		if m.Type == "photo" && m.URL != "" {
			post.Images = append(post.Images, m.URL)
			if m.AltText != "" {
				if post.AltTexts == nil {
					post.AltTexts = map[string]string{}
				}
				post.AltTexts[m.URL] = m.AltText
			}
		}
	}
	for _, ref := range []struct {
		kind string
		p    *notewriter.EligiblePost
	}{{pipeline.ContextQuote, p.Quoted}, {pipeline.ContextParent, p.RepliedTo}} {
		if ref.p != nil {
			post.Context = append(post.Context, pipeline.ContextItem{Kind: ref.kind, URL: ref.p.URL(), Text: ref.p.Text, PostedAt: ref.p.CreatedAt})
		}
	}
	x := &pipeline.XNote{PostID: p.ID}
	for _, r := range p.Requests {
		x.Requests = append(x.Requests, pipeline.XNoteRequest{Suggestion: r.Suggestion, SourceLink: r.SourceLink})
	}
	for _, s := range p.Sources {
		x.Sources = append(x.Sources, pipeline.XSuggestedSource{URL: s.URL, Count: s.Count})
	}
	return post, x
}

// PostID is the X post the case's note is for: the one X offered, else
// the one its URL names.
func PostID(c *pipeline.Check) string {
	if c.XNote != nil && c.XNote.PostID != "" {
		return c.XNote.PostID
	}
	return posts.TweetID(c.Post.URL)
}

// PreflightError is a note the pre-flight refuses: nothing goes to X.
type PreflightError struct {
	Problems []export.Problem
}

func (e *PreflightError) Error() string {
	var ps []string
	for _, p := range e.Problems {
		ps = append(ps, p.What+" — "+p.Fix)
	}
	return "the note fails the pre-flight; nothing was sent to X: " + strings.Join(ps, "; ")
}

// Note is the case's note and its pre-flight (live when w.Links is set),
// or a *PreflightError when the note would not pass X's rules.
func (w *Writer) Note(ctx context.Context, c *pipeline.Check) (export.NoteDoc, string, error) {
	post := PostID(c)
	if post == "" {
		return export.NoteDoc{}, "", fmt.Errorf("case %s is not an X post with a known ID", c.ID)
	}
	d := export.NoteFor(ctx, c, w.Links)
	if !d.Preflight.OK() {
		return d, post, &PreflightError{Problems: d.Preflight.Problems}
	}
	return d, post, nil
}

// Evaluate pre-flights the case's note and asks X's ClaimOpinion score,
// kept on the case.
func (w *Writer) Evaluate(ctx context.Context, c *pipeline.Check) (float64, error) {
	d, post, err := w.Note(ctx, c)
	if err != nil {
		return 0, err
	}
	score, err := w.Client.Evaluate(ctx, post, d.Text)
	if err != nil {
		return 0, err
	}
	x := xnote(c, post)
	x.ClaimOpinion, x.EvaluatedText, x.EvaluatedAt = &score, d.Text, w.Now().UTC()
	return score, nil
}

func xnote(c *pipeline.Check, post string) *pipeline.XNote {
	if c.XNote == nil {
		c.XNote = &pipeline.XNote{}
	}
	c.XNote.PostID = post
	return c.XNote
}

// ErrSubmitted: the case's note went to X already.
var ErrSubmitted = errors.New("the case's note was submitted already")

// LiveRefusal says why a live submission is not allowed: the
// configuration does not allow it, or the ledger does not meet the bar.
func (w *Writer) LiveRefusal(l notewriter.Ledger) error {
	if !w.Live {
		return errors.New("live notes are off: set x.live_notes = true in the config (MUSE_X_LIVE_NOTES=1) once X has admitted the writer")
	}
	if !l.Meets {
		return fmt.Errorf("live notes wait for admission: %s", l.Summary())
	}
	return nil
}

// Submit pre-flights the case's note and submits it, in test mode unless
// live (refused unless LiveRefusal says nothing against it), keeping the
// note's ID on the case. The caller has the person's approval: nothing
// here asks.
func (w *Writer) Submit(ctx context.Context, c *pipeline.Check, live bool) (string, error) {
	if c.XNote != nil && c.XNote.NoteID != "" {
		return "", fmt.Errorf("%w as note %s", ErrSubmitted, c.XNote.NoteID)
	}
	d, post, err := w.Note(ctx, c)
	if err != nil {
		return "", err
	}
	if live {
		l, err := w.Ledger(ctx)
		if err != nil {
			return "", err
		}
		if err := w.LiveRefusal(l); err != nil {
			return "", err
		}
	}
	id, err := w.Client.Submit(ctx, notewriter.Note{PostID: post, Text: d.Text, Classification: d.Classification, MisleadingTags: d.MisleadingTags}, live)
	if err != nil {
		return "", err
	}
	x := xnote(c, post)
	x.NoteID, x.Live, x.SubmittedText, x.SubmittedAt, x.SubmittedBy = id, live, d.Text, w.Now().UTC(), w.User
	x.Status, x.Scores, x.StatusAt = "", nil, time.Time{}
	return id, nil
}

// Ledger reads the writer's last test-mode notes and their scores.
func (w *Writer) Ledger(ctx context.Context) (notewriter.Ledger, error) {
	ns, err := w.Client.NotesWritten(ctx, false, notewriter.AdmissionWindow)
	if err != nil {
		return notewriter.Ledger{}, err
	}
	return notewriter.NewLedger(ns), nil
}

// Apply brings X's word on the notes written into the case: the note
// whose ID the case holds, else the newest note on the case's post (a note
// submitted outside muse). It reports whether the case changed.
func Apply(c *pipeline.Check, written []notewriter.WrittenNote, now time.Time) bool {
	post := PostID(c)
	if post == "" {
		return false
	}
	var got *notewriter.WrittenNote
	for i, n := range written {
		if c.XNote != nil && c.XNote.NoteID != "" {
			if n.ID == c.XNote.NoteID {
				got = &written[i]
				break
			}
		} else if n.PostID == post {
			got = &written[i] // newest first: the first is the latest
			break
		}
	}
	if got == nil {
		return false
	}
	x := xnote(c, post)
	same := x.NoteID == got.ID && x.Status == got.Status && fmt.Sprint(x.Scores) == fmt.Sprint(got.Scores)
	if same {
		return false
	}
	x.NoteID, x.Status, x.Scores, x.StatusAt = got.ID, got.Status, got.Scores, now.UTC()
	if x.SubmittedText == "" {
		x.SubmittedText = got.Text
	}
	return true
}

// Scores says a note's evaluator buckets in a few words: "ClaimOpinion
// high · UrlValidity high · HarassmentAbuse high", or "not scored yet".
func Scores(s map[string]string) string {
	var out []string
	for _, t := range []string{notewriter.ScoreClaimOpinion, notewriter.ScoreURLValidity, notewriter.ScoreHarassmentAbuse} {
		if b := s[t]; b != "" {
			out = append(out, t+" "+b)
		}
	}
	if len(out) == 0 {
		return "not scored yet"
	}
	return strings.Join(out, " · ")
}
