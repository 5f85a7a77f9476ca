package eval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/links"
	"github.com/musecheck/muse/sources/llm"
)

// Kinds of system.
const (
	KindMuse  = "muse"  // the engine, cutoff at the post's time
	KindModel = "model" // the model alone, no retrieval (the paper's GPT-4)
	KindFile  = "file"  // corrections given with the posts
)

// Output is one system's correction of one post.
type Output struct {
	Text string
	URLs []string
	// Pages is the text the system read of each cited URL (muse's), by URL.
	Pages map[string]string
	// Read are every page the system read (muse's sources).
	Read []string
	// Language is the language the correction was asked in ("" unknown).
	Language string
	Usage    llm.Usage
	Seconds  float64
}

// System writes corrections.
type System interface {
	Name() string
	Kind() string
	// Model names the model it uses ("" none), to keep the judge apart.
	Model() string
	Correct(ctx context.Context, p Post) (Output, error)
}

// Muse is muse's engine as a system: each post checked with its cutoff at
// the post's own time (--as-of-post), the paper's protocol.
type Muse struct {
	SystemName string
	ModelName  string
	Engine     *pipeline.Engine
	// CorrectionLanguage is the language the engine writes in, when set.
	CorrectionLanguage string
}

func (m *Muse) Name() string  { return m.SystemName }
func (m *Muse) Kind() string  { return KindMuse }
func (m *Muse) Model() string { return m.ModelName }

// Correct runs the engine over the post from its first stage.
func (m *Muse) Correct(ctx context.Context, p Post) (Output, error) {
	cutoff, err := pipeline.AsOfPost(p.Post)
	if err != nil {
		return Output{}, err
	}
	start := time.Now()
	c := m.Engine.NewCheck(p.Post, cutoff)
	runErr := m.Engine.Run(ctx, c, pipeline.Stages[0], nil)
	out := Output{Text: c.Correction.Text, URLs: c.Correction.URLs, Pages: map[string]string{}, Usage: c.Usage.Usage, Seconds: time.Since(start).Seconds()}
	out.Language = m.CorrectionLanguage
	if out.Language == "" {
		out.Language = c.Post.Language
	}
	for _, s := range c.Sources {
		out.Read = append(out.Read, s.URL)
	}
	for _, u := range out.URLs {
		if s := c.SourceByURL(u); s != nil && len(s.Paragraphs) > 0 {
			out.Pages[u] = strings.Join(s.Paragraphs, "\n\n")
		}
	}
	if runErr != nil && (out.Text == "" || !errors.Is(runErr, pipeline.ErrNoEvidence)) {
		return out, runErr
	}
	return out, nil
}

// ModelAlone is the paper's model-alone baseline: the model asked for a
// correction with no retrieval (prompts.Baseline).
type ModelAlone struct {
	SystemName string
	Client     *llm.Client
}

func (m *ModelAlone) Name() string  { return m.SystemName }
func (m *ModelAlone) Kind() string  { return KindModel }
func (m *ModelAlone) Model() string { return m.Client.ModelFor(llm.TaskCorrection) }

// Correct asks the model once.
func (m *ModelAlone) Correct(ctx context.Context, p Post) (Output, error) {
	start := time.Now()
	msgs, err := prompts.Baseline(promptPost(p))
	if err != nil {
		return Output{}, err
	}
	resp, err := m.Client.Complete(ctx, llm.Request{Task: llm.TaskCorrection, Messages: msgs})
	if err != nil {
		return Output{}, err
	}
	text := strings.TrimSpace(llm.StripReasoning(resp.Text))
	return Output{Text: text, URLs: CitedURLs(text), Language: p.Post.Language, Usage: resp.Usage, Seconds: time.Since(start).Seconds()}, nil
}

// Given are the corrections given with the posts under one name.
type Given struct{ SystemName string }

func (g *Given) Name() string  { return g.SystemName }
func (g *Given) Kind() string  { return KindFile }
func (g *Given) Model() string { return "" }

// ErrNoCorrection: the post set gives no correction of this post for the
// system.
var ErrNoCorrection = errors.New("no correction given for this post")

// Correct returns the given correction.
func (g *Given) Correct(_ context.Context, p Post) (Output, error) {
	text, ok := p.Corrections[g.SystemName]
	if !ok || strings.TrimSpace(text) == "" {
		return Output{}, fmt.Errorf("%s: %w", g.SystemName, ErrNoCorrection)
	}
	return Output{Text: text, URLs: CitedURLs(text), Language: p.Post.Language}, nil
}

// CitedURLs are the http(s) URLs written in a correction, in order, once
// each (sources/links finds them, trailing punctuation left out).
func CitedURLs(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range links.Find(text) {
		u := text[l.Start:l.End]
		lu := strings.ToLower(u)
		if l.Kind != links.KindURL || !(strings.HasPrefix(lu, "http://") || strings.HasPrefix(lu, "https://")) || seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, u)
	}
	return out
}
