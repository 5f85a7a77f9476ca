package pipeline_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"

	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

func TestEndToEnd(t *testing.T) {
	env := testworld.New(t, nil)
	env.Model.FailFirst[testworld.QuoteR1] = true // Reuters' first evidence call is rate-limited, then retried
	c, err := env.Check(t, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]pipeline.Status{
		"www.reuters.com": pipeline.StatusUsed, "apnews.com": pipeline.StatusUsed,
		"www.rumours.example": pipeline.StatusExcludedRating, "www.latenews.example": pipeline.StatusExcludedCutoff,
		"www.undated.example": pipeline.StatusUndated, "www.shortnews.example": pipeline.StatusTooShort,
		"www.weather.example": pipeline.StatusIrrelevant, "www.gone.example": pipeline.StatusFetchFailed,
	}
	for host, st := range want {
		s := c.SourceByURL(testworld.PageURL(host, env.Pages[host]))
		if s == nil {
			t.Errorf("%s: no source", host)
			continue
		}
		if s.Status != st {
			t.Errorf("%s: status %s (%s), want %s", host, s.Status, s.Reason, st)
		}
	}
	reuters := c.SourceByURL(testworld.PageURL("www.reuters.com", env.Pages["www.reuters.com"]))
	if reuters.Tier != pipeline.TierHigh || reuters.Publisher != "Reuters" || reuters.Published.IsZero() || reuters.Words < 100 {
		t.Errorf("reuters source %+v", reuters)
	}
	if c.Sources[0].Tier != pipeline.TierHigh || c.Sources[1].Tier != pipeline.TierHigh {
		t.Errorf("not ranked by tier: %s, %s", c.Sources[0].URL, c.Sources[1].URL)
	}
	refuting := map[string]bool{}
	for _, e := range c.Evidence {
		if !e.Verified {
			t.Errorf("unverified quote from a faithful model: %+v", e)
		}
		if e.Kind == pipeline.KindRefutes {
			refuting[e.SourceURL] = true
		}
	}
	if len(refuting) != 2 {
		t.Errorf("refuting pages %v", refuting)
	}
	if !strings.HasPrefix(c.Correction.Text, "This post is false") || len(c.Correction.URLs) != 2 || len(c.Correction.Warnings) != 0 {
		t.Errorf("correction %+v", c.Correction)
	}
	for _, u := range c.Correction.URLs {
		if !refuting[u] && c.SourceByURL(u) == nil {
			t.Errorf("correction cites %s, not an evidence page", u)
		}
	}

	// What went on the wire.
	var schemas []string
	stream := 0
	for _, call := range env.LLM.ChatCalls() {
		wire := call.Wire()
		if _, ok := wire["temperature"]; !ok {
			t.Errorf("temperature missing from %s request", llmtest.SchemaName(*call.Chat))
		}
		if call.Header.Get("Authorization") != "Bearer sk-test" {
			t.Error("API key not sent")
		}
		if call.Chat.Stream {
			stream++
		}
		schemas = append(schemas, llmtest.SchemaName(*call.Chat))
		if llmtest.SchemaName(*call.Chat) == "evidence" {
			arts := testworld.Articles(llmtest.LastUser(*call.Chat))
			if len(arts) == 0 {
				t.Error("evidence prompt without an article")
			}
			for _, art := range arts {
				if len(art) > 4*pipeline.DefaultOptions().EvidenceTokens+400 {
					t.Errorf("evidence prompt carries %d chars of one article", len(art))
				}
			}
		}
	}
	if stream != 1 || strings.Count(strings.Join(schemas, ","), "queries") != 1 {
		t.Errorf("calls: %v, %d streamed", schemas, stream)
	}
	// The six pages fit one evidence call, rate-limited once and retried.
	if env.Model.EvidenceCalls != 2 || env.Model.PagesRead != 12 || c.Usage.ByStage[string(pipeline.StageEvidence)].LLMCalls != 1 ||
		c.Usage.LLMCalls != 3 || c.Usage.PromptTokens == 0 {
		t.Errorf("usage %+v after %d evidence calls over %d pages", c.Usage, env.Model.EvidenceCalls, env.Model.PagesRead)
	}

	// Pages read were archived and can be found again.
	st, err := archive.Open(context.Background(), env.Cfg.ArchivePath())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := st.Count(context.Background()); err != nil || n < 6 {
		t.Errorf("archive holds %d pages (%v)", n, err)
	}
}

