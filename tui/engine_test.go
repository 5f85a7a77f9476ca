package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/fetch/fetchtest"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// The real engine, against loopback fakes: a SearXNG instance, news pages
// under their real hosts through the fetchtest proxy, and an
// OpenAI-compatible model that quotes what it is shown.

const (
	refuteReuters = "The city council has not banned bicycles from Main Street, a council spokesperson told Reuters, calling the posts false."
	refuteAP      = "No order banning bicycles was signed by the mayor, her office said, and the council agenda shows no such vote."
)

var enginePages = map[string]struct{ path, title, site, quote string }{
	"www.reuters.com": {"/world/us/bicycle-claim-false-2024", "Fact Check: no bicycle ban on Main Street", "Reuters", refuteReuters},
	"apnews.com":      {"/article/bicycle-ban-false-1a2b", "Mayor signed no bicycle order", "Associated Press", refuteAP},
}

func filler(site string) string {
	var b strings.Builder
	for i := range 6 {
		fmt.Fprintf(&b, "<p>%s reporters spoke to residents and cyclists about traffic on Main Street, where about %d people ride to work each day, "+
			"and to shop owners who described how parking and loading bays are shared along the bicycle lane and the bus stops (part %d).</p>\n", site, 1200+i*31, i+1)
	}
	return b.String()
}

