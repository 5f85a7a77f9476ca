package batch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/sources/fetch"
)

// TestRecheckCasesRound: a round of the worker's scheduled recheck reads
// the saved cases' cited pages and marks the case whose page is gone.
func TestRecheckCasesRound(t *testing.T) {
	ctx := context.Background()
	gone := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gone {
			http.Error(w, "gone", http.StatusGone)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html><head><title>Lanes</title></head><body><article><p>The council approved six protected cycle lanes on Tuesday.</p></article></body></html>`))
	}))
	defer srv.Close()
	st, err := cases.Open(ctx, filepath.Join(t.TempDir(), "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u := srv.URL + "/lanes"
	c := &pipeline.Check{CreatedAt: time.Now(), Post: pipeline.Post{Text: "Bikes banned"},
		Evidence:   []pipeline.Evidence{{SourceURL: u, Quote: "The council approved six protected cycle lanes on Tuesday.", Verified: true, Included: true}},
		Correction: pipeline.Correction{Text: "False.", URLs: []string{u}}}
	if err := st.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	gone = true
	sc := RecheckCases(st, func(context.Context) (*fetch.Fetcher, func() error) {
		f := fetch.New(fetch.Options{AllowPrivate: true, IgnoreRobots: true})
		return f, func() error { f.CloseIdleConnections(); return nil }
	}, time.Hour)
	out, err := sc.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"cases":1,"changed":1,"failed":0,"not_modified":0,"pages":1}` {
		t.Errorf("recheck output %s", out)
	}
	list, _ := st.List(ctx, cases.ListOptions{})
	if len(list) != 1 || list[0].EvidenceChanged != 1 {
		t.Errorf("list %+v", list)
	}
}
