package pipeline

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/images/imagetest"
)

// The person's edits (edit.go): what each records, what it makes stale,
// and that the stages honour it when they run again.

// checked is a check of the fake world's post run to the end.
func checked(t *testing.T, opts Options) (*Engine, *Check, *fakeWorld) {
	t.Helper()
	w := newWorld()
	e := newTestEngine(t, w, &fakeModel{evidence: quoting}, opts)
	// The paper's protocol (AsOfPost): the world's late and undated pages are kept out by the cutoff.
	posted := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	c := e.NewCheck(Post{Text: post, PostedAt: posted}, posted)
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	return e, c, w
}

func indexOf(t *testing.T, c *Check, u string) int {
	t.Helper()
	i := slices.IndexFunc(c.Sources, func(s Source) bool { return s.URL == u })
	if i < 0 {
		t.Fatalf("no source %s", u)
	}
	return i
}

// states is every stage's state, in order, as "queries=done …".
func states(c *Check) string {
	var out []string
	for _, s := range Stages {
		out = append(out, string(s)+"="+c.Stage(s).State)
	}
	return strings.Join(out, " ")
}

// staleFrom is the states of a finished check (no images) once an edit
// made the stages from `from` on stale; "" is none.
func staleFrom(from Stage) string {
	var out []string
	stale := false
	for _, s := range Stages {
		stale = stale || s == from
		switch {
		case s == StageImages:
			out = append(out, "images="+StateSkipped)
		case stale:
			out = append(out, string(s)+"="+StateStale)
		default:
			out = append(out, string(s)+"="+StateDone)
		}
	}
	return strings.Join(out, " ")
}

func rerun(t *testing.T, e *Engine, c *Check, from Stage) {
	t.Helper()
	if err := e.Run(context.Background(), c, from, nil); err != nil {
		t.Fatal(err)
	}
}

func TestStageDefaultsToWaiting(t *testing.T) {
	c := &Check{}
	if info := c.Stage(StageSearch); info.State != StateWaiting || info.Stage != StageSearch {
		t.Errorf("a stage never run: %+v", info)
	}
	c.setStage(StageInfo{Stage: StageSearch, State: StateDone, Count: 3})
	c.setStage(StageInfo{Stage: StageSearch, State: StateFailed})
	if len(c.Stages) != 1 || c.Stage(StageSearch).State != StateFailed {
		t.Errorf("stages %+v", c.Stages)
	}
}

// A page may be quoted when read and judged fit, and not dropped; every
// other page is kept out, whatever the app shows of it.
func TestEligible(t *testing.T) {
	for st, want := range map[Status]bool{
		StatusPending: true, StatusBoosted: true, StatusUsed: true, StatusNotNeeded: true, StatusNotJudged: true,
		StatusDropped: false, StatusExcludedRating: false, StatusExcludedCutoff: false, StatusUndated: false,
		StatusIrrelevant: false, StatusFetchFailed: false, StatusDuplicate: false, StatusTooShort: false, "": false,
	} {
		if got := (Source{Status: st}).Eligible(); got != want {
			t.Errorf("status %q: eligible %v", st, got)
		}
		if (Source{Status: st, Dropped: true}).Eligible() {
			t.Errorf("status %q, dropped: eligible", st)
		}
	}
}

// A drop makes the evidence and the correction stale and counts from the
// evidence stage on; dropping a page that could not be quoted changes
// nothing downstream.
func TestDropSource(t *testing.T) {
	e, c, _ := checked(t, Options{})
	reuters := "https://www.reuters.com/a"
	from, err := c.DropSource(indexOf(t, c, reuters))
	if err != nil || from != StageEvidence {
		t.Fatalf("drop: %q, %v", from, err)
	}
	if got := states(c); got != staleFrom(StageEvidence) {
		t.Errorf("after a drop: %s", got)
	}
	rerun(t, e, c, from)
	if statusOf(c, reuters) != StatusDropped || slices.ContainsFunc(c.Evidence, func(ev Evidence) bool { return ev.SourceURL == reuters }) {
		t.Errorf("the dropped page was used again: %s", statusOf(c, reuters))
	}
	rerun(t, e, c, StageSearch)
	if s := c.SourceByURL(reuters); !s.Dropped || s.Status != StatusDropped {
		t.Errorf("the drop did not survive a new search: %+v", s)
	}
	if from, err := c.DropSource(indexOf(t, c, "https://undated.example/f")); err != nil || from != "" || states(c) != staleFrom("") {
		t.Errorf("dropping a page kept out anyway: %q, %v, %s", from, err, states(c))
	}
	if _, err := c.DropSource(len(c.Sources)); !errors.Is(err, ErrNotInCheck) {
		t.Errorf("drop of no source: %v", err)
	}
}