func TestEndToEndSecondPass(t *testing.T) {
	// The first five results refute nothing; the wider pass reaches AP.
	env := testworld.New(t, []string{"www.bbc.co.uk", "www.npr.org", "www.weather.example", "www.shortnews.example",
		"www.cityherald.example", "apnews.com", "www.rumours.example"})
	c, err := env.Check(t, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	ap := c.SourceByURL(testworld.PageURL("apnews.com", env.Pages["apnews.com"]))
	if ap == nil || ap.Status != pipeline.StatusUsed {
		t.Fatalf("AP after the second pass: %+v", ap)
	}
	var pass2 []string
	for _, h := range c.Hits {
		if h.Pass == 2 {
			pass2 = append(pass2, h.URL)
		}
	}
	if len(pass2) != 2 {
		t.Errorf("second-pass hits %v", pass2)
	}
	if !strings.Contains(c.Correction.Text, ap.URL) {
		t.Errorf("correction %q", c.Correction.Text)
	}
}

func TestEndToEndGuards(t *testing.T) {
	env := testworld.New(t, nil)
	env.Model.InventQuote, env.Model.InventURL = true, true
	c, err := env.Check(t, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	var invented int
	for _, e := range c.Evidence {
		if strings.Contains(e.Quote, "prankster") {
			invented++
			if e.Verified || e.Included {
				t.Errorf("invented quote passed the guard: %+v", e)
			}
		}
	}
	if invented == 0 {
		t.Error("invented quote not recorded")
	}
	if strings.Contains(c.Correction.Text, "springfield-truth") || len(c.Correction.Warnings) != 1 ||
		!strings.Contains(c.Correction.Warnings[0], "hxxps://www[.]springfield-truth[.]example/ban-exposed") {
		t.Errorf("invented URL: %+v", c.Correction)
	}
}

func TestEndToEndBadModel(t *testing.T) {
	t.Run("cut queries JSON is repaired", func(t *testing.T) {
		env := testworld.New(t, nil)
		env.Model.QueriesAnswer = `{"queries": ["Springfield bicycle ban", ` // cut JSON
		c, err := env.Check(t, env.Options())
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Queries) != 1 || c.Queries[0].Origin != pipeline.OriginModel || c.Queries[0].Text != "Springfield bicycle ban" {
			t.Fatalf("queries %+v", c.Queries)
		}
	})
	t.Run("malformed queries", func(t *testing.T) {
		env := testworld.New(t, nil)
		env.Model.QueriesAnswer = `Sure! I would search for the bicycle story.`
		c, err := env.Check(t, env.Options())
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Queries) != 1 || c.Queries[0].Origin != pipeline.OriginFallback {
			t.Fatalf("queries %+v", c.Queries)
		}
	})
	t.Run("not informative", func(t *testing.T) {
		env := testworld.New(t, nil)
		env.Model.QueriesAnswer = `{"queries": []}`
		c, err := env.Check(t, env.Options())
		if err != nil || len(c.Queries) != 1 || c.Queries[0].Origin != pipeline.OriginFallback {
			t.Fatalf("%v %+v", err, c.Queries)
		}
	})
	t.Run("cut stream", func(t *testing.T) {
		env := testworld.New(t, nil)
		env.Model.CorrectionReply = &llmtest.Reply{CutAfter: 3}
		c, err := env.Check(t, env.Options())
		if err == nil || len(c.Correction.Warnings) == 0 || len(c.Evidence) == 0 ||
			!strings.Contains(c.Correction.Warnings[len(c.Correction.Warnings)-1], "stopped before it was complete") {
			t.Fatalf("cut stream: %v %+v", err, c.Correction)
		}
	})
	t.Run("refusal", func(t *testing.T) {
		env := testworld.New(t, nil)
		env.Model.CorrectionReply = &llmtest.Reply{Refusal: "I'm sorry, I can't help with that."}
		c, err := env.Check(t, env.Options())
		if err == nil || !errors.Is(err, pipeline.ErrBadAnswer) {
			t.Fatalf("refusal: %v", err)
		}
		if len(c.Correction.Warnings) == 0 || !strings.Contains(c.Correction.Warnings[len(c.Correction.Warnings)-1], "declined") {
			t.Errorf("warnings %q", c.Correction.Warnings)
		}
	})
	t.Run("50,000-character post", func(t *testing.T) {
		env := testworld.New(t, nil)
		e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, env.Options())
		if err != nil {
			t.Fatal(err)
		}
		defer closeFn()
		long := strings.Repeat(testworld.Post+" ", 50000/len(testworld.Post)+1)[:50000]
		c := e.NewCheck(pipeline.Post{Text: long, PostedAt: testworld.Cutoff}, time.Time{})
		if err := e.Run(context.Background(), c, pipeline.StageImages, nil); err != nil {
			t.Fatal(err)
		}
		for _, call := range env.LLM.ChatCalls() {
			// Beside the pages themselves, each cut to its own budget.
			n := len(llmtest.AllText(*call.Chat)) - len(strings.Join(testworld.Articles(llmtest.LastUser(*call.Chat)), ""))
			if n > 12000 {
				t.Errorf("%s prompt of %d characters", llmtest.SchemaName(*call.Chat), n)
			}
		}
		if len(c.Correction.URLs) == 0 {
			t.Errorf("correction %+v", c.Correction)
		}
	})
	t.Run("bad key", func(t *testing.T) {
		env := testworld.New(t, nil, llmtest.WithAPIKey("sk-other"))
		_, err := env.Check(t, env.Options())
		if err == nil || !strings.Contains(err.Error(), "queries") {
			t.Fatalf("bad key: %v", err)
		}
	})
}

