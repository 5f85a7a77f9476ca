package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/lang"
)

// scriptRunner stands in for the engine in key-flow tests: it follows the
// engine's contract (owns the check until Run returns, records stage
// states and logs events in the check, emits started / item / token /
// finished events each with a snapshot of the check but token deltas, as
// Options.Snapshots does; honours drops, boosts and unticked quotes, keeps
// what it found when cancelled) over a fixed web of pages.
type scriptRunner struct {
	mu    sync.Mutex
	froms []pipeline.Stage
	seen  []*pipeline.Check // a copy of each check handed to Run
	// hold, when set, pauses the correction stage until it is closed or
	// the run is cancelled, so tests can stop a run mid-stream.
	hold chan struct{}
	// world, when set, is the web of another language (lang_test.go);
	// nil is the English one below.
	world *scriptWorld
}

// scriptWorld is what the fake web says in one language: the model's
// queries, the pages in rank order and how a correction starts.
type scriptWorld struct {
	queries []string
	pages   []pipeline.Source
	lead    string
}

func (r *scriptRunner) web() scriptWorld {
	if r.world != nil {
		return *r.world
	}
	return scriptWorld{queries: []string{"Baltimore bridge collapse video", "Genoa Morandi bridge video 2019", "bridge collapse video fact check"},
		pages: scriptPages, lead: "This post is misleading. "}
}

func (r *scriptRunner) runs() ([]pipeline.Stage, []*pipeline.Check) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pipeline.Stage(nil), r.froms...), append([]*pipeline.Check(nil), r.seen...)
}

var fixedNow = time.Date(2024, 3, 5, 14, 30, 0, 0, time.UTC)

// scriptPages are the pages the fake web knows, in rank order.
var scriptPages = []pipeline.Source{
	{URL: "https://www.reuters.com/world/fact-check-bridge-video-2024-03-02/", Title: "Fact Check: Video does not show Baltimore bridge collapse", Publisher: "Reuters", Domain: "reuters.com",
		Published: time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), Tier: pipeline.TierHigh, Factuality: "very high", Bias: "least biased", RatingOrigin: "MBFC", Relevance: 0.62, Words: 612,
		Paragraphs: []string{"A video shared on social media does not show a bridge collapse in Baltimore; it was filmed in 2019 in Genoa, Italy.", "The Morandi bridge collapsed on August 14, 2018."}},
	{URL: "https://apnews.com/article/bridge-video-misleading-9f1", Title: "Old video of Genoa bridge shared as new", Publisher: "Associated Press", Domain: "apnews.com",
		Published: time.Date(2024, 3, 3, 0, 0, 0, 0, time.UTC), Tier: pipeline.TierHigh, Factuality: "high", Bias: "least biased", RatingOrigin: "MBFC", Relevance: 0.55, Words: 480,
		Paragraphs: []string{"The footage circulating this week first appeared online in 2019 and shows the aftermath in Genoa.", "Italian officials confirmed the location."}},
	{URL: "https://www.bbc.com/news/world-europe-45193452", Title: "Genoa bridge collapse: what happened", Publisher: "BBC", Domain: "bbc.com",
		Published: time.Date(2018, 8, 15, 0, 0, 0, 0, time.UTC), Tier: pipeline.TierMedium, Factuality: "high", Bias: "left-center", RatingOrigin: "MBFC", Relevance: 0.41, Words: 900,
		Paragraphs: []string{"A section of the Morandi motorway bridge in Genoa collapsed during a storm."}},
	{URL: "https://viralnewsdaily.example/bridge-shock", Title: "SHOCK: bridge down!!", Publisher: "Viral News Daily", Domain: "viralnewsdaily.example",
		Tier: pipeline.TierExcluded, Factuality: "low", Bias: "questionable", RatingOrigin: "MBFC", Relevance: 0.38,
		Status: pipeline.StatusExcludedRating, Reason: "publisher rated low factuality, questionable: not a credible reference"},
	{URL: "https://www.nytimes.com/2024/03/06/us/bridge-video.html", Title: "How an old video went viral", Publisher: "The New York Times", Domain: "nytimes.com",
		Published: time.Date(2024, 3, 6, 0, 0, 0, 0, time.UTC), Tier: pipeline.TierMedium, Factuality: "high", Bias: "left-center", RatingOrigin: "MBFC", Relevance: 0.47,
		Status: pipeline.StatusExcludedCutoff, Reason: "published 2024-03-06, after the cutoff 2024-03-05"},
}