// A boost counts from the evidence stage for a page that may be quoted,
// from the sources stage for one kept out for its rating or by the
// relevance gate, and never for a page kept out for what it is.
func TestBoostSource(t *testing.T) {
	e, c, w := checked(t, Options{})
	for u, why := range map[string]string{
		"https://undated.example/f": "no publication date",
		"https://late.example/e":    "after the cutoff",
		"https://short.example/g":   "words of main text",
		"https://broken.example/h":  "timeout",
	} {
		before := states(c)
		from, err := c.BoostSource(indexOf(t, c, u))
		if !errors.Is(err, ErrKeptOut) || from != "" || !strings.Contains(err.Error(), "a boost cannot bring back ") ||
			!strings.Contains(err.Error(), why) {
			t.Errorf("boost of %s: %q, %v", u, from, err)
		}
		if c.SourceByURL(u).Boosted || states(c) != before {
			t.Errorf("a refused boost changed the check: %s", states(c))
		}
	}
	// Already quotable: it goes first when the evidence is found again.
	bbc := "https://www.bbc.co.uk/c"
	if from, err := c.BoostSource(indexOf(t, c, bbc)); err != nil || from != StageEvidence || states(c) != staleFrom(StageEvidence) {
		t.Fatalf("boost of BBC: %q, %v, %s", from, err, states(c))
	}
	rerun(t, e, c, StageEvidence)
	if c.Sources[0].URL != bbc || statusOf(c, bbc) != StatusUsed {
		t.Errorf("the boosted page is not read first: %s %s", c.Sources[0].URL, statusOf(c, bbc))
	}
	// Kept out for its publisher: only reading the pages again lifts it.
	low := "https://lowsite.example/d"
	from, err := c.BoostSource(indexOf(t, c, low))
	if err != nil || from != StageSources || states(c) != staleFrom(StageSources) {
		t.Fatalf("boost of a low-rated page: %q, %v, %s", from, err, states(c))
	}
	rerun(t, e, c, StageEvidence)
	if statusOf(c, low) != StatusExcludedRating {
		t.Errorf("the evidence stage let in a page kept out for its rating: %s", statusOf(c, low))
	}
	rerun(t, e, c, from)
	if s := c.SourceByURL(low); !s.Eligible() || !slices.Contains(w.fetched, low) {
		t.Errorf("the boost did not bring the low-rated page back on reading again: %s %q", s.Status, s.Reason)
	}
}

// Restoring undoes a drop or a boost, from the stage that judges the page
// without it.
func TestRestoreSource(t *testing.T) {
	e, c, _ := checked(t, Options{})
	reuters := "https://www.reuters.com/a"
	if from, err := c.RestoreSource(indexOf(t, c, reuters)); err != nil || from != "" || states(c) != staleFrom("") {
		t.Errorf("restore of a page neither dropped nor boosted: %q, %v, %s", from, err, states(c))
	}
	// Dropped and restored before any rerun: the evidence stage suffices.
	i := indexOf(t, c, reuters)
	c.DropSource(i)
	if from, err := c.RestoreSource(i); err != nil || from != StageEvidence || c.Sources[i].Dropped {
		t.Errorf("restore of a fresh drop: %q, %v", from, err)
	}
	// Dropped and kept out as such by a rerun: only reading it again tells
	// what it is without the drop.
	c.DropSource(indexOf(t, c, reuters))
	rerun(t, e, c, StageSearch)
	from, err := c.RestoreSource(indexOf(t, c, reuters))
	if err != nil || from != StageSources || states(c) != staleFrom(StageSources) {
		t.Fatalf("restore of a page the stages dropped: %q, %v, %s", from, err, states(c))
	}
	rerun(t, e, c, StageEvidence)
	if statusOf(c, reuters) != StatusDropped {
		t.Errorf("the evidence stage alone brought back a page the stages had dropped: %s", statusOf(c, reuters))
	}
	rerun(t, e, c, from)
	if statusOf(c, reuters) != StatusUsed {
		t.Errorf("the restored page was not used again: %s %q", statusOf(c, reuters), c.SourceByURL(reuters).Reason)
	}
	// A boost undone: the page is judged again without it.
	bbc := indexOf(t, c, "https://www.bbc.co.uk/c")
	c.BoostSource(bbc)
	if from, err := c.RestoreSource(bbc); err != nil || from != StageSources || c.Sources[bbc].Boosted {
		t.Errorf("restore of a boost: %q, %v", from, err)
	}
}

