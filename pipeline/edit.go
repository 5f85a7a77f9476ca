package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/links"
)

// The person's changes to a Check between runs, and what each one makes
// out of date. The app calls these methods and keeps only how it shows
// them; the stages read what they record (Source.Dropped and Boosted,
// Evidence.Included, the person's queries and image descriptions, the
// post's language), so an edit counts once the stages from the one it
// names run again. Until then those stages are stale (StateStale). None of
// them may be called while Run owns the Check.

// ErrNotInCheck is wrapped by an edit of an item the Check does not hold.
var ErrNotInCheck = errors.New("not in the check")

// ErrKeptOut is wrapped by BoostSource's error for a page kept out for
// what it is, which no boost brings back.
var ErrKeptOut = errors.New("kept out for what it is")

// Stage is stage s's state as the Check records it; a stage the Check has
// never run is waiting.
func (c *Check) Stage(s Stage) StageInfo {
	for _, info := range c.Stages {
		if info.Stage == s && info.State != "" {
			return info
		}
	}
	return StageInfo{Stage: s, State: StateWaiting}
}

// setStage records a stage's state.
func (c *Check) setStage(info StageInfo) {
	for i := range c.Stages {
		if c.Stages[i].Stage == info.Stage {
			c.Stages[i] = info
			return
		}
	}
	c.Stages = append(c.Stages, info)
}

// markStale marks the stages from `from` on that hold output (done, or
// failed or stopped with what they had found) as out of date: an edit
// changed what they read, and they say so until they run again.
func (c *Check) markStale(from Stage) {
	start := slices.Index(Stages, from)
	if start < 0 {
		return
	}
	for _, s := range Stages[start:] {
		if info := c.Stage(s); info.State == StateDone || info.State == StatePartial || info.State == StateFailed {
			info.State = StateStale
			c.setStage(info)
		}
	}
}

// StoppedError is the Error of a stage the person stopped (StateFailed):
// the run was cancelled on purpose, or the process running it ended, and
// what the stage had found is kept.
const StoppedError = "stopped"

// Stopped reports whether the stage was stopped rather than failed.
func (s StageInfo) Stopped() bool { return s.State == StateFailed && s.Error == StoppedError }

// MarkStopped records that a run of c ended because it was stopped (by the
// person, or by the end of the process that ran it): each stage that was
// running, or that failed only because the run was cancelled, is stopped
// rather than failed. A correction the run was writing again gives way to
// before, the one c had when the run started (nil: there was none), and
// the half-written text is returned, to be kept as a version ("" when
// nothing was set aside). A correction the run had not yet written again
// is stale: it no longer follows from what the run changed.
func (c *Check) MarkStopped(before *Correction) string {
	partial := ""
	for _, s := range Stages {
		info := c.Stage(s)
		switch {
		case info.State == StateRunning:
		case info.State == StateFailed && strings.Contains(info.Error, context.Canceled.Error()):
		default:
			continue // it did not run, or it failed on its own before the stop
		}
		info.State, info.Error = StateFailed, StoppedError
		c.setStage(info)
		if s == StageCorrection && before != nil {
			partial = strings.TrimSpace(c.Correction.Text)
			c.Correction = *before
		}
	}
	if c.Stage(StageCorrection).State == StateWaiting && strings.TrimSpace(c.Correction.Text) != "" {
		c.markStaleStage(StageCorrection)
	}
	return partial
}

// markStaleStage marks one stage stale whatever its state.
func (c *Check) markStaleStage(s Stage) {
	info := c.Stage(s)
	info.State = StateStale
	c.setStage(info)
}

// eligibleStatus: a page read and judged fit to quote has one of these
// statuses (Eligible adds that the person has not dropped it).
func eligibleStatus(st Status) bool {
	switch st {
	case StatusPending, StatusBoosted, StatusUsed, StatusNotNeeded, StatusNotJudged, StatusPartial:
		return true
	}
	return false
}