func (r *scriptRunner) Run(ctx context.Context, c *pipeline.Check, from pipeline.Stage, events chan<- pipeline.Event) error {
	r.mu.Lock()
	r.froms = append(r.froms, from)
	r.seen = append(r.seen, c.Clone())
	r.mu.Unlock()
	emit := func(ev pipeline.Event) {
		ev.Time = fixedNow
		switch ev.Kind {
		case pipeline.EventItem, pipeline.EventTokenDelta, pipeline.EventUsage:
		default:
			c.Events = append(c.Events, ev)
		}
		if ev.Kind != pipeline.EventTokenDelta {
			ev.Check = c.Clone()
		}
		events <- ev
	}
	start := stageIndex(from)
	for _, st := range pipeline.Stages[start+1:] {
		setInfo(c, pipeline.StageInfo{Stage: st, State: pipeline.StateWaiting})
	}
	var err error
	for _, st := range pipeline.Stages[start:] {
		if err = ctx.Err(); err != nil {
			break
		}
		setInfo(c, pipeline.StageInfo{Stage: st, State: pipeline.StateRunning})
		emit(pipeline.Event{Kind: pipeline.EventStageStarted, Stage: st, State: pipeline.StateRunning})
		var n int
		var skipped bool
		n, skipped, err = r.stage(ctx, c, st, emit)
		if u, ok := scriptUsage[st]; ok && err == nil && !skipped {
			addUsage(c, st, u)
		}
		switch {
		case err != nil:
			setInfo(c, pipeline.StageInfo{Stage: st, State: pipeline.StateFailed, Count: n, Seconds: 0.4, Error: err.Error()})
			emit(pipeline.Event{Kind: pipeline.EventStageFailed, Stage: st, State: pipeline.StateFailed, Count: n, Seconds: 0.4, Err: err.Error()})
		case skipped:
			setInfo(c, pipeline.StageInfo{Stage: st, State: pipeline.StateSkipped})
			emit(pipeline.Event{Kind: pipeline.EventStageFinished, Stage: st, State: pipeline.StateSkipped, Message: string(st) + ": skipped"})
		default:
			setInfo(c, pipeline.StageInfo{Stage: st, State: pipeline.StateDone, Count: n, Seconds: 1.2})
			emit(pipeline.Event{Kind: pipeline.EventStageFinished, Stage: st, State: pipeline.StateDone, Count: n, Seconds: 1.2,
				Message: fmt.Sprintf("%s: %d (1.2s)", st, n)})
		}
		if err != nil {
			break
		}
	}
	done := pipeline.Event{Kind: pipeline.EventDone}
	if err != nil {
		done.Err = err.Error()
	}
	emit(done)
	return err
}

// scriptUsage is what each stage's model calls cost, accounted as the
// engine does (Usage and Usage.ByStage of its own record, none of it in
// events): 2,040 tokens and $0.0012 for a whole run.
var scriptUsage = map[pipeline.Stage]pipeline.StageUsage{
	pipeline.StageQueries:    {LLMCalls: 1, PromptTokens: 600, CompletionTokens: 40, CostUSD: 0.0002},
	pipeline.StageEvidence:   {LLMCalls: 1, PromptTokens: 900, CompletionTokens: 120, CostUSD: 0.0006},
	pipeline.StageCorrection: {LLMCalls: 1, PromptTokens: 300, CompletionTokens: 80, CostUSD: 0.0004},
}

func addUsage(c *pipeline.Check, st pipeline.Stage, u pipeline.StageUsage) {
	c.Usage.LLMCalls += u.LLMCalls
	c.Usage.PromptTokens += u.PromptTokens
	c.Usage.CompletionTokens += u.CompletionTokens
	c.Usage.CostUSD += u.CostUSD
	if c.Usage.ByStage == nil {
		c.Usage.ByStage = map[string]pipeline.StageUsage{}
	}
	b := c.Usage.ByStage[string(st)]
	b.LLMCalls += u.LLMCalls
	b.PromptTokens += u.PromptTokens
	b.CompletionTokens += u.CompletionTokens
	b.CostUSD += u.CostUSD
	c.Usage.ByStage[string(st)] = b
}

// scriptImage is what the images stage knows of a post image: alt text
// from the platform, a vision model's caption, OCR text, and the merged
// description the paper's prompt makes of them.
func scriptImage(src string) pipeline.Image {
	return pipeline.Image{
		Source:      src,
		AltText:     "Bridge collapse in Baltimore this morning",
		Caption:     "A photo of a collapsed steel road bridge over a river, seen from a hillside, with emergency vehicles on the bank",
		OCRText:     "BREAKING: BALTIMORE BRIDGE DOWN",
		Description: "A photo of a collapsed road bridge over a river with the caption \"BREAKING: BALTIMORE BRIDGE DOWN\"",
		Origin:      "vision model + OCR",
		TextOrigin:  "ocr",
	}
}

func setInfo(c *pipeline.Check, info pipeline.StageInfo) {
	for i := range c.Stages {
		if c.Stages[i].Stage == info.Stage {
			c.Stages[i] = info
			return
		}
	}
	c.Stages = append(c.Stages, info)
}