func TestEndToEndNoLLM(t *testing.T) {
	env := testworld.New(t, nil)
	env.Cfg.OpenAIBaseURL, env.Cfg.OpenAIAPIKey = "", ""
	o := env.Options()
	o.NoLLM = true
	c, err := env.Check(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(env.LLM.Calls()) != 0 {
		t.Error("the model was called in --no-llm mode")
	}
	if !strings.HasPrefix(c.Correction.Text, pipeline.DigestHeading) || len(c.Correction.URLs) == 0 {
		t.Fatalf("digest %q", c.Correction.Text)
	}
	for _, bad := range []string{"false", "true", "misleading"} {
		if strings.Contains(strings.ToLower(strings.SplitN(c.Correction.Text, "\n", 2)[0]), bad) {
			t.Errorf("digest heading gives a verdict: %q", bad)
		}
	}
}

func TestNoModelConfigured(t *testing.T) {
	dir := t.TempDir()
	cfg := &setup.Config{DataDir: dir, OllamaURL: "http://127.0.0.1:1"} // nothing listens on port 1
	_, _, err := setup.NewFromConfig(context.Background(), cfg, pipeline.Options{})
	if !errors.Is(err, pipeline.ErrNoModel) || !strings.Contains(err.Error(), "OPENAI_API_KEY") || !strings.Contains(err.Error(), "--no-llm") {
		t.Fatalf("err %v", err)
	}
	// The hint once carried ErrNoModel's words too, so muse printed
	// "no language model configured: no language model configured: set …".
	if n := strings.Count(err.Error(), pipeline.ErrNoModel.Error()); n != 1 {
		t.Errorf("%q said %d times in %q", pipeline.ErrNoModel, n, err)
	}
	bad := &setup.Config{DataDir: dir, OpenAIBaseURL: "http://127.0.0.1:1/v1"} // a server but no model named
	if _, _, err := setup.NewFromConfig(context.Background(), bad, pipeline.Options{}); !errors.Is(err, pipeline.ErrNoModel) ||
		strings.Count(err.Error(), pipeline.ErrNoModel.Error()) != 1 || !strings.Contains(err.Error(), "MUSE_MODEL") {
		t.Errorf("err %v", err)
	}
	e, closeFn, err := setup.NewFromConfig(context.Background(), cfg, pipeline.Options{NoLLM: true})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if !e.NoLLM() {
		t.Fatal("not in extractive mode")
	}
	if _, err := os.Stat(filepath.Join(dir, "archive.db")); err != nil {
		t.Errorf("archive not created: %v", err)
	}
}

func TestEndToEndEmbeddingRelevance(t *testing.T) {
	// A two-topic embedder: how much a text is about the story, how much
	// about the weather. Cosine between post and page decides relevance.
	topic := func(texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, s := range texts {
			l := strings.ToLower(s)
			story := float32(strings.Count(l, "bicycle") + strings.Count(l, "main street") + strings.Count(l, "springfield"))
			weather := float32(strings.Count(l, "sunny") + strings.Count(l, "weather") + strings.Count(l, "temperature"))
			out[i] = []float32{story, weather + 0.01}
		}
		return out, nil
	}
	env := testworld.New(t, nil, llmtest.WithEmbedder(topic))
	env.Cfg.EmbeddingModel = "test-embed"
	c, err := env.Check(t, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	weather := c.SourceByURL(testworld.PageURL("www.weather.example", env.Pages["www.weather.example"]))
	reuters := c.SourceByURL(testworld.PageURL("www.reuters.com", env.Pages["www.reuters.com"]))
	if weather.Status != pipeline.StatusIrrelevant || !strings.Contains(weather.Reason, "similarity") || reuters.Relevance < 0.9 {
		t.Fatalf("weather %+v / reuters relevance %.2f", weather.Status, reuters.Relevance)
	}
	embeds := 0
	for _, call := range env.LLM.Calls() {
		if strings.HasSuffix(call.Path, "/embeddings") {
			embeds++
			if call.Wire()["model"] != "test-embed" {
				t.Errorf("embedding model %v", call.Wire()["model"])
			}
		}
	}
	if embeds != 1 || c.Usage.ByStage[string(pipeline.StageSources)].LLMCalls != 1 {
		t.Errorf("%d embedding calls, usage %+v", embeds, c.Usage.ByStage)
	}
}

func TestEndToEndCancelKeepsWhatWasFound(t *testing.T) {
	env := testworld.New(t, nil, llmtest.WithDelay(300*time.Millisecond))
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(pipeline.Post{Text: testworld.Post, PostedAt: testworld.Cutoff}, time.Time{})
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan pipeline.Event)
	go func() {
		for ev := range events {
			if ev.Kind == pipeline.EventStageStarted && ev.Stage == pipeline.StageEvidence {
				cancel() // the person presses Esc while quotes are read
			}
		}
	}()
	err = e.Run(ctx, c, pipeline.StageImages, events)
	close(events)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if len(c.Queries) != 3 || len(c.Hits) == 0 || c.SourceByURL(testworld.PageURL("www.reuters.com", env.Pages["www.reuters.com"])).Words == 0 {
		t.Fatalf("lost what was found: %d queries, %d hits", len(c.Queries), len(c.Hits))
	}
	if c.Correction.Text != "" {
		t.Errorf("a correction after cancel: %q", c.Correction.Text)
	}
}

func TestEndToEndEarlyStop(t *testing.T) {
	env := testworld.New(t, nil)
	o := env.Options()
	// One page at a time makes the order observable: the two high-tier pages
	// go first, both refute, and nothing else is read. (With more in
	// parallel a freed slot is refilled at once, so a third page may be in
	// flight when the second refutation arrives; it is then cancelled.)
	o.EvidenceParallel = 1
	c, err := env.Check(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if env.Model.EvidenceCalls != 2 {
		t.Errorf("%d evidence calls, want 2", env.Model.EvidenceCalls)
	}
	for _, host := range []string{"www.bbc.co.uk", "www.npr.org", "www.cityherald.example"} {
		s := c.SourceByURL(testworld.PageURL(host, env.Pages[host]))
		if s.Status != pipeline.StatusNotNeeded || s.SentChars != 0 {
			t.Errorf("%s: %s (%s), %d chars sent", host, s.Status, s.Reason, s.SentChars)
		}
	}
}

func TestPostFromURL(t *testing.T) {
	env := testworld.New(t, nil)
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	u := testworld.PageURL("www.rumours.example", env.Pages["www.rumours.example"])
	p, err := e.PostFromURL(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Text, "Springfield BANS bicycles!") || p.URL != u || p.PostedAt.Format(time.DateOnly) != "2024-01-25" {
		t.Fatalf("post %+v", p)
	}
	if _, err := e.PostFromURL(context.Background(), "http://www.gone.example/nothing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("missing page: %v", err)
	}
	if _, err := e.PostFromURL(context.Background(), "file:///etc/passwd"); err == nil {
		t.Fatal("file URL accepted")
	}
}

// ReadPost is the one rule for a post given by its URL (muse check, the
// app, muse batch): read from the page, with what was typed laid over it.
func TestReadPostLaysTypedOverRead(t *testing.T) {
	env := testworld.New(t, nil)
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	u := testworld.PageURL("www.rumours.example", env.Pages["www.rumours.example"])
	typed := pipeline.Post{URL: u, Author: "Typed Author", Language: "en", Images: []string{"shot.png"},
		PostedAt: time.Date(2024, 1, 30, 8, 0, 0, 0, time.UTC)}
	p, err := e.ReadPost(context.Background(), typed)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Text, "Springfield BANS bicycles!") || p.URL != u || p.Author != "Typed Author" ||
		p.Language != "en" || !p.PostedAt.Equal(typed.PostedAt) || len(p.Images) == 0 || p.Images[len(p.Images)-1] != "shot.png" {
		t.Errorf("read post %+v", p)
	}
	// Text typed with the URL is the post: nothing is read.
	withText := pipeline.Post{URL: "http://www.gone.example/nothing", Text: "the typed text"}
	if p, err := e.ReadPost(context.Background(), withText); err != nil || p.Text != "the typed text" {
		t.Errorf("typed text with a URL: %+v, %v", p, err)
	}
	if _, err := e.ReadPost(context.Background(), pipeline.Post{URL: "http://www.gone.example/nothing"}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a URL that cannot be read: %v", err)
	}
}

func TestPostFromArg(t *testing.T) {
	for arg, want := range map[string]pipeline.Post{
		" https://bsky.app/profile/a/post/1 ": {URL: "https://bsky.app/profile/a/post/1"},
		"HTTP://example.org/x":                {URL: "HTTP://example.org/x"},
		"https://example.org/x is fake":       {Text: "https://example.org/x is fake"},
		"5G spreads the virus":                {Text: "5G spreads the virus"},
		"ftp://example.org/x":                 {Text: "ftp://example.org/x"},
	} {
		if got := pipeline.PostFromArg(arg); got.Text != want.Text || got.URL != want.URL {
			t.Errorf("PostFromArg(%q) = %+v, want %+v", arg, got, want)
		}
	}
}

func TestTypedOver(t *testing.T) {
	read := pipeline.Post{Text: "read text", Author: "Platform Name", Handle: "@read", Platform: "Bluesky",
		Images: []string{"https://cdn/1.jpg"}, AltTexts: map[string]string{"https://cdn/1.jpg": "alt"},
		PostedAt: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), Language: "es"}
	p := pipeline.TypedOver(read, pipeline.Post{Handle: " @typed ", Images: []string{"local.png"}})
	if p.Text != "read text" || p.Author != "Platform Name" || p.Handle != "@typed" || p.Platform != "Bluesky" ||
		p.Language != "es" || !p.PostedAt.Equal(read.PostedAt) || strings.Join(p.Images, " ") != "https://cdn/1.jpg local.png" ||
		p.AltTexts["https://cdn/1.jpg"] != "alt" {
		t.Errorf("TypedOver = %+v", p)
	}
	if len(read.Images) != 1 {
		t.Error("TypedOver changed the read post's images")
	}
}