// rereadLifts reports whether reading the page again (the sources stage)
// may let it in: it was kept out only for its publisher's rating or by the
// relevance gate, or never read, or dropped by the person, all of which
// the person's choices override. A page kept out for what it is —
// undated, dated after the cutoff, too short, unreadable, a duplicate —
// stays out whatever they choose.
func rereadLifts(st Status) bool {
	switch st {
	case StatusExcludedRating, StatusIrrelevant, StatusDropped, "":
		return true
	}
	return false
}

func (c *Check) source(i int) (*Source, error) {
	if i < 0 || i >= len(c.Sources) {
		return nil, fmt.Errorf("source %d: %w", i+1, ErrNotInCheck)
	}
	return &c.Sources[i], nil
}

// DropSource keeps source i out of this check whatever its rating; the drop
// survives every rerun. It counts from the evidence stage on, which the
// stage returned names ("" when the page could not be quoted anyway) and
// which goes stale with the correction.
func (c *Check) DropSource(i int) (Stage, error) {
	s, err := c.source(i)
	if err != nil {
		return "", err
	}
	quotable := s.Eligible()
	if s.Dropped {
		return "", nil
	}
	s.Dropped, s.Boosted = true, false
	if !quotable {
		return "", nil
	}
	c.markStale(StageEvidence)
	return StageEvidence, nil
}

// BoostSource puts source i first among the pages read for evidence, and
// lifts its publisher's rating and the relevance gate for it (the gate
// counts shared words, and the person may know better); a boost undoes a
// drop. It returns the stage a rerun must start from, at the latest, for
// the boost to count, and marks it and the stages after it stale: the
// evidence stage for a page that may already be quoted, the sources stage
// for one kept out for its rating, by the gate or by a drop, since only
// reading the pages again lets it in. A page kept out for what it is —
// undated, dated after the cutoff, too short, unreadable, a duplicate —
// stays out: BoostSource changes nothing and its error, wrapping
// ErrKeptOut, says why.
func (c *Check) BoostSource(i int) (Stage, error) {
	s, err := c.source(i)
	if err != nil {
		return "", err
	}
	var from Stage
	switch {
	case eligibleStatus(s.Status):
		from = StageEvidence
	case rereadLifts(s.Status):
		from = StageSources
	default:
		why := cmp.Or(s.Reason, strings.ReplaceAll(string(s.Status), "_", " "))
		return "", &keptOutError{domain: cmp.Or(s.Domain, sources.HostOf(s.URL)), why: why}
	}
	if s.Boosted && !s.Dropped {
		return from, nil
	}
	s.Boosted, s.Dropped = true, false
	c.markStale(from)
	return from, nil
}

// keptOutError is BoostSource's refusal.
type keptOutError struct{ domain, why string }

func (e *keptOutError) Error() string { return "a boost cannot bring back " + e.domain + ": " + e.why }
func (e *keptOutError) Unwrap() error { return ErrKeptOut }

// RestoreSource undoes the person's drop or boost of source i. It returns
// the stage a rerun must start from for that to count ("" when nothing
// changes downstream), and marks it and the stages after it stale: the
// sources stage when the page must be read again to be judged without the
// person's choice (a page the stages have kept out as dropped, or one a
// boost may have let past its rating or the relevance gate), else the
// evidence stage.
func (c *Check) RestoreSource(i int) (Stage, error) {
	s, err := c.source(i)
	if err != nil {
		return "", err
	}
	var from Stage
	switch {
	case s.Dropped && s.Status == StatusDropped:
		from = StageSources
	case s.Dropped && eligibleStatus(s.Status):
		from = StageEvidence
	case s.Boosted && !s.Dropped && eligibleStatus(s.Status):
		from = StageSources
	case !s.Dropped && !s.Boosted:
		return "", nil
	}
	s.Dropped, s.Boosted = false, false
	if from != "" {
		c.markStale(from)
	}
	return from, nil
}