// An unticked quote stays out of the correction and unticked when the
// evidence is found again; a quote not on its page cannot be ticked.
func TestIncludeQuote(t *testing.T) {
	e, c, _ := checked(t, Options{})
	i := slices.IndexFunc(c.Evidence, func(ev Evidence) bool { return ev.SourceURL == "https://apnews.com/b" })
	if err := c.IncludeQuote(i, false); err != nil || c.Evidence[i].Included || states(c) != staleFrom(StageCorrection) {
		t.Fatalf("untick: %v, %s", err, states(c))
	}
	rerun(t, e, c, StageEvidence)
	for _, ev := range c.Evidence {
		if ev.SourceURL == "https://apnews.com/b" && ev.Included {
			t.Error("the unticked quote was ticked again by the evidence stage")
		}
	}
	if strings.Contains(c.Correction.Text, "apnews.com") {
		t.Errorf("the correction rests on an unticked quote: %q", c.Correction.Text)
	}
	c.Evidence = append(c.Evidence, Evidence{SourceURL: "https://apnews.com/b", Quote: "made up", Reason: "not found on the page"})
	if err := c.IncludeQuote(len(c.Evidence)-1, true); err == nil || !strings.Contains(err.Error(), "not found on the page") {
		t.Errorf("ticking a quote not on its page: %v", err)
	}
	if err := c.IncludeQuote(-1, true); !errors.Is(err, ErrNotInCheck) {
		t.Errorf("no such quote: %v", err)
	}
	// Every quote unticked: the correction says so, not that no credible
	// source was found, and no model is asked to write from nothing.
	for i := range c.Evidence {
		c.Evidence[i].Included = false
	}
	rerun(t, e, c, StageCorrection)
	if !strings.HasPrefix(c.Correction.Text, "You unticked every quote found (") || strings.Contains(c.Correction.Text, NoSourceText) ||
		!c.Correction.Unsourced() || len(c.Correction.URLs) != 0 {
		t.Errorf("with every quote unticked the correction is %q", c.Correction.Text)
	}
}

// The person's queries: each edit makes the search and what follows it
// stale, and their queries survive the model writing its own again.
func TestQueryEdits(t *testing.T) {
	e, c, _ := checked(t, Options{})
	if err := c.SetQueryEnabled(0, false); err != nil || c.Queries[0].Enabled || states(c) != staleFrom(StageSearch) {
		t.Fatalf("untick a query: %v, %s", err, states(c))
	}
	if err := c.EditQuery(1, "  Springfield bicycle lane  "); err != nil {
		t.Fatal(err)
	}
	if q := c.Queries[1]; q.Text != "Springfield bicycle lane" || q.Origin != OriginUser || !q.Enabled {
		t.Errorf("edited query %+v", q)
	}
	if err := c.AddQuery("Springfield mayor order"); err != nil || c.Queries[len(c.Queries)-1].Origin != OriginUser {
		t.Errorf("add: %v %+v", err, c.Queries)
	}
	for _, bad := range []string{"  ", "springfield BICYCLE lane"} {
		if err := c.AddQuery(bad); err == nil {
			t.Errorf("AddQuery(%q) accepted", bad)
		}
	}
	if err := c.DeleteQuery(2); err != nil || len(c.Queries) != 3 || hasQueryText(c, "q3") {
		t.Errorf("delete: %v %+v", err, c.Queries)
	}
	if err := c.DeleteQuery(9); !errors.Is(err, ErrNotInCheck) {
		t.Errorf("delete of no query: %v", err)
	}
	rerun(t, e, c, StageQueries)
	if !hasQueryText(c, "Springfield bicycle lane") || !hasQueryText(c, "Springfield mayor order") {
		t.Errorf("the person's queries were lost when the model wrote its own: %+v", c.Queries)
	}
}

