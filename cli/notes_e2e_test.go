package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/notewriter"
	"github.com/musecheck/muse/sources/notewriter/notewritertest"
)

// TestNotesEndToEnd: a post X offers for a note is checked on the loopback
// world, its note gets a classification and tags from the verdict, passes
// the pre-flight (its links fetched live), is evaluated and submitted in
// test mode to the loopback API; `muse notes status` brings X's scores back
// into the case and says how far the writer is from admission.
func TestNotesEndToEnd(t *testing.T) {
	isolate(t)
	w := testworld.New(t, nil)
	x := notewritertest.New(t, notewritertest.Post{ID: "1752000000000000001", Text: testworld.Post, Lang: "en", AuthorID: "42",
		CreatedAt: testworld.Cutoff,
		Requests:  []notewriter.Request{{ID: "9", Suggestion: "The council never voted on a ban", SourceLink: "https://www.reuters.com/"}},
		Sources:   []notewriter.SuggestedSource{{URL: "https://www.reuters.com/", Count: 4}}})
	env := append([]string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String()}, x.Env()...)

	out, errOut, code := muse(t, "", env, "notes", "eligible")
	if code != 0 || !strings.Contains(out, " 1. 1752000000000000001  2024-02-01 12:00  en  BREAKING: Springfield") ||
		!strings.Contains(out, "note request: The council never voted on a ban (https://www.reuters.com/)") ||
		!strings.Contains(out, "suggested source ×4: https://www.reuters.com/") {
		t.Fatalf("eligible: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = muse(t, "", env, "notes", "eligible", "--check", "1")
	m := regexp.MustCompile(`kept as case (\S+) `).FindStringSubmatch(errOut)
	if code != 0 || m == nil || !strings.Contains(out, "# Correction") {
		t.Fatalf("eligible --check 1: exit %d\n%s%s", code, out, errOut)
	}
	id := m[1]

	js, errOut, code := muse(t, "", env, "cases", "export", id, "--format", "note-json", "--live")
	var doc struct {
		Text           string   `json:"text"`
		Classification string   `json:"classification"`
		Tags           []string `json:"misleading_tags"`
		Preflight      struct {
			Problems []any `json:"problems"`
			Live     []struct {
				OK bool `json:"ok"`
			} `json:"live"`
		} `json:"preflight"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || code != 0 || doc.Classification != "misinformed_or_potentially_misleading" ||
		len(doc.Tags) == 0 || doc.Tags[0] != "factual_error" || len(doc.Preflight.Problems) != 0 || len(doc.Preflight.Live) == 0 || !doc.Preflight.Live[0].OK {
		t.Fatalf("the note: exit %d %v\n%s%s", code, err, js, errOut)
	}

	out, errOut, code = muse(t, "", env, "notes", "evaluate", id)
	if code != 0 || out != "ClaimOpinion score 0.80 on post 1752000000000000001\n" {
		t.Fatalf("evaluate: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = muse(t, "", env, "notes", "submit", id, "--check-links")
	if code != 0 || !strings.HasPrefix(out, "submitted in test mode: note ") {
		t.Fatalf("submit: exit %d\n%s%s", code, out, errOut)
	}
	ns := x.Notes()
	if len(ns) != 1 || !ns[0].TestMode || ns[0].Text != doc.Text || strings.Join(ns[0].Tags, ",") != strings.Join(doc.Tags, ",") {
		t.Fatalf("X took %+v, want the note exported %q %v", ns, doc.Text, doc.Tags)
	}

	out, errOut, code = muse(t, "", env, "notes", "status")
	if code != 0 || !strings.Contains(out, "1 of 50 test-mode notes written; 49 more notes") ||
		!strings.Contains(out, ns[0].ID+"  post 1752000000000000001  ClaimOpinion high · UrlValidity high · HarassmentAbuse high  case "+id) {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
	js, _, _ = muse(t, "", nil, "cases", "export", id, "--format", "json")
	var c struct {
		XNote struct {
			PostID   string            `json:"post_id"`
			NoteID   string            `json:"note_id"`
			Requests []map[string]any  `json:"requests"`
			Scores   map[string]string `json:"scores"`
		} `json:"x_note"`
	}
	if err := json.Unmarshal([]byte(js), &c); err != nil || c.XNote.NoteID != ns[0].ID || c.XNote.PostID != "1752000000000000001" ||
		len(c.XNote.Requests) != 1 || c.XNote.Scores["ClaimOpinion"] != "high" {
		t.Errorf("the case after status: %v %+v", err, c.XNote)
	}
}