// IncludeQuote ticks quote i (include) or unticks it: an unticked quote
// stays out of the correction, and stays unticked when the evidence is
// found again. A quote not found on its page cannot be ticked: nothing
// rests on it. The correction goes stale.
func (c *Check) IncludeQuote(i int, include bool) error {
	if i < 0 || i >= len(c.Evidence) {
		return fmt.Errorf("quote %d: %w", i+1, ErrNotInCheck)
	}
	e := &c.Evidence[i]
	if include && !e.Verified {
		return fmt.Errorf("a quote not found on its page cannot be used: %s", cmp.Or(e.Reason, "it is not on the page"))
	}
	if e.Included == include {
		return nil
	}
	e.Included = include
	c.markStale(StageCorrection)
	return nil
}

func (c *Check) query(i int) (*Query, error) {
	if i < 0 || i >= len(c.Queries) {
		return nil, fmt.Errorf("query %d: %w", i+1, ErrNotInCheck)
	}
	return &c.Queries[i], nil
}

// queryText is a query as the person wrote it, checked: words, and not
// one of the other queries (but the one at skip).
func (c *Check) queryText(text string, skip int) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", errors.New("a query needs words")
	}
	for j, q := range c.Queries {
		if j != skip && strings.EqualFold(strings.TrimSpace(q.Text), text) {
			return "", fmt.Errorf("%q is already a query", text)
		}
	}
	return text, nil
}

// SetQueryEnabled turns query i on or off for the next search. The search
// and every stage after it go stale.
func (c *Check) SetQueryEnabled(i int, on bool) error {
	q, err := c.query(i)
	if err != nil || q.Enabled == on {
		return err
	}
	q.Enabled = on
	c.markStale(StageSearch)
	return nil
}

// EditQuery rewrites query i. It becomes the person's, kept when the model
// writes the queries again, and is turned on. The search and every stage
// after it go stale.
func (c *Check) EditQuery(i int, text string) error {
	q, err := c.query(i)
	if err != nil {
		return err
	}
	if text, err = c.queryText(text, i); err != nil || text == q.Text {
		return err
	}
	q.Text, q.Origin, q.Enabled, q.Language = text, OriginUser, true, ""
	c.markStale(StageSearch)
	return nil
}

// AddQuery adds a query of the person's, turned on. The search and every
// stage after it go stale.
func (c *Check) AddQuery(text string) error {
	text, err := c.queryText(text, -1)
	if err != nil {
		return err
	}
	c.Queries = append(c.Queries, Query{Text: text, Origin: OriginUser, Enabled: true})
	c.markStale(StageSearch)
	return nil
}

// DeleteQuery removes query i. The search and every stage after it go
// stale.
func (c *Check) DeleteQuery(i int) error {
	if _, err := c.query(i); err != nil {
		return err
	}
	c.Queries = slices.Delete(c.Queries, i, i+1)
	c.markStale(StageSearch)
	return nil
}

// DescribeImage puts the person's description of the image at src in place
// of the engine's: the images stage keeps it on every rerun, and the
// queries are written from it. The queries and every stage after them go
// stale.
func (c *Check) DescribeImage(src, text string) error {
	i := slices.IndexFunc(c.Images, func(im Image) bool { return im.Source == src })
	if i < 0 {
		return fmt.Errorf("image %s: %w", src, ErrNotInCheck)
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return errors.New("a description needs words")
	}
	im := &c.Images[i]
	if text == im.Description {
		return nil // unchanged: not an edit
	}
	im.Description, im.Edited, im.Origin, im.Error = text, true, ImageOriginUser, ""
	c.markStale(StageQueries)
	return nil
}

