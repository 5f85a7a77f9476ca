package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/notewriter"
	"github.com/musecheck/muse/sources/notewriter/notewritertest"
)

// TestNotesSubmit: through the binary, a case's note is evaluated and
// submitted in test mode to a loopback API that verifies the signature;
// the note's ID is kept on the case and a second submission refused; a
// note failing the pre-flight is never sent; the 403 of an account not
// enrolled is said in words with the export as the way out; the keys are
// never printed; without keys it is a usage error naming them.
func TestNotesSubmit(t *testing.T) {
	dataDir := isolate(t)
	const page = "http://www.reuters.com/world/us/springfield-fact-check"
	c := noteCase("20240201-x", page)
	c.Post.URL = "https://x.com/jodoe/status/1900000000000000001"
	saveCase(t, dataDir, c)
	other := noteCase("20240201-y", page)
	other.Post.URL = "https://x.com/jodoe/status/1900000000000000001"
	saveCase(t, dataDir, other)
	bare := noteCase("20240201-nourl", page)
	bare.Evidence = nil // nothing refutes it: no note
	saveCase(t, dataDir, bare)

	x := notewritertest.New(t, notewritertest.Post{ID: "1900000000000000001", Text: "The mayor banned bicycles", Lang: "en"})
	x.Score = func(string) (float64, map[string]string) { return 0.64, nil }
	env := x.Env()

	out, errOut, code := muse(t, "", env, "notes", "evaluate", "20240201-x")
	if code != 0 || out != "ClaimOpinion score 0.64 on post 1900000000000000001\n" {
		t.Errorf("evaluate: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = muse(t, "", env, "notes", "submit", "20240201-x")
	if code != 0 || !strings.HasPrefix(out, "submitted in test mode: note 194") {
		t.Errorf("submit: exit %d\n%s%s", code, out, errOut)
	}
	ns := x.Notes()
	if len(ns) != 1 || !ns[0].TestMode || ns[0].PostID != "1900000000000000001" || ns[0].Classification != "misinformed_or_potentially_misleading" ||
		strings.Join(ns[0].Tags, ",") != "factual_error" || !strings.Contains(ns[0].Text, page) {
		t.Errorf("notes taken: %+v", ns)
	}
	show, _, _ := muse(t, "", nil, "cases", "export", "20240201-x", "--format", "json")
	var kept struct {
		XNote struct {
			NoteID       string   `json:"note_id"`
			ClaimOpinion *float64 `json:"claim_opinion"`
		} `json:"x_note"`
	}
	if err := json.Unmarshal([]byte(show), &kept); err != nil || kept.XNote.NoteID != ns[0].ID || kept.XNote.ClaimOpinion == nil || *kept.XNote.ClaimOpinion != 0.64 {
		t.Errorf("the case does not keep the note: %v %+v", err, kept)
	}
	log, _, _ := muse(t, "", nil, "cases", "log", "20240201-x")
	if !strings.Contains(log, "note submitted to X in test mode as note "+ns[0].ID) {
		t.Errorf("the trail lacks the submission:\n%s", log)
	}
	_, errOut, code = muse(t, "", env, "notes", "submit", "20240201-x")
	if code == 0 || !strings.Contains(errOut, "submitted already as note "+ns[0].ID) || len(x.Notes()) != 1 {
		t.Errorf("a second submission: exit %d\n%s", code, errOut)
	}

	_, errOut, code = muse(t, "", env, "notes", "submit", "20240201-nourl", "--post", "1900000000000000001")
	if code == 0 || !strings.Contains(errOut, "NOT ENOUGH EVIDENCE") || !strings.Contains(errOut, "nothing was sent to X") {
		t.Errorf("a note that fails the pre-flight: exit %d\n%s", code, errOut)
	}
	if len(x.Notes()) != 1 {
		t.Errorf("a note failing the pre-flight was sent: %+v", x.Notes())
	}
	x.SetEnrolled(false)
	_, errOut, code = muse(t, "", env, "notes", "submit", "20240201-y")
	if code == 0 || !strings.Contains(errOut, "not signed up for the AI Note Writer API") || !strings.Contains(errOut, "--format note") {
		t.Errorf("403 client-not-enrolled: exit %d\n%s", code, errOut)
	}
	for _, secret := range []string{notewritertest.Keys.APISecret, notewritertest.Keys.AccessToken, notewritertest.Keys.AccessSecret} {
		if strings.Contains(errOut, secret) {
			t.Errorf("stderr holds a key:\n%s", errOut)
		}
	}
	_, errOut, code = muse(t, "", nil, "notes", "submit", "20240201-y")
	if code != 2 || !strings.Contains(errOut, "X_API_KEY") || !strings.Contains(errOut, "x.api_key") {
		t.Errorf("without keys: exit %d\n%s", code, errOut)
	}
}

// TestNotesKeysFromConfig: the keys in the config file's [x] table sign
// the requests as the environment's do, and `muse config` masks them.
func TestNotesKeysFromConfig(t *testing.T) {
	isolate(t)
	x := notewritertest.New(t, notewritertest.Post{ID: "1901", Text: "Bikes banned", Lang: "en"})
	k := notewritertest.Keys
	conf := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "muse", "config.toml")
	os.MkdirAll(filepath.Dir(conf), 0o755)
	os.WriteFile(conf, []byte("[x]\napi_key = \""+k.APIKey+"\"\napi_key_secret = \""+k.APISecret+"\"\naccess_token = \""+k.AccessToken+
		"\"\naccess_token_secret = \""+k.AccessSecret+"\"\napi_url = \""+x.URL+"\"\n"), 0o600)
	out, errOut, code := muse(t, "", nil, "notes", "eligible")
	if code != 0 || !strings.Contains(out, " 1. 1901") {
		t.Errorf("eligible with the config's keys: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = muse(t, "", nil, "config", "show")
	for _, s := range []string{k.APISecret, k.AccessToken, k.AccessSecret} {
		if strings.Contains(out, s) {
			t.Errorf("muse config shows a key:\n%s", out)
		}
	}
	if !strings.Contains(out, "x.access_token_secret") {
		t.Errorf("muse config does not list the X keys:\n%s", out)
	}
}

// TestNotesStatus: the ledger of the last 50 test-mode notes, its four
// ratios against the bar and the notes still needed; the case whose note
// X scored keeps the scores.
func TestNotesStatus(t *testing.T) {
	dataDir := isolate(t)
	c := noteCase("20240201-x", "http://www.reuters.com/world/us/springfield-fact-check")
	c.Post.URL = "https://x.com/jodoe/status/1900"
	saveCase(t, dataDir, c)
	x := notewritertest.New(t)
	x.AddNotes(notewritertest.Note{ID: "501", PostID: "1900", Text: "n", TestMode: true,
		Scores: map[string]string{"ClaimOpinion": "Low", "UrlValidity": "High", "HarassmentAbuse": "High"}})
	for range 9 {
		x.AddNotes(notewritertest.Note{ID: "400", PostID: "1", Text: "n", TestMode: true,
			Scores: map[string]string{"ClaimOpinion": "High", "UrlValidity": "High", "HarassmentAbuse": "High"}})
	}
	out, errOut, code := muse(t, "", x.Env(), "notes", "status")
	for _, want := range []string{"the last 10 test-mode notes", "ClaimOpinion high  9/10  90%  bar ≥30%  ✓", "ClaimOpinion low   1/10  10%  bar ≤30%  ✓",
		"10 of 50 test-mode notes written; 40 more notes, each high on all three evaluators, would meet it.",
		"501  post 1900  ClaimOpinion low · UrlValidity high · HarassmentAbuse high  case 20240201-x"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("status: exit %d, lacks %q\n%s%s", code, want, out, errOut)
		}
	}
	js, _, _ := muse(t, "", x.Env(), "notes", "status", "--json")
	var l notewriter.Ledger
	if err := json.Unmarshal([]byte(js), &l); err != nil || l.More != 40 || len(l.Bars) != 4 || l.Meets {
		t.Errorf("status --json: %v %+v", err, l)
	}
	show, _, _ := muse(t, "", nil, "cases", "export", "20240201-x", "--format", "json")
	if !strings.Contains(show, `"note_id": "501"`) || !strings.Contains(show, `"ClaimOpinion": "low"`) {
		t.Errorf("the case lacks its note's scores:\n%s", show)
	}
}

// TestNotesWaits: X's 429 is waited out, the wait said on stderr, and the
// request sent again rather than failing.
func TestNotesWaits(t *testing.T) {
	isolate(t)
	x := notewritertest.New(t, notewritertest.Post{ID: "1901", Text: "Bikes banned", Lang: "en"})
	x.TooManyFor(1, 2*time.Second)
	out, errOut, code := muse(t, "", x.Env(), "notes", "eligible")
	if code != 0 || !strings.Contains(out, " 1. 1901") || !strings.Contains(errOut, "muse: waiting ") ||
		!strings.Contains(errOut, "X answered 429 Too Many Requests); Ctrl-C stops") {
		t.Errorf("after a 429: exit %d\n%s%s", code, out, errOut)
	}
}