func hasQueryText(c *Check, text string) bool {
	return slices.ContainsFunc(c.Queries, func(q Query) bool { return q.Text == text })
}

// The person's description of an image stands when the images are
// described again, and the queries are written from it.
func TestDescribeImage(t *testing.T) {
	w := newWorld()
	m := &fakeModel{evidence: quoting}
	var seen []string
	m.queries = func(in QueriesInput) ([]string, bool, error) {
		for _, im := range in.Images {
			seen = append(seen, im.Description)
		}
		return []string{"Springfield bicycles Main Street"}, true, nil
	}
	src := "https://cdn.example/order.png"
	e := testImageEngine(t, w, m, Options{}, map[string][]byte{src: imagetest.PNG(t, imagetest.Scene(0, 120, 90))}, nil)
	c := e.NewCheck(Post{Text: post, Images: []string{src}, AltTexts: map[string]string{src: "Council order"}}, day("2024-02-01"))
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	const mine = "A photo of the council's published agenda, which lists no vote on bicycles"
	if err := c.DescribeImage(src, "  "+mine+" "); err != nil {
		t.Fatal(err)
	}
	im := c.Images[0]
	if im.Description != mine || !im.Edited || im.Origin != ImageOriginUser || c.Stage(StageImages).State != StateDone ||
		c.Stage(StageQueries).State != StateStale || c.Stage(StageCorrection).State != StateStale {
		t.Errorf("described: %+v, %s", im, states(c))
	}
	rerun(t, e, c, StageImages)
	if c.Images[0].Description != mine || seen[len(seen)-1] != mine {
		t.Errorf("the person's description did not stand: %q, queries written from %q", c.Images[0].Description, seen[len(seen)-1])
	}
	if err := c.DescribeImage(src, ""); err == nil {
		t.Error("an empty description was accepted")
	}
	if err := c.DescribeImage("https://cdn.example/other.png", mine); !errors.Is(err, ErrNotInCheck) {
		t.Errorf("an image not in the post: %v", err)
	}
}

// The language counts from the queries, or from the images while they are
// not described.
func TestSetLanguage(t *testing.T) {
	_, c, _ := checked(t, Options{})
	if from := c.SetLanguage("es"); from != StageQueries || c.Post.Language != "es" || states(c) != staleFrom(StageQueries) {
		t.Errorf("language of a finished check: %q, %s", from, states(c))
	}
	c = &Check{Post: Post{Text: post, Images: []string{"a.png"}}}
	c.setStage(StageInfo{Stage: StageImages, State: StateRunning})
	if from := c.SetLanguage(""); from != StageImages {
		t.Errorf("language while the images are described: %q", from)
	}
}

// The person's correction is marked theirs and cites its links; a model's
// version put back is the model's again.
func TestSetCorrection(t *testing.T) {
	_, c, _ := checked(t, Options{})
	before, model, cited := states(c), c.Correction.Text, c.Correction.URLs
	c.SetCorrection("This post is false: see [the council](https://www.springfield.gov/agenda) and https://www.reuters.com/a.", true)
	if !c.Correction.Edited || !slices.Equal(c.Correction.URLs, []string{"https://www.springfield.gov/agenda", "https://www.reuters.com/a"}) {
		t.Errorf("edited correction %+v", c.Correction)
	}
	if states(c) != before {
		t.Errorf("an edit of the correction changed the stages: %s", states(c))
	}
	c.SetCorrection(model, false)
	if c.Correction.Edited || c.Correction.Text != model || !slices.Equal(c.Correction.URLs, cited) {
		t.Errorf("the model's version put back: %+v", c.Correction)
	}
}

// Stale marks the stages that hold output; a stage never run stays waiting.
func TestMarkStale(t *testing.T) {
	c := &Check{}
	c.setStage(StageInfo{Stage: StageImages, State: StateSkipped})
	c.setStage(StageInfo{Stage: StageQueries, State: StateDone})
	c.setStage(StageInfo{Stage: StageSearch, State: StateFailed, Error: "boom"})
	c.setStage(StageInfo{Stage: StageSources, State: StateFailed, Error: StoppedError})
	c.markStale(StageQueries)
	if got := states(c); got != "images=skipped queries=stale search=stale sources=stale evidence=waiting correction=waiting" {
		t.Errorf("stale: %s", got)
	}
}

