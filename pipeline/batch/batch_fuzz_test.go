package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"

	"github.com/musecheck/muse/sources/extract"
)

// `muse batch` reads JSON lines written by scripts and people. Whatever a
// line holds, it becomes exactly one result ("done" or "failed" with a
// reason) and the other lines go on.

type noFetch struct{}

func (noFetch) Fetch(context.Context, string) ([]byte, string, error) {
	return nil, "", errors.New("no network in this test")
}

type unrated struct{}

func (unrated) Rate(string) pipeline.Rating { return pipeline.Rating{Tier: pipeline.TierUnrated} }

func FuzzRunBatch(f *testing.F) {
	for _, s := range []string{
		`{"text":"Springfield banned bicycles","author":"A","posted_at":"2024-01-20"}` + "\n" + `{"url":"https://x.com/a/status/1","text":"x"}`,
		`{"text":""}` + "\n\n" + `not json` + "\n" + `{"text":"ok","posted_at":"yesterday"}`,
		`{"text":"a","images":[1,2]}` + "\r\n" + `[]` + "\n" + `null` + "\n" + `{"text":"b","posted_at":"2024-01-20T10:00:00+02:00"}`,
		`{"text":"dup"}` + "\n" + `{"text":"dup"}`, "\ufeff{\"text\":\"bom\"}", `{"text":"\u0000\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	e, err := pipeline.New(pipeline.Deps{Fetcher: noFetch{}, Extract: extract.Extract, Rater: unrated{}}, pipeline.Options{NoLLM: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want := 0
		sc := bufio.NewScanner(bytes.NewReader(in))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) != "" {
				want++
			}
		}
		var out bytes.Buffer
		st, err := Run(context.Background(), e, bytes.NewReader(in), &out, Options{Parallel: 2})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if st.Total != want || st.Done+st.Failed != want {
			t.Fatalf("%d lines, stats %+v", want, st)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if want == 0 {
			lines = nil
		}
		if len(lines) != want {
			t.Fatalf("%d lines in, %d results out", want, len(lines))
		}
		for _, l := range lines {
			var r Result
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("result is not JSON: %v: %s", err, l)
			}
			if r.Line < 1 || (r.Status != "done" && r.Status != "failed") || (r.Status == "failed") != (r.Error != "") {
				t.Fatalf("result %s", l)
			}
			if r.Status == "done" && r.Key == "" {
				t.Fatalf("done without a key: %s", l)
			}
		}
	})
}
