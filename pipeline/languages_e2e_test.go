package pipeline_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/testworld"
)

// A post in Spanish, German, Portuguese, Hindi, Arabic, Japanese, Chinese,
// Korean, Thai, Greek, Bengali, Hebrew or Russian, end to end: its
// language is detected, the model is asked for queries in it (by name and
// code) and SearXNG for pages in it, the local pages are kept as sources
// with the dates their visible text gives in the local format, quotes
// stay in the page's words, and the correction is written in the post's
// language citing them. For Spanish and German the claim is international,
// so one English query finds an English page, which is judged across
// languages and kept.
func TestEndToEndLanguages(t *testing.T) {
	for _, code := range []string{"es", "de", "pt", "hi", "ar", "ja", "zh", "ko", "th", "el", "bn", "he", "ru"} {
		t.Run(code, func(t *testing.T) {
			env := testworld.NewLang(t, code)
			w := env.World
			c, err := env.Check(t, env.Options())
			if err != nil {
				t.Fatal(err)
			}
			if c.Post.Language != code {
				t.Fatalf("post language %q, want %q", c.Post.Language, code)
			}
			var qs []string
			for _, q := range c.Queries {
				qs = append(qs, q.Text)
			}
			want := append([]string{}, w.Queries...)
			if w.English != "" {
				want = append(want, w.English)
			}
			if !slices.Equal(qs, want) {
				t.Fatalf("queries %q, want %q (the model answers in the language its prompt names)", qs, want)
			}
			// A query asks for the post's language or none (a query too short
			// to tell is not narrowed); the English one never for the post's.
			for _, s := range env.Searches() {
				english := w.English != "" && strings.HasPrefix(s.Query, w.English)
				if s.Language != "" && (s.Language != code || english) {
					t.Errorf("SearXNG asked %q with language %q", s.Query, s.Language)
				}
			}
			for _, p := range w.AllPages() {
				s := c.SourceByURL(p.URL())
				if s == nil {
					t.Errorf("%s: not a source", p.Host)
					continue
				}
				if got := s.Published.Format("2006-01-02"); got != p.Date {
					t.Errorf("%s: published %s, want %s from %q", p.Host, got, p.Date, p.Dateline)
				}
				wantLang := code
				if w.EnglishPage != nil && p.Host == w.EnglishPage.Host {
					wantLang = "en"
				}
				if s.Language != wantLang {
					t.Errorf("%s: language %q, want %q", p.Host, s.Language, wantLang)
				}
				switch {
				case p.Late:
					if s.Status != pipeline.StatusExcludedCutoff {
						t.Errorf("%s: status %s (%s), want excluded_cutoff", p.Host, s.Status, s.Reason)
					}
				case s.Status == pipeline.StatusIrrelevant:
					t.Errorf("%s: kept out as irrelevant: %s", p.Host, s.Reason)
				}
			}
			var verified []string
			for _, e := range c.Evidence {
				if e.Verified {
					verified = append(verified, e.Quote)
				}
			}
			for _, p := range w.Pages {
				for _, q := range p.Refutes {
					if !slices.Contains(verified, q) {
						t.Errorf("%s: refutation not kept verbatim: %q (evidence %q)", p.Host, q, verified)
					}
				}
			}
			if !strings.HasPrefix(c.Correction.Text, w.Correction) {
				t.Errorf("correction not in %s: %q", code, c.Correction.Text)
			}
			if len(c.Correction.URLs) < 2 {
				t.Errorf("correction cites %q", c.Correction.URLs)
			}
			for _, u := range c.Correction.URLs {
				if s := c.SourceByURL(u); s == nil || s.Status != pipeline.StatusUsed {
					t.Errorf("correction cites %s, not a used source", u)
				}
			}
			for _, task := range []string{"queries", "correction"} {
				for _, p := range env.Model.Prompts(task) {
					if label := w.Label(); !strings.Contains(p, label) {
						t.Errorf("the %s prompt does not name %s", task, label)
					}
				}
			}
		})
	}
}

// The checker may ask for the correction in another language than the
// post's; the queries and quotes stay in the post's and pages' languages.
func TestCorrectionLanguageOption(t *testing.T) {
	env := testworld.NewLang(t, "es")
	opts := env.Options()
	opts.CorrectionLanguage = "en"
	c, err := env.Check(t, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Correction.Text, "This post is") {
		t.Errorf("correction %q, want English", c.Correction.Text)
	}
	if c.Queries[0].Text != env.World.Queries[0] {
		t.Errorf("queries %v", c.Queries)
	}
	ps := env.Model.Prompts("correction")
	if len(ps) == 0 || !strings.Contains(ps[len(ps)-1], `starts with "This post is"`) || strings.Contains(ps[len(ps)-1], "Spanish (es), the language of the post") {
		t.Errorf("correction prompt:\n%s", strings.Join(ps, "\n---\n"))
	}
}
