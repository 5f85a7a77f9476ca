package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline/watch"
	"github.com/musecheck/muse/sources/feeds/feedtest"
	"github.com/musecheck/muse/sources/notewriter/notewritertest"
)

func TestWatchJSONFromJetstream(t *testing.T) {
	data := isolate(t)
	texts := []string{
		"5G towers are spreading the coronavirus and the government is hiding it from everyone",
		"RT @someone: 5G towers are spreading the coronavirus and the government is hiding it from everyone",
		"Unemployment fell to 3.9% in April, the lowest rate since 2001, the Bureau of Labor Statistics said",
		"Die Regierung hat die Steuern für alle Familien im letzten Jahr um zehn Prozent erhöht",
		"Lovely walk by the river this morning with the dog",
		"5G towers are spreading the coronavirus and the government is hiding it from everyone!!",
	}
	var ev [][]byte
	for i, s := range texts {
		ev = append(ev, feedtest.PostEvent("did:plc:ewvi7nxzyoun6zhxrhs64oiz", fmt.Sprintf("3l3qo2vut%03d", i), 1725911162000000+int64(i)*1000, s))
	}
	srv := feedtest.NewJetstream(t, ev)
	out, errOut, code := run(t, "watch", "--json", "--bluesky", "--jetstream", srv.URL(), "--limit", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rows := watchRows(t, out)
	sizes, langs := map[float64]float64{}, map[any]bool{}
	for _, r := range rows {
		langs[r["language"]] = true
		id := r["cluster"].(float64)
		sizes[id] = max(sizes[id], r["size"].(float64))
		if r["score"] != nil || r["language"] == "" || r["first_seen"] == "0001-01-01T00:00:00Z" {
			t.Errorf("line %v", r)
		}
		if n, ok := r["score_note"]; ok && n != "not scored: no model configured" {
			t.Errorf("score note %q", n)
		}
	}
	if !langs["de"] || !langs["en"] {
		t.Errorf("languages %v, want the German post's detected", langs)
	}
	if len(sizes) != 3 || sizes[1] != 2 {
		t.Errorf("clusters and sizes %v after 4 posts, want 3 clusters, the first with the retweet: %s", sizes, out)
	}
	// A second run goes on from the cursor: the last two posts, one a copy
	// of the first.
	out, errOut, code = run(t, "watch", "--json", "--bluesky", "--jetstream", srv.URL(), "--limit", "2")
	if code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errOut)
	}
	var walk, grown bool
	for _, r := range watchRows(t, out) {
		walk = walk || r["cluster"] == 4.0
		grown = grown || r["cluster"] == 1.0 && r["size"] == 3.0
		if r["cluster"] == 2.0 || r["cluster"] == 3.0 {
			t.Errorf("the second run told of a cluster of the first that did not change: %v", r)
		}
	}
	if !walk || !grown {
		t.Errorf("second run, want the new post's cluster and the first cluster grown to 3: %s", out)
	}
	st, err := watch.Open(context.Background(), filepath.Join(data, "watch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, _ := st.PostsSeen(context.Background()); n != len(texts) {
		t.Errorf("%d posts kept over two runs, want %d", n, len(texts))
	}
}

func watchRows(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("not a JSON line: %q (%v)", l, err)
		}
		rows = append(rows, r)
	}
	return rows
}

func TestWatchUsage(t *testing.T) {
	isolate(t)
	const dead = "ws://127.0.0.1:1/subscribe" // loopback, should a flag be taken
	for _, args := range [][]string{
		{"watch", "--json"},
		{"watch", "--json", "--hashtag", "5G"},
		{"watch", "--json", "--mastodon", "https://mastodon.example", "--hashtag", "a", "--list", "1"},
		{"watch", "--bluesky"}, // no terminal, no --json
		{"watch", "--json", "--bluesky", "--threshold", "2"},
		// Flags a newsroom gets wrong are said, not taken for the default.
		{"watch", "--json", "--bluesky", "--jetstream", dead, "--threshold", "NaN"},
		{"watch", "--json", "--bluesky", "--jetstream", dead, "--per-hour", "-5"},
		{"watch", "--json", "--bluesky", "--jetstream", dead, "--batch-size", "0"},
		{"watch", "--json", "--bluesky", "--jetstream", dead, "--batch-size", "100000"},
		{"watch", "--json", "--bluesky", "--jetstream", dead, "--limit", "-3"},
		{"watch", "--json", "--bluesky", "--jetstream", dead, "--forget-after", "-1h"},
		{"watch", "--json", "--jetstream", dead, "--did", "alice.bsky.social"},
	} {
		_, errOut, code := run(t, args...)
		if code != 2 {
			t.Errorf("%q: exit %d (%s), want 2", args, code, errOut)
		}
	}
}

