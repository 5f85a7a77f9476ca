package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/export"
)

// noteCase is a refuted post whose correction cites page.
func noteCase(id, page string) *pipeline.Check {
	return &pipeline.Check{ID: id,
		Post:       pipeline.Post{Text: "The mayor banned bicycles"},
		Sources:    []pipeline.Source{{URL: page, Title: "Fact check", Publisher: "Reuters", PublisherRated: true, Domain: "reuters.com", Tier: pipeline.TierHigh, Status: pipeline.StatusUsed}},
		Evidence:   []pipeline.Evidence{{SourceURL: page, Quote: "The city council has not banned bicycles.", Kind: pipeline.KindRefutes, Verified: true, Included: true}},
		Correction: pipeline.Correction{Text: "This post is false: the council has not banned bicycles. " + page, URLs: []string{page}},
	}
}

// TestCasesExportNote: the note's classification, tags and pre-flight are
// said beside the note, given as JSON with note-json, and --live fetches
// each link through a loopback server that answers as the web would.
func TestCasesExportNote(t *testing.T) {
	dataDir := isolate(t)
	const live, gone = "http://www.reuters.com/world/us/springfield-fact-check", "http://www.reuters.com/world/us/removed"
	saveCase(t, dataDir, noteCase("20240201-note", live))
	saveCase(t, dataDir, noteCase("20240201-gone", gone))
	var mu sync.Mutex
	var seen []string
	asked := func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(seen) }
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.String())
		mu.Unlock()
		if r.URL.Path != "/world/us/springfield-fact-check" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html><html><head><title>Fact check</title></head><body><article><p>The city council has not banned bicycles.</p></article></body></html>"))
	}))
	defer web.Close()
	env := []string{"HTTP_PROXY=" + web.URL, "MUSE_ALLOW_PRIVATE_ADDRESSES=1"}

	out, errOut, code := muse(t, "", env, "cases", "export", "20240201-note", "--format", "note")
	if code != 0 || !strings.HasPrefix(out, "This post is false") {
		t.Fatalf("note: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"muse: note: misleading · factual_error\n", "muse: note: factual_error: the post is refuted by Reuters\n", "muse: pre-flight: passed\n"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if a := asked(); len(a) != 0 {
		t.Errorf("an offline export fetched %v", a)
	}

	out, errOut, code = muse(t, "", env, "cases", "export", "20240201-note", "--format", "note-json", "--live")
	var d export.NoteDoc
	if err := json.Unmarshal([]byte(out), &d); code != 0 || err != nil {
		t.Fatalf("note-json --live: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if d.Classification != pipeline.ClassMisleading || len(d.MisleadingTags) != 1 || d.MisleadingTags[0] != pipeline.TagFactualError ||
		len(d.Preflight.Live) != 1 || d.Preflight.Live[0].Status != 200 || !d.Preflight.OK() {
		t.Errorf("note-json --live: %s", out)
	}
	if a := asked(); len(a) != 1 || a[0] != "HEAD "+live {
		t.Errorf("requests %v, want one HEAD of the page", a)
	}

	out, errOut, code = muse(t, "", env, "cases", "export", "20240201-gone", "--format", "note", "--live")
	if code != 0 || !strings.Contains(errOut, "muse: pre-flight: "+gone+" answers 404") ||
		!strings.Contains(errOut, "“"+gone+"” does not answer 200 (it answers 404) — cite a page that answers") {
		t.Errorf("note --live of a removed page: exit %d\n%s%s", code, out, errOut)
	}

	_, errOut, code = muse(t, "", env, "cases", "export", "20240201-note", "--format", "md", "--live")
	if code != 2 || !strings.Contains(errOut, "--live checks a note's links") {
		t.Errorf("--live with md: exit %d\n%s", code, errOut)
	}
}