// A stopped run: the stage it was in, and a stage that failed only because
// of the cancel, say stopped; a stage that failed on its own keeps its
// error; a rewrite gives way to the correction before it.
func TestMarkStopped(t *testing.T) {
	before := Correction{Text: "This post is false (https://www.reuters.com/a)."}
	c := &Check{Correction: Correction{Text: "This post is mis"}}
	c.setStage(StageInfo{Stage: StageSearch, State: StateFailed, Error: "every search failed"})
	c.setStage(StageInfo{Stage: StageEvidence, State: StateFailed, Error: "evidence: context canceled"})
	c.setStage(StageInfo{Stage: StageCorrection, State: StateRunning})
	partial := c.MarkStopped(&before)
	if partial != "This post is mis" || c.Correction.Text != before.Text {
		t.Errorf("rewrite stopped: partial %q, correction %q", partial, c.Correction.Text)
	}
	if !c.Stage(StageEvidence).Stopped() || !c.Stage(StageCorrection).Stopped() || c.Stage(StageSearch).Error != "every search failed" {
		t.Errorf("stages %+v", c.Stages)
	}
	// Stopped before writing again: the correction shown is the last one,
	// out of date with what the run changed.
	c = &Check{Correction: before}
	c.setStage(StageInfo{Stage: StageSources, State: StateRunning})
	if partial := c.MarkStopped(&before); partial != "" || c.Stage(StageCorrection).State != StateStale || !c.Stage(StageSources).Stopped() {
		t.Errorf("stopped in the sources: %q, %+v", partial, c.Stages)
	}
}

// A run the engine itself cancelled records the cancel; MarkStopped reads
// it as a stop, and what the stages found is kept.
func TestMarkStoppedAfterACancelledRun(t *testing.T) {
	w := newWorld()
	ctx, cancel := context.WithCancel(context.Background())
	m := &fakeModel{evidence: func(ctx context.Context, in EvidenceInput) ([]string, []string, error) {
		cancel()
		<-ctx.Done()
		return nil, nil, ctx.Err()
	}}
	e := newTestEngine(t, w, m, Options{})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if err := e.Run(ctx, c, StageImages, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v", err)
	}
	c.MarkStopped(nil)
	if !c.Stage(StageEvidence).Stopped() || c.Stage(StageSources).State != StateDone || len(c.Sources) == 0 {
		t.Errorf("after the stop: %s, %d sources", states(c), len(c.Sources))
	}
}

// A quote the model filed under the wrong page of a call is offered for
// the page that holds it, and moved there verified and ticked; a page
// that does not hold it is refused.
func TestMoveQuote(t *testing.T) {
	c := &Check{
		Sources: []Source{
			{URL: "https://www.reuters.com/a", Status: StatusUsed, Paragraphs: []string{"The council has not banned bicycles."}},
			{URL: "https://apnews.com/b", Status: StatusNotNeeded, Reason: "read: the model quoted no paragraph of it",
				Paragraphs: []string{"No order banning bicycles on Main Street was signed, the mayor's office said."}},
			{URL: "https://www.bbc.co.uk/c", Status: StatusNotNeeded, Paragraphs: []string{"The lane will be widened."}},
		},
		Evidence: []Evidence{{SourceURL: "https://www.reuters.com/a", Quote: "No order banning bicycles on Main Street was signed",
			Kind: KindRefutes, Reason: "not found on the page"}},
	}
	c.Stages = []StageInfo{{Stage: StageCorrection, State: StateDone}}
	on := c.QuoteFoundOn(0)
	if len(on) != 1 || on[0] != "https://apnews.com/b" {
		t.Fatalf("found on %v, want AP's page", on)
	}
	if err := c.MoveQuote(0, "https://www.bbc.co.uk/c"); err == nil {
		t.Error("moved to a page that does not hold it")
	}
	if err := c.MoveQuote(0, on[0]); err != nil {
		t.Fatal(err)
	}
	if e := c.Evidence[0]; e.SourceURL != "https://apnews.com/b" || !e.Verified || !e.Included || e.Reason != "" {
		t.Errorf("moved quote %+v", e)
	}
	if c.Stage(StageCorrection).State != StateStale {
		t.Errorf("the correction is %s, want stale", c.Stage(StageCorrection).State)
	}
	if on := c.QuoteFoundOn(0); on != nil {
		t.Errorf("a verified quote is offered elsewhere: %v", on)
	}
}
