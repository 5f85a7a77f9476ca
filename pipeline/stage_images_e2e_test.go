package pipeline_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/musecheck/muse/pipeline"

	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/images/imagetest"
	"github.com/musecheck/muse/sources/llm/llmtest"
	"github.com/musecheck/muse/sources/posts"
	openai "github.com/sashabaranov/go-openai"
)

// visionEnv is the e2e world with a model server that also describes
// images, recording what each image request carried.
type visionEnv struct {
	*testworld.Env
	mu        sync.Mutex
	imageReqs []openai.ChatCompletionRequest
	noVision  bool
}

func newVisionEnv(t *testing.T) *visionEnv {
	env := &visionEnv{Env: testworld.New(t, nil)}
	env.Model.QueriesAnswer = `{"queries":["Springfield bicycle ban Main Street","Springfield council bicycles fact check",` +
		`"Springfield mayor order bicycles","Springfield council order 2024-7","Main Street bicycles order document"]}`
	srv := llmtest.NewReplyServer(t, func(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
		if llmtest.SchemaName(req) == "image_description" {
			env.mu.Lock()
			env.imageReqs = append(env.imageReqs, req)
			env.mu.Unlock()
			if env.noVision {
				return llmtest.Reply{}, &llmtest.Error{Status: 400, Type: "invalid_request_error", Code: "",
					Message: "Invalid content type. image_url is only supported by certain models."}
			}
			return llmtest.Reply{Text: `{"description":` + jsonString(pipeline.OrderDescription) + `}`}, nil
		}
		return env.Model.Handle(req)
	})
	env.Cfg.OpenAIBaseURL = srv.BaseURL
	env.LLM = srv
	return env
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestImagePostEndToEnd(t *testing.T) {
	env := newVisionEnv(t)
	dir := t.TempDir()
	good := pipeline.WriteFile(t, dir, "order.png", imagetest.PNG(t, imagetest.Scene(0, 320, 240)))
	bad := pipeline.WriteFile(t, dir, "broken.png", []byte("<html>not an image</html>"))
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(pipeline.Post{Text: testworld.Post, Author: "City Rumours", PostedAt: testworld.Cutoff, Images: []string{good, bad},
		AltTexts: map[string]string{good: "council order"}}, testworld.Cutoff)
	if err := e.Run(context.Background(), c, pipeline.StageImages, nil); err != nil {
		t.Fatal(err)
	}
	if len(c.Images) != 2 {
		t.Fatalf("images %+v", c.Images)
	}
	im := c.Images[0]
	if im.Description != pipeline.OrderDescription || !strings.HasPrefix(im.Origin, pipeline.ImageOriginVision) ||
		!strings.Contains(im.Origin, pipeline.ImageOriginAlt) || im.Format != "png" || im.Width != 320 || im.PHash == "" || im.Error != "" {
		t.Errorf("good image %+v", im)
	}
	if c.Images[1].Error == "" || !strings.Contains(c.Images[1].Error, "not a supported image") || c.Images[1].Description != "" {
		t.Errorf("bad image %+v", c.Images[1])
	}
	if !pipeline.HasEvent(c, pipeline.EventWarning, "broken.png") {
		t.Error("no warning for the bad image")
	}
	// The vision request carried the image as a data: URL, and the alt text.
	if len(env.imageReqs) != 1 {
		t.Fatalf("%d image requests, want 1 (the bad image is not sent)", len(env.imageReqs))
	}
	urls := llmtest.Images(env.imageReqs[0])
	if len(urls) != 1 || !strings.HasPrefix(urls[0], "data:image/png;base64,") {
		t.Errorf("image parts %.60q", urls)
	}
	if !strings.Contains(llmtest.AllText(env.imageReqs[0]), "council order") {
		t.Error("alt text not in the vision prompt")
	}
	// Five queries, as the paper asks for posts with images, and the
	// description in every prompt that carries the post.
	if len(c.Queries) != 5 {
		t.Errorf("%d queries, want 5: %+v", len(c.Queries), c.Queries)
	}
	var carried []string
	for _, call := range env.LLM.ChatCalls() {
		name := llmtest.SchemaName(*call.Chat)
		if name == "image_description" {
			continue
		}
		if name == "queries" && !strings.Contains(llmtest.AllText(*call.Chat), "5 different web search queries") {
			t.Errorf("queries prompt does not ask for 5: %.300s", llmtest.LastUser(*call.Chat))
		}
		if !strings.Contains(llmtest.AllText(*call.Chat), "Council Order 2024-7") {
			t.Errorf("%s prompt lacks the image description", cmp.Or(name, "correction"))
		}
		carried = append(carried, cmp.Or(name, "correction"))
	}
	if !strings.Contains(strings.Join(carried, ","), "evidence") || !strings.Contains(strings.Join(carried, ","), "correction") {
		t.Errorf("prompts seen %v", carried)
	}
	if !strings.HasPrefix(c.Correction.Text, "This post is") {
		t.Errorf("correction %q", c.Correction.Text)
	}
	if c.Usage.ByStage[string(pipeline.StageImages)].LLMCalls != 1 {
		t.Errorf("image usage %+v", c.Usage.ByStage)
	}
}

func TestVisionRefusedFallsBack(t *testing.T) {
	env := newVisionEnv(t)
	env.noVision = true
	dir := t.TempDir()
	a := pipeline.WriteFile(t, dir, "a.png", imagetest.PNG(t, imagetest.Scene(0, 200, 150)))
	b := pipeline.WriteFile(t, dir, "b.png", imagetest.PNG(t, imagetest.Scene(1, 200, 150)))
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, pipeline.Options{PageProxy: env.Proxy, ImageParallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(pipeline.Post{Text: testworld.Post, PostedAt: testworld.Cutoff, Images: []string{a, b},
		AltTexts: map[string]string{a: "A signed order banning bicycles"}}, testworld.Cutoff)
	if err := e.Run(context.Background(), c, pipeline.StageImages, nil); err != nil {
		t.Fatal(err)
	}
	if len(env.imageReqs) != 1 {
		t.Errorf("%d vision calls: once refused, the model is not asked again", len(env.imageReqs))
	}
	if d := c.Images[0].Description; !strings.Contains(d, "not seen by a model") || !strings.Contains(d, "A signed order banning bicycles") ||
		c.Images[0].Origin != pipeline.ImageOriginAlt {
		t.Errorf("fallback description %q (%s)", d, c.Images[0].Origin)
	}
	n := 0
	for _, ev := range c.Events {
		if ev.Kind == pipeline.EventWarning && strings.Contains(ev.Message, "does not accept images") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d warnings about the model, want 1", n)
	}
	if c.Images[1].Description != "" || c.Images[1].Error == "" {
		t.Errorf("image with nothing known: %+v", c.Images[1])
	}
}

func TestCheckPostByURL(t *testing.T) {
	env := newVisionEnv(t)
	env.Cfg.SearXNGURL = "" // only the archive: this test is about the post
	srv := platformServer(t, imagetest.PNG(t, imagetest.Scene(0, 400, 300)))
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, pipeline.Options{LLMRetryDelay: 1,
		Posts: posts.Options{BlueskyURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	for _, tc := range []struct{ url, platform, handle string }{
		{"https://bsky.app/profile/cityrumours.bsky.social/post/3kmbikeban22x", posts.Bluesky, "@cityrumours.bsky.social"},
		{srv.URL + "/@cityrumours/112004511982233400", posts.Mastodon, "@cityrumours@"},
	} {
		p, err := e.PostFromURL(context.Background(), tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.platform, err)
		}
		if p.Platform != tc.platform || p.Author != "City Rumours" || !strings.HasPrefix(p.Handle, tc.handle) ||
			!strings.Contains(p.Text, "banned all bicycles") || p.PostedAt.IsZero() || len(p.Images) != 1 {
			t.Fatalf("%s: post %+v", tc.platform, p)
		}
		c := e.NewCheck(p, p.PostedAt)
		if err := e.Run(context.Background(), c, pipeline.StageImages, nil); err != nil {
			t.Fatalf("%s: %v", tc.platform, err)
		}
		if im := c.Images[0]; im.AltText != "A signed council order banning bicycles on Main Street" ||
			im.Description != pipeline.OrderDescription || im.Format != "png" || len(c.Queries) != 5 {
			t.Errorf("%s: image %+v, %d queries", tc.platform, im, len(c.Queries))
		}
	}
	// A platform's failure is one line saying what went wrong.
	_, err = e.PostFromURL(context.Background(), srv.URL+"/@cityrumours/404")
	if err == nil || !errors.Is(err, posts.ErrNotFound) || strings.Contains(err.Error(), "\n") {
		t.Errorf("deleted post: %v", err)
	}
}

// platformServer is a loopback Bluesky AppView and Mastodon instance that
// also serves the post's image.
func platformServer(t *testing.T, img []byte) *httptest.Server {
	var srv *httptest.Server
	file := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Error(err)
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write(bytes.ReplaceAll(b, []byte("{{BASE}}"), []byte(srv.URL)))
		}
	}
	routes := map[string]http.HandlerFunc{
		"/xrpc/com.atproto.identity.resolveHandle": file("bsky_resolve_image.json"),
		"/xrpc/app.bsky.feed.getPostThread":        file("bsky_thread_image.json"),
		"/xrpc/app.bsky.actor.getProfile":          file("bsky_profile_image.json"),
		"/api/v1/statuses/112004511982233400":      file("mastodon_status_image.json"),
		"/api/v1/statuses/404":                     func(w http.ResponseWriter, r *http.Request) { http.Error(w, `{"error":"Record not found"}`, 404) },
	}
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "order.png") {
			w.Header().Set("Content-Type", "image/png")
			w.Write(img)
			return
		}
		if h, ok := routes[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}
