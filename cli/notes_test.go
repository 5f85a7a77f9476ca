package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestNotesSubmit: through the binary, a case's note is evaluated and
// submitted in test mode to a loopback API, signed; a note failing the
// pre-flight is never sent; the 403 of an account not enrolled is said in
// words with the export as the way out; the keys are never printed.
func TestNotesSubmit(t *testing.T) {
	dataDir := isolate(t)
	const page = "http://www.reuters.com/world/us/springfield-fact-check"
	c := noteCase("20240201-x", page)
	c.Post.URL = "https://x.com/jodoe/status/1900000000000000001"
	saveCase(t, dataDir, c)
	bare := noteCase("20240201-nourl", page)
	bare.Evidence = nil // nothing refutes it: no note
	saveCase(t, dataDir, bare)

	var mu sync.Mutex
	var bodies []map[string]any
	enrolled := true
	x := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if !strings.HasPrefix(r.Header.Get("Authorization"), "OAuth ") || !strings.Contains(r.Header.Get("Authorization"), `oauth_consumer_key="app-key"`) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if !enrolled {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"title":"Client Forbidden","reason":"client-not-enrolled","type":"https://api.twitter.com/2/problems/client-forbidden"}`))
			return
		}
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		bodies = append(bodies, b)
		if r.URL.Path == "/2/evaluate_note" {
			w.Write([]byte(`{"data":{"claim_opinion_score":0.64}}`))
			return
		}
		w.Write([]byte(`{"data":{"note_id":"1933"}}`))
	}))
	defer x.Close()
	env := []string{"MUSE_X_API_URL=" + x.URL, "X_API_KEY=app-key", "X_API_KEY_SECRET=app-secret-9f8e7d",
		"X_ACCESS_TOKEN=1-token-5a4b3c", "X_ACCESS_TOKEN_SECRET=token-secret-1a2b3c"}

	out, errOut, code := muse(t, "", env, "notes", "evaluate", "20240201-x")
	if code != 0 || out != "ClaimOpinion score 0.64 on post 1900000000000000001\n" {
		t.Errorf("evaluate: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = muse(t, "", env, "notes", "submit", "20240201-x")
	if code != 0 || out != "submitted in test mode: note 1933 on post 1900000000000000001\n" {
		t.Errorf("submit: exit %d\n%s%s", code, out, errOut)
	}
	mu.Lock()
	if len(bodies) != 2 || bodies[1]["test_mode"] != true || bodies[1]["post_id"] != "1900000000000000001" {
		t.Errorf("bodies: %v", bodies)
	}
	mu.Unlock()
	log, _, _ := muse(t, "", nil, "cases", "log", "20240201-x")
	if !strings.Contains(log, "note submitted to X in test mode as note 1933") {
		t.Errorf("the trail lacks the submission:\n%s", log)
	}

	_, errOut, code = muse(t, "", env, "notes", "submit", "20240201-nourl", "--post", "1900")
	if code == 0 || !strings.Contains(errOut, "NOT ENOUGH EVIDENCE") || !strings.Contains(errOut, "nothing was sent to X") {
		t.Errorf("a note that fails the pre-flight: exit %d\n%s", code, errOut)
	}
	mu.Lock()
	if len(bodies) != 2 {
		t.Errorf("a note failing the pre-flight was sent: %v", bodies[2:])
	}
	enrolled = false
	mu.Unlock()
	_, errOut, code = muse(t, "", env, "notes", "submit", "20240201-x")
	if code == 0 || !strings.Contains(errOut, "not signed up for the AI Note Writer API") || !strings.Contains(errOut, "--format note") {
		t.Errorf("403 client-not-enrolled: exit %d\n%s", code, errOut)
	}
	for _, secret := range []string{"app-secret-9f8e7d", "1-token-5a4b3c", "token-secret-1a2b3c"} {
		if strings.Contains(errOut, secret) {
			t.Errorf("stderr holds a key:\n%s", errOut)
		}
	}
	_, errOut, code = muse(t, "", nil, "notes", "submit", "20240201-x")
	if code != 2 || !strings.Contains(errOut, "X_API_KEY") {
		t.Errorf("without keys: exit %d\n%s", code, errOut)
	}
}