func engineWorld(t *testing.T) (*setup.Config, *url.URL) {
	proxy := fetchtest.NewProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := enginePages[strings.ToLower(r.Host)]
		if !ok || r.URL.Path != p.path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s | %s</title>
<meta property="og:site_name" content="%s"><meta property="article:published_time" content="2024-01-20T09:30:00Z"></head>
<body><main><article><h1>%s</h1><time datetime="2024-01-20">2024-01-20</time><p>%s</p>
%s</article></main><footer>Terms</footer></body></html>`,
			html.EscapeString(p.title), p.site, p.site, html.EscapeString(p.title), html.EscapeString(p.quote), filler(p.site))
	}))
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var res []map[string]string
		for host, p := range enginePages {
			res = append(res, map[string]string{"url": "http://" + host + p.path, "title": p.title,
				"content": "bicycles Main Street council", "engine": "duckduckgo"})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"query": r.URL.Query().Get("q"), "results": res})
	}))
	t.Cleanup(searx.Close)
	idRE := regexp.MustCompile(`(?m)^\[S\d+\]`) // the correction prompt's source ids
	model := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		switch llmtest.SchemaName(req) {
		case "queries":
			return `{"queries":["Main Street bicycle ban","council bicycles fact check","mayor order bicycles"]}`, nil
		case "evidence":
			var ref []string
			for _, q := range []string{refuteReuters, refuteAP} {
				if strings.Contains(llmtest.LastUser(req), q) {
					ref = append(ref, q)
				}
			}
			b, _ := json.Marshal(map[string][]string{"refutes": ref, "context": {}})
			return string(b), nil
		}
		ids := idRE.FindAllString(llmtest.LastUser(req), 2)
		return "This post is false. The council has not banned bicycles from Main Street " + strings.Join(ids, "") + ".", nil
	})
	dir := t.TempDir()
	proxyURL := proxy
	return &setup.Config{OpenAIBaseURL: model.BaseURL, OpenAIAPIKey: "test-key", Model: "test-model",
		SearXNGURL: searx.URL, AllowPrivateAddresses: true, IgnoreRobots: true,
		DataDir: dir, ConfigDir: dir, OverridesFile: filepath.Join(dir, "overrides.toml")}, proxyURL
}

func TestRealEngine(t *testing.T) {
	cfg, proxy := engineWorld(t)
	eng, closeEngine, err := setup.NewFromConfig(context.Background(), cfg, pipeline.Options{PageProxy: proxy, Snapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	defer closeEngine()
	var c clip
	opts := testOptions(eng)
	opts.Post = pipeline.Post{Text: "BREAKING: the council banned all bicycles from Main Street! The mayor signed it in secret.",
		Handle: "@cityrumours", PostedAt: time.Date(2024, 2, 1, 12, 0, 0, 0, time.UTC)}
	opts.Start = true
	opts.Model = cfg.Model
	opts.NewCheck = eng.NewCheck
	opts.Clipboard = c.copy
	tm := teatest.NewTestModel(t, New(context.Background(), opts), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "correction ready")
	tm.Type("y")
	waitFor(t, tm, "copied the correction")
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	m := tm.FinalModel(t).(*Model)

	if !strings.HasPrefix(c.last(), "This post is false.") {
		t.Errorf("copied %q", c.last())
	}
	used := 0
	for _, s := range m.check.Sources {
		if s.Status == pipeline.StatusUsed {
			used++
		}
	}
	if used != 2 || len(m.check.Evidence) != 2 {
		t.Errorf("sources used %d, evidence %d: %+v", used, len(m.check.Evidence), m.check.Sources)
	}
	for _, s := range pipeline.Stages[1:] {
		if st := m.stage(s).State; st != pipeline.StateDone {
			t.Errorf("stage %s is %s (%s)", s, st, m.stage(s).Error)
		}
	}
	if m.check.Usage.PromptTokens == 0 || !strings.Contains(m.View(), "tokens") {
		t.Errorf("usage not shown: %+v\n%s", m.check.Usage, m.View())
	}
}

// burstRunner emits many snapshots, stage events and deltas at once.
type burstRunner struct{}

func (burstRunner) Run(ctx context.Context, c *pipeline.Check, from pipeline.Stage, events chan<- pipeline.Event) error {
	snap := func(n int) *pipeline.Check { s := c.Clone(); s.Hits = make([]pipeline.Hit, n); return s }
	events <- pipeline.Event{Kind: pipeline.EventStageStarted, Stage: pipeline.StageSearch, State: pipeline.StateRunning, Check: snap(0)}
	for i := 1; i <= 200; i++ {
		events <- pipeline.Event{Kind: pipeline.EventItem, Stage: pipeline.StageSearch, Check: snap(i)}
	}
	events <- pipeline.Event{Kind: pipeline.EventStageFinished, Stage: pipeline.StageSearch, State: pipeline.StateDone, Check: snap(200)}
	for range 100 {
		events <- pipeline.Event{Kind: pipeline.EventTokenDelta, Stage: pipeline.StageCorrection, Delta: "ab"}
	}
	events <- pipeline.Event{Kind: pipeline.EventDone, Check: snap(200)}
	return nil
}

// TestBridgeKeepsTheLatestSnapshot: while the UI lags, the bridge keeps
// only the newest snapshot between stage events and joins deltas, and
// still delivers every stage event, in order, and the end of the run.
func TestBridgeKeepsTheLatestSnapshot(t *testing.T) {
	out := make(chan tea.Msg) // unbuffered: nothing is read until the run is over
	go bridge(context.Background(), context.Background(), burstRunner{}, &pipeline.Check{}, pipeline.StageSearch, 1, out)
	time.Sleep(200 * time.Millisecond) // the UI is busy
	var kinds []string
	var items, hits int
	var deltas strings.Builder
	for msg := range out {
		switch msg := msg.(type) {
		case engineEventMsg:
			kinds = append(kinds, msg.ev.Kind)
			if msg.ev.Kind == pipeline.EventItem {
				items++
				hits = len(msg.ev.Check.Hits)
			}
			deltas.WriteString(msg.ev.Delta)
		case runDoneMsg:
			kinds = append(kinds, "run done")
		}
	}
	if items == 0 || items > 2 || hits != 200 {
		t.Errorf("%d item events delivered, the last with %d hits: want the latest snapshot only", items, hits)
	}
	if deltas.Len() != 200 {
		t.Errorf("deltas %d bytes, want all 200", deltas.Len())
	}
	got := strings.Join(kinds, ",")
	if !strings.HasPrefix(got, "stage_started,") || !strings.Contains(got, "stage_finished") || !strings.HasSuffix(got, "done,run done") {
		t.Errorf("events delivered: %s", got)
	}
}

// Joined deltas keep the newest preview of the correction (Event.Text:
// ids already read as URLs) with the joined token text.
func TestCoalesceKeepsTheNewestPreview(t *testing.T) {
	q := coalesce(nil, pipeline.Event{Kind: pipeline.EventTokenDelta, Delta: "false [S", Text: "false [S"})
	q = coalesce(q, pipeline.Event{Kind: pipeline.EventTokenDelta, Delta: "1].", Text: "false (https://example.org/a)."})
	if len(q) != 1 || q[0].Delta != "false [S1]." || q[0].Text != "false (https://example.org/a)." {
		t.Errorf("coalesced %+v", q)
	}
}