// A Mastodon hashtag through the streaming API, with the token from the
// environment: a loopback instance that speaks server-sent events.
func TestWatchMastodonHashtag(t *testing.T) {
	isolate(t)
	t.Setenv(MastodonTokenEnv, "tok-abc")
	status := func(id, text string) string {
		b, _ := json.Marshal(map[string]any{"id": id, "created_at": "2024-02-23T16:04:11.000Z", "language": "en",
			"url": "https://mastodon.example/@healthwatch/" + id, "uri": "https://mastodon.example/users/healthwatch/statuses/" + id,
			"content": "<p>" + text + "</p>", "spoiler_text": "", "reblog": nil, "media_attachments": []any{},
			"account": map[string]any{"acct": "healthwatch", "display_name": "Health Watch", "note": ""}})
		return string(b)
	}
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path != "/api/v1/streaming/hashtag" || r.URL.Query().Get("tag") != "5G" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ":thump\n")
		fmt.Fprintf(w, "event: update\ndata: %s\n\n", status("111985453312768311", "Doctors say 5G masts cause headaches and nosebleeds in children"))
		fmt.Fprint(w, "event: delete\ndata: 111985453312760000\n\n")
		fmt.Fprintf(w, "event: update\ndata: %s\n\n", status("111985453312768312", "Doctors say 5G masts cause headaches and nosebleeds in children!! #5G"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	out, errOut, code := run(t, "watch", "--json", "--mastodon", srv.URL, "--hashtag", "#5G", "--limit", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mu.Lock()
	if len(auth) == 0 || auth[0] != "Bearer tok-abc" {
		t.Errorf("sent Authorization %q", auth)
	}
	mu.Unlock()
	rows := watchRows(t, out)
	last := rows[len(rows)-1]
	if last["size"] != 2.0 || !strings.Contains(fmt.Sprint(last["post"]), "@healthwatch@127.0.0.1") {
		t.Errorf("the boostless copy did not join its cluster, or the handle is wrong: %s", out)
	}
	if strings.Contains(out+errOut, "tok-abc") {
		t.Error("the token was printed")
	}
}

// The posts people asked Community Notes for, from a loopback AI Note
// Writer API (OAuth 1.0a verified), triaged like any feed's; without the
// keys, a usage error naming them.
func TestWatchXEligible(t *testing.T) {
	isolate(t)
	_, errOut, code := run(t, "watch", "--json", "--x-eligible")
	if code != 2 || !strings.Contains(errOut, "X_API_KEY") {
		t.Errorf("no keys: exit %d: %s", code, errOut)
	}
	srv := notewritertest.New(t,
		notewritertest.Post{ID: "1901", Text: "Bikes are banned from Main Street from Monday, the council voted it in secret", Lang: "en",
			CreatedAt: time.Date(2024, 1, 30, 9, 0, 0, 0, time.UTC)},
		notewritertest.Post{ID: "1903", Text: "Die Regierung hat die Steuern für alle Familien um zehn Prozent erhöht", Lang: "de"})
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	out, errOut, code := run(t, "watch", "--json", "--x-eligible", "--x-lang", "all", "--limit", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	posts := map[any]any{}
	for _, r := range watchRows(t, out) {
		p, _ := r["post"].(map[string]any)
		posts[p["url"]] = r["language"]
	}
	if posts["https://x.com/i/status/1901"] != "en" || posts["https://x.com/i/status/1903"] != "de" {
		t.Errorf("rows %s", out)
	}
	if q := srv.Requests()[0]; q.Path != "/2/notes/search/posts_eligible_for_notes" || q.Query.Get("test_mode") != "true" ||
		q.Query.Get("post_selection") != "feed_lang:all" {
		t.Errorf("asked %+v", q)
	}
}
