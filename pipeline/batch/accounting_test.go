package batch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/extract"
)

// TestBatchCountsNothingFoundApart: a batch counts, from each check's
// accounting, the posts checked that found nothing (done) apart from those
// that could not be checked (failed, ErrNoEvidence), in its closing counts
// and in the status of its results file.
func TestBatchCountsNothingFoundApart(t *testing.T) {
	e, err := pipeline.New(pipeline.Deps{Fetcher: noFetch{}, Extract: extract.Extract, Rater: unrated{}}, pipeline.Options{NoLLM: true})
	if err != nil {
		t.Fatal(err)
	}
	run := func(_ context.Context, c *pipeline.Check, _ pipeline.Stage) error {
		switch {
		case strings.Contains(c.Post.Text, "evidence"):
			c.Sources = []pipeline.Source{{URL: "https://a.example/1", Status: pipeline.StatusUsed}}
			c.Evidence = []pipeline.Evidence{{SourceURL: "https://a.example/1", Quote: "q", Kind: pipeline.KindRefutes, Verified: true, Included: true}}
			c.Correction = pipeline.Correction{Text: "This post is false.", URLs: []string{"https://a.example/1"}}
			c.Usage.LLMCalls, c.Usage.CostUSD = 2, 0.01
		case strings.Contains(c.Post.Text, "nothing"):
			c.Sources = []pipeline.Source{{URL: "https://a.example/2", Status: pipeline.StatusNotNeeded, Reason: "read: the model quoted no paragraph of it as confirming, refuting or explaining the post"}}
			c.Correction = pipeline.Correction{Text: pipeline.NoEvidenceText(c)}
			c.Usage.LLMCalls, c.Usage.UnreportedCalls = 1, 1 // a server that sent no usage
		default: // every search failed
			c.Searches = []pipeline.SearchRecord{{Pass: 1, Query: "q", Provider: "searxng", Error: "HTTP 429 Too Many Requests"}}
			c.Correction = pipeline.Correction{Text: pipeline.NoEvidenceText(c)}
			return fmt.Errorf("%w: every web search provider failed", pipeline.ErrNoEvidence)
		}
		return nil
	}
	input := `{"text":"with evidence"}` + "\n" + `{"text":"found nothing"}` + "\n" + `{"text":"search down"}` + "\n"
	var out bytes.Buffer
	st, err := Run(context.Background(), e, strings.NewReader(input), &out, Options{Parallel: 1, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if st.Done != 2 || st.Failed != 1 || st.NothingFound != 1 || st.NotChecked != 1 || st.Usage().CostText() != "$0.0100 and 1 call of unknown cost" {
		t.Errorf("stats %+v", st)
	}
	if got, want := st.Counts(), "2 done (1 checked and found nothing), 1 failed (1 could not be checked)"; got != want {
		t.Errorf("counts %q, want %q", got, want)
	}
	path := filepath.Join(t.TempDir(), "results.jsonl")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	var status bytes.Buffer
	if err := WriteStatus(&status, rs); err != nil {
		t.Fatal(err)
	}
	if want := "3 posts: 2 done (1 checked and found nothing), 1 failed (1 could not be checked); $0.0100 and 1 call of unknown cost\n"; !strings.HasPrefix(status.String(), want) {
		t.Errorf("status %q, want it to begin %q", status.String(), want)
	}
}