// SetLanguage sets the post's language (ISO 639-1; "" has the engine
// detect it again) and returns the stage a run must start from for it to
// count: the queries, which are written in it, or the images while they
// are not described yet (the language is detected from their text too).
// That stage and every one after it go stale.
func (c *Check) SetLanguage(code string) Stage {
	c.Post.Language = code
	from := StageQueries
	if st := c.Stage(StageImages).State; st != StateDone && st != StateSkipped && st != StateStale {
		from = StageImages
	}
	c.markStale(from)
	return from
}

// SetCorrection puts text in place of the correction: the person's own
// (edited), or a version of the correction kept earlier, the model's or
// theirs. It cites the links the text holds, however they are written.
func (c *Check) SetCorrection(text string, edited bool) {
	if text == c.Correction.Text && edited == c.Correction.Edited {
		return
	}
	c.Correction.Text, c.Correction.Edited = text, edited
	c.Correction.URLs = nil
	for _, l := range links.Find(text) {
		if !slices.Contains(c.Correction.URLs, l.URL) {
			c.Correction.URLs = append(c.Correction.URLs, l.URL)
		}
	}
}

// QuoteFoundOn lists the other pages read for this check (eligible, not
// dropped) whose text holds quote i, which is not on the page the model
// put it on: the model may have filed a page's sentence under its
// neighbour in the same call. Empty when the quote is on its page.
func (c *Check) QuoteFoundOn(i int) []string {
	if i < 0 || i >= len(c.Evidence) || c.Evidence[i].Verified {
		return nil
	}
	e := c.Evidence[i]
	var out []string
	for _, s := range c.Sources {
		if !s.Eligible() || sources.Key(s.URL) == sources.Key(e.SourceURL) || len(s.Paragraphs) == 0 {
			continue
		}
		if LocateQuote(cmp.Or(e.ModelQuote, e.Quote), strings.Join(s.Paragraphs, "\n")).Verified {
			out = append(out, s.URL)
		}
	}
	return out
}

// MoveQuote files quote i under the page at url, where its text is found
// (QuoteFoundOn): it becomes that page's verified quote, in the page's
// wording, ticked, and the correction goes stale. A page that does not
// hold it is refused.
func (c *Check) MoveQuote(i int, url string) error {
	if i < 0 || i >= len(c.Evidence) {
		return fmt.Errorf("quote %d: %w", i+1, ErrNotInCheck)
	}
	s := c.SourceByURL(url)
	if s == nil || !s.Eligible() {
		return fmt.Errorf("page %s: %w", url, ErrNotInCheck)
	}
	e := &c.Evidence[i]
	asked := cmp.Or(e.ModelQuote, e.Quote)
	m := LocateQuote(asked, strings.Join(s.Paragraphs, "\n"))
	if !m.Verified {
		return fmt.Errorf("the quote is not on %s either: %s", url, cmp.Or(m.Reason, "not found"))
	}
	e.SourceURL, e.Verified, e.Included, e.Reason = s.URL, true, true, ""
	e.Quote, e.ModelQuote = m.PageQuote, ""
	if m.PageQuote != asked {
		e.ModelQuote = asked
	}
	c.markStale(StageCorrection)
	return nil
}

// DescribeVideo puts the person's description of the post's video in place
// of the one made from its frames and transcript: the images stage keeps
// it on every rerun (the frames and transcript are kept too, never read
// again), and the queries are written from it. The queries and every
// stage after them go stale. An empty text gives the video back its
// description made from what was read.
func (c *Check) DescribeVideo(text string) error {
	if c.Video == nil {
		return fmt.Errorf("video: %w", ErrNotInCheck)
	}
	text = strings.TrimSpace(text)
	v := c.Video
	switch {
	case text == "" && !v.Edited:
		return nil
	case text == "":
		v.Description, v.Edited = videoDescription(*v), false
	case text == v.Description:
		return nil // unchanged: not an edit
	default:
		v.Description, v.Edited = text, true
	}
	c.markStale(StageQueries)
	return nil
}