func (r *scriptRunner) stage(ctx context.Context, c *pipeline.Check, st pipeline.Stage, emit func(pipeline.Event)) (int, bool, error) {
	item := func(it any) { emit(pipeline.Event{Kind: pipeline.EventItem, Stage: st, Item: it}) }
	switch st {
	case pipeline.StageImages:
		if len(c.Post.Images) == 0 {
			return 0, true, nil
		}
		prev := map[string]pipeline.Image{}
		for _, im := range c.Images {
			prev[im.Source] = im
		}
		c.Images = nil
		for _, src := range c.Post.Images {
			im := scriptImage(src)
			if old, ok := prev[src]; ok && old.Edited {
				im = old // the person's description stands
			}
			c.Images = append(c.Images, im)
			item(im)
		}
		return len(c.Images), false, nil
	case pipeline.StageQueries:
		var kept []pipeline.Query
		for _, q := range c.Queries {
			if q.Origin == pipeline.OriginUser {
				kept = append(kept, q)
			}
		}
		c.Queries = kept
		if c.Post.Language == "" { // as the engine does, before the queries
			c.Post.Language = lang.Detect(c.Post.Text).Code
		}
		texts := append([]string(nil), r.web().queries...)
		for _, im := range c.Images {
			// a query from each image's description, as the paper asks
			words := strings.Fields(strings.TrimPrefix(im.Description, "A photo of "))
			if len(words) > 0 {
				texts = append(texts, strings.Join(words[:min(len(words), 8)], " "))
			}
		}
		for _, t := range texts {
			q := pipeline.Query{Text: t, Origin: pipeline.OriginModel, Enabled: true}
			c.Queries = append(c.Queries, q)
			item(q)
		}
		return len(c.Queries), false, nil
	case pipeline.StageSearch:
		c.Hits = nil
		var q string
		for _, x := range c.Queries {
			if x.Enabled {
				q = x.Text
				break
			}
		}
		for i, p := range r.web().pages {
			h := pipeline.Hit{URL: p.URL, Title: p.Title, Provider: "searxng", Query: q, Rank: i + 1, Pass: 1}
			c.Hits = append(c.Hits, h)
			item(h)
		}
		return len(c.Hits), false, nil
	case pipeline.StageSources:
		prev := map[string]pipeline.Source{}
		for _, s := range c.Sources {
			prev[s.URL] = s
		}
		c.Sources, c.Evidence = nil, nil
		for _, p := range r.web().pages {
			s := p
			s.Paragraphs = append([]string(nil), p.Paragraphs...)
			if old, ok := prev[s.URL]; ok {
				s.Dropped, s.Boosted = old.Dropped, old.Boosted
			}
			if s.Status == "" {
				s.Status = pipeline.StatusPending
			}
			if s.Dropped {
				s.Status, s.Reason = pipeline.StatusDropped, "dropped by you"
			}
			c.Sources = append(c.Sources, s)
			item(s)
		}
		return len(c.Sources), false, nil
	case pipeline.StageEvidence:
		unticked := map[string]bool{}
		for _, e := range c.Evidence {
			if !e.Included {
				unticked[e.Quote] = true
			}
		}
		c.Evidence = nil
		n := 0
		for i := range c.Sources {
			s := &c.Sources[i]
			if s.Dropped || (s.Status != pipeline.StatusPending && s.Status != pipeline.StatusUsed && s.Status != pipeline.StatusBoosted) {
				continue
			}
			if n == 2 {
				s.Status, s.Reason = pipeline.StatusNotNeeded, "two pages already refute the post"
				item(*s)
				continue
			}
			n++
			s.Status, s.Reason = pipeline.StatusUsed, "quoted"
			for j, p := range s.Paragraphs {
				kind := pipeline.KindRefutes
				if j > 0 {
					kind = pipeline.KindContext
				}
				e := pipeline.Evidence{SourceURL: s.URL, Quote: p, Kind: kind, Verified: true, Included: !unticked[p]}
				c.Evidence = append(c.Evidence, e)
				item(e)
			}
			item(*s)
		}
		return len(c.Evidence), false, nil
	case pipeline.StageCorrection:
		var urls []string
		var facts []string
		for _, e := range c.Evidence {
			if e.Included && e.Kind == pipeline.KindRefutes {
				facts = append(facts, strings.TrimSuffix(e.Quote, "."))
				urls = append(urls, e.SourceURL)
			}
		}
		text := r.web().lead + strings.Join(facts, "; ") + ". " + strings.Join(urls, " ")
		c.Correction = pipeline.Correction{}
		for _, w := range strings.SplitAfter(text, " ") {
			if r.hold != nil {
				select {
				case <-r.hold:
				case <-ctx.Done():
					return 0, false, fmt.Errorf("write the correction: %w", ctx.Err())
				}
			}
			c.Correction.Text += w
			emit(pipeline.Event{Kind: pipeline.EventTokenDelta, Stage: st, Delta: w})
		}
		c.Correction.Text = strings.TrimSpace(c.Correction.Text)
		c.Correction.URLs = urls
		item(c.Correction)
		return 1, false, nil
	}
	return 0, false, nil
}
