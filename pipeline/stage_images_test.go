package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/images"
	"github.com/musecheck/muse/sources/images/imagetest"
	"github.com/musecheck/muse/sources/llm/llmtest"
	"github.com/musecheck/muse/sources/posts"
	"github.com/musecheck/muse/sources/search"
)

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const orderDescription = "A screenshot of a document titled \"Springfield City Council Order 2024-7\" that claims to ban bicycles on Main Street."

// visionEnv is the e2e world with a model server that also describes
// images, recording what each image request carried.
type visionEnv struct {
	*e2eEnv
	mu        sync.Mutex
	imageReqs []openai.ChatCompletionRequest
	noVision  bool
}

func newVisionEnv(t *testing.T) *visionEnv {
	env := &visionEnv{e2eEnv: newE2E(t, nil)}
	env.model.queriesAnswer = `{"queries":["Springfield bicycle ban Main Street","Springfield council bicycles fact check",` +
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
			return llmtest.Reply{Text: `{"description":` + jsonString(orderDescription) + `}`}, nil
		}
		return env.model.handle(req)
	})
	env.cfg.OpenAIBaseURL = srv.BaseURL
	env.llm = srv
	return env
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestImagePostEndToEnd(t *testing.T) {
	env := newVisionEnv(t)
	dir := t.TempDir()
	good := writeFile(t, dir, "order.png", imagetest.PNG(t, imagetest.Scene(0, 320, 240)))
	bad := writeFile(t, dir, "broken.png", []byte("<html>not an image</html>"))
	e, closeFn, err := NewFromConfig(context.Background(), env.cfg, env.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(Post{Text: e2ePost, Author: "City Rumours", PostedAt: e2eCutoff, Images: []string{good, bad},
		AltTexts: map[string]string{good: "council order"}}, e2eCutoff)
	if err := e.Run(context.Background(), c, StageImages, nil); err != nil {
		t.Fatal(err)
	}
	if len(c.Images) != 2 {
		t.Fatalf("images %+v", c.Images)
	}
	im := c.Images[0]
	if im.Description != orderDescription || !strings.HasPrefix(im.Origin, ImageOriginVision) ||
		!strings.Contains(im.Origin, ImageOriginAlt) || im.Format != "png" || im.Width != 320 || im.PHash == "" || im.Error != "" {
		t.Errorf("good image %+v", im)
	}
	if c.Images[1].Error == "" || !strings.Contains(c.Images[1].Error, "not a supported image") || c.Images[1].Description != "" {
		t.Errorf("bad image %+v", c.Images[1])
	}
	if !hasEvent(c, EventWarning, "broken.png") {
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
	for _, call := range env.llm.ChatCalls() {
		name := llmtest.SchemaName(*call.Chat)
		if name == "image_description" {
			continue
		}
		if name == "queries" && !strings.Contains(llmtest.AllText(*call.Chat), "5 different queries") {
			t.Errorf("queries prompt does not ask for 5: %.300s", llmtest.LastUser(*call.Chat))
		}
		if !strings.Contains(llmtest.AllText(*call.Chat), "Council Order 2024-7") {
			t.Errorf("%s prompt lacks the image description", cmpOr(name, "correction"))
		}
		carried = append(carried, cmpOr(name, "correction"))
	}
	if !strings.Contains(strings.Join(carried, ","), "evidence") || !strings.Contains(strings.Join(carried, ","), "correction") {
		t.Errorf("prompts seen %v", carried)
	}
	if !strings.HasPrefix(c.Correction.Text, "This post is") {
		t.Errorf("correction %q", c.Correction.Text)
	}
	if c.Usage.ByStage[string(StageImages)].LLMCalls != 1 {
		t.Errorf("image usage %+v", c.Usage.ByStage)
	}
}

func day(s string) time.Time {
	t, _ := time.Parse(time.DateOnly, s)
	return t
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func hasEvent(c *Check, kind, substr string) bool {
	for _, ev := range c.Events {
		if ev.Kind == kind && strings.Contains(ev.Message, substr) {
			return true
		}
	}
	return false
}

func TestVisionRefusedFallsBack(t *testing.T) {
	env := newVisionEnv(t)
	env.noVision = true
	dir := t.TempDir()
	a := writeFile(t, dir, "a.png", imagetest.PNG(t, imagetest.Scene(0, 200, 150)))
	b := writeFile(t, dir, "b.png", imagetest.PNG(t, imagetest.Scene(1, 200, 150)))
	e, closeFn, err := NewFromConfig(context.Background(), env.cfg, Options{PageProxy: env.proxy, ImageParallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(Post{Text: e2ePost, PostedAt: e2eCutoff, Images: []string{a, b},
		AltTexts: map[string]string{a: "A signed order banning bicycles"}}, e2eCutoff)
	if err := e.Run(context.Background(), c, StageImages, nil); err != nil {
		t.Fatal(err)
	}
	if len(env.imageReqs) != 1 {
		t.Errorf("%d vision calls: once refused, the model is not asked again", len(env.imageReqs))
	}
	if d := c.Images[0].Description; !strings.Contains(d, "not seen by a model") || !strings.Contains(d, "A signed order banning bicycles") ||
		c.Images[0].Origin != ImageOriginAlt {
		t.Errorf("fallback description %q (%s)", d, c.Images[0].Origin)
	}
	n := 0
	for _, ev := range c.Events {
		if ev.Kind == EventWarning && strings.Contains(ev.Message, "does not accept images") {
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

// testImageEngine is the in-process engine of engine_test.go with image
// loading from a map and OCR from a function.
func testImageEngine(t *testing.T, w *fakeWorld, m Model, opts Options, imgs map[string][]byte,
	ocr func(context.Context, *images.Image) (string, error)) *Engine {
	t.Helper()
	if ocr == nil {
		ocr = func(context.Context, *images.Image) (string, error) { return "", images.ErrNoTesseract }
	}
	e, err := New(Deps{Model: m, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w, Archive: w,
		Images: mapImages(imgs), OCR: ocr}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

type mapImages map[string][]byte

func (m mapImages) Load(ctx context.Context, src string) (*images.Image, error) {
	b, ok := m[src]
	if !ok {
		return nil, fmt.Errorf("load image %s: HTTP 404", src)
	}
	return images.Decode(src, b, images.Options{})
}

func TestAltTextOnlyWithoutVision(t *testing.T) {
	for _, noLLM := range []bool{false, true} {
		w := newWorld()
		src := "https://cdn.example/order.png"
		e := testImageEngine(t, w, &fakeModel{evidence: quoting}, Options{NoLLM: noLLM},
			map[string][]byte{src: imagetest.PNG(t, imagetest.Scene(0, 120, 90))}, nil)
		c := e.NewCheck(Post{Text: post, Images: []string{src}, AltTexts: map[string]string{src: "Council order banning bicycles"}}, day("2024-02-01"))
		evs, err := runCheck(t, e, c)
		if err != nil {
			t.Fatal(err)
		}
		im := c.Images[0]
		want := "no vision model is configured"
		if noLLM {
			want = "--no-llm"
		}
		if !strings.Contains(im.Description, want) || !strings.Contains(im.Description, "Council order banning bicycles") ||
			im.Origin != ImageOriginAlt || im.OCRText != "" {
			t.Errorf("noLLM=%v: %+v", noLLM, im)
		}
		warned := 0
		for _, ev := range evs {
			if ev.Kind == EventWarning && strings.Contains(ev.Message, "tesseract-ocr") {
				warned++
			}
		}
		if warned != 1 {
			t.Errorf("noLLM=%v: %d warnings about tesseract", noLLM, warned)
		}
		if len(c.Queries) == 0 || (!noLLM && len(c.Queries) != 3) { // fakeModel writes three whatever it is asked
			t.Errorf("queries %+v", c.Queries)
		}
	}
}

func TestOCRTextReachesPrompts(t *testing.T) {
	w := newWorld()
	src := "https://cdn.example/card.png"
	var asked []int
	m := &fakeModel{evidence: quoting, queries: func(in QueriesInput) ([]string, bool, error) {
		asked = append(asked, in.N)
		pp := promptPost(in.Post, in.Images)
		if len(pp.ImageDescriptions) != 1 || !strings.Contains(pp.ImageDescriptions[0], "MAIN STREET CLOSED TO BIKES") {
			t.Errorf("prompt post images %q", pp.ImageDescriptions)
		}
		return []string{"q1", "q2", "q3", "q4", "q5"}, true, nil
	}}
	e := testImageEngine(t, w, m, Options{}, map[string][]byte{src: imagetest.PNG(t, imagetest.Scene(1, 120, 90))},
		func(context.Context, *images.Image) (string, error) { return "MAIN STREET\nCLOSED TO BIKES\n", nil })
	c := e.NewCheck(Post{Text: post, Images: []string{src}}, day("2024-02-01"))
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	im := c.Images[0]
	if im.OCRText != "MAIN STREET\nCLOSED TO BIKES" || im.TextOrigin != ImageOriginOCR || im.Origin != ImageOriginOCR {
		t.Errorf("image %+v", im)
	}
	if len(asked) != 1 || asked[0] != 5 || len(c.Queries) != 5 {
		t.Errorf("queries asked %v, got %d", asked, len(c.Queries))
	}
}

func TestEditedDescriptionSurvivesRerun(t *testing.T) {
	w := newWorld()
	src := "https://cdn.example/a.png"
	e := testImageEngine(t, w, &fakeModel{evidence: quoting}, Options{}, map[string][]byte{src: imagetest.PNG(t, imagetest.Scene(0, 64, 64))}, nil)
	c := e.NewCheck(Post{Text: post, Images: []string{src}, AltTexts: map[string]string{src: "alt"}}, day("2024-02-01"))
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	c.Images[0].Description, c.Images[0].Edited = "A photo of Main Street with a festival banner.", true
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	if im := c.Images[0]; im.Description != "A photo of Main Street with a festival banner." || im.Origin != ImageOriginUser || !im.Edited {
		t.Errorf("after rerun %+v", im)
	}
}

func TestBadImagesKeepTheCheckGoing(t *testing.T) {
	dir := t.TempDir()
	full := imagetest.PNG(t, imagetest.Scene(0, 200, 150))
	huge := image.NewGray(image.Rect(0, 0, 1, 1))
	hugePNG := imagetest.PNG(t, huge)
	// Rewrite the IHDR dimensions to 100000×100000 (and its CRC): a
	// decompression bomb, refused from its header.
	bomb := bytes.Clone(hugePNG)
	copy(bomb[16:24], []byte{0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0})
	binary.BigEndian.PutUint32(bomb[29:33], crc32.ChecksumIEEE(bomb[12:29]))
	srcs := map[string]string{
		"truncated": writeFile(t, dir, "truncated.png", full[:len(full)/3]),
		"huge":      writeFile(t, dir, "huge.png", bomb),
		"wrongext":  writeFile(t, dir, "photo.jpg", []byte("plain text pretending to be a JPEG")),
		"notimage":  writeFile(t, dir, "notes.png", []byte("%PDF-1.7\n1 0 obj\n")),
		"missing":   filepath.Join(dir, "nowhere.png"),
		"fine":      writeFile(t, dir, "fine.jpg", full), // a PNG named .jpg is read by its content
	}
	w := newWorld()
	var list []string
	for _, k := range []string{"truncated", "huge", "wrongext", "notimage", "missing", "fine"} {
		list = append(list, srcs[k])
	}
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract,
		Rater: w, OCR: func(context.Context, *images.Image) (string, error) { return "", images.ErrNoTesseract }}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post, Images: list, AltTexts: map[string]string{srcs["truncated"]: "a council order"}}, day("2024-02-01"))
	evs, err := runCheck(t, e, c)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]error{"truncated": images.ErrCorrupt, "huge": images.ErrTooLarge, "wrongext": images.ErrNotImage, "notimage": images.ErrNotImage}
	byKey := map[string]Image{}
	for _, im := range c.Images {
		for k, s := range srcs {
			if s == im.Source {
				byKey[k] = im
			}
		}
	}
	for k := range want {
		im := byKey[k]
		if im.Error == "" || !strings.Contains(im.Error, im.Source) {
			t.Errorf("%s: error %q", k, im.Error)
		}
	}
	if !strings.Contains(byKey["truncated"].Error, "cannot be decoded") || !strings.Contains(byKey["huge"].Error, "too large") {
		t.Errorf("errors: truncated %q, huge %q", byKey["truncated"].Error, byKey["huge"].Error)
	}
	if byKey["missing"].Error == "" || byKey["fine"].Error != "" && !strings.Contains(byKey["fine"].Error, "no description") || byKey["fine"].Format != "png" {
		t.Errorf("missing %+v, fine %+v", byKey["missing"], byKey["fine"])
	}
	// The truncated image still has its alt text to go on.
	if !strings.Contains(byKey["truncated"].Description, "a council order") {
		t.Errorf("truncated image lost its alt text: %+v", byKey["truncated"])
	}
	warned := 0
	for _, ev := range evs {
		if ev.Kind == EventWarning && ev.Stage == StageImages {
			warned++
		}
	}
	if warned < 5 {
		t.Errorf("%d image warnings", warned)
	}
	if c.Correction.Text == "" || statusOf(c, "https://www.reuters.com/a") != StatusUsed {
		t.Errorf("the check did not go on: %q", c.Correction.Text)
	}
}

func TestPageImageMatchKeepsSource(t *testing.T) {
	w := newWorld()
	postImg := "https://cdn.example/viral.png"
	const weather, other = "https://weather.example/i", "https://www.bbc.co.uk/c"
	imgs := map[string][]byte{
		postImg:                              imagetest.PNG(t, imagetest.Scene(0, 320, 240)),
		"https://weather.example/lead.png":   imagetest.PNG(t, imagetest.Scene(0, 640, 480)), // the same picture, larger
		"https://www.bbc.co.uk/lead.png":     imagetest.PNG(t, imagetest.Scene(1, 320, 240)),
		"https://www.reuters.com/lead.png":   []byte("not an image"),
		"https://lowsite.example/lead.png":   imagetest.PNG(t, imagetest.Scene(0, 320, 240)),
		"https://undated.example/unused.png": imagetest.PNG(t, imagetest.Scene(0, 320, 240)),
	}
	leads := map[string]string{weather: "https://weather.example/lead.png", other: "https://www.bbc.co.uk/lead.png",
		"https://www.reuters.com/a": "https://www.reuters.com/lead.png", "https://lowsite.example/d": "https://lowsite.example/lead.png"}
	loader := countingImages{m: mapImages(imgs), mu: &sync.Mutex{}, n: map[string]int{}}
	ex := func(body []byte, u string) (*extract.Article, error) {
		a, err := w.extract(body, u)
		if a != nil {
			a.Image = leads[u]
		}
		return a, err
	}
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w, Extract: ex, Rater: w,
		Images: loader, OCR: func(context.Context, *images.Image) (string, error) { return "", images.ErrNoTesseract }}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post, Images: []string{postImg}}, day("2024-02-01"))
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	s := c.SourceByURL(weather)
	if s == nil || s.Status == StatusIrrelevant || s.ImageSimilarity < images.MatchThreshold || !strings.Contains(s.Reason+eventReason(c, weather), "image") {
		t.Fatalf("weather page with the post's picture: %+v", s)
	}
	if s.Relevance >= e.opts.LexicalThreshold {
		t.Errorf("weather page text relevance %.2f: the test needs it low", s.Relevance)
	}
	if b := c.SourceByURL(other); b == nil || b.ImageSimilarity >= images.MatchThreshold || b.ImageSimilarity == 0 {
		t.Errorf("different picture: %+v", b)
	}
	if lo := c.SourceByURL("https://lowsite.example/d"); lo == nil || lo.Status != StatusExcludedRating {
		t.Errorf("a matching image does not rescue an excluded publisher: %+v", lo)
	}
	// Run again from sources: lead images come from the engine's cache.
	if err := e.Run(context.Background(), c, StageSources, nil); err != nil {
		t.Fatal(err)
	}
	if n := loader.n["https://weather.example/lead.png"]; n != 1 {
		t.Errorf("lead image loaded %d times", n)
	}
	js, _ := json.Marshal(c.SourceByURL(weather))
	if !regexp.MustCompile(`"image_similarity":(1|0\.\d+)[,}]`).Match(js) {
		t.Errorf("json %s", js)
	}
}

// eventReason is the reason given when a source was kept for its image, in
// case a later stage replaced the source's own reason.
func eventReason(c *Check, u string) string {
	for _, ev := range c.Events {
		if strings.Contains(ev.Message, u) {
			return ev.Message
		}
	}
	return ""
}

type countingImages struct {
	m  mapImages
	mu *sync.Mutex
	n  map[string]int
}

func (c countingImages) Load(ctx context.Context, src string) (*images.Image, error) {
	c.mu.Lock()
	c.n[src]++
	c.mu.Unlock()
	return c.m.Load(ctx, src)
}

func TestOCROnDrawnImage(t *testing.T) {
	if _, ok := images.TesseractVersion(); !ok {
		t.Skip("tesseract is not installed (apt-get install tesseract-ocr); .ci/run installs it")
	}
	w := newWorld()
	src := "https://cdn.example/quote.png"
	card := imagetest.PNG(t, imagetest.Text(t, []string{"SPRINGFIELD BANS", "ALL BICYCLES"}, 48))
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract,
		Rater: w, Images: mapImages{src: card}}, Options{NoLLM: true})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: "look at this", Images: []string{src}}, day("2024-02-01"))
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	im := c.Images[0]
	got := strings.ToUpper(strings.Join(strings.Fields(im.OCRText), " "))
	if !strings.Contains(got, "SPRINGFIELD BANS") || !strings.Contains(got, "BICYCLES") || im.TextOrigin != ImageOriginOCR {
		t.Fatalf("OCR read %q", im.OCRText)
	}
	if !strings.Contains(strings.ToUpper(im.Description), "SPRINGFIELD BANS") || !strings.Contains(im.Description, "--no-llm") {
		t.Errorf("description %q", im.Description)
	}
	// The extractive mode searches the words read in the image.
	if !strings.Contains(strings.ToLower(strings.Join(c.EnabledQueries(), " ")), "springfield") {
		t.Errorf("queries %v do not use the image text", c.EnabledQueries())
	}
}

// lensServer answers SerpAPI's google_lens engine with one exact match.
func lensServer(t *testing.T, page string, asked *[]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/search.json" || q.Get("engine") != "google_lens" {
			http.NotFound(w, r)
			return
		}
		*asked = append(*asked, q.Get("url"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"search_metadata":{"status":"Success"},"exact_matches":[{"position":1,"title":"Fact check: the Springfield order is fake","link":%q,"source":"Reuters","date":"Jan 5, 2024"}],"visual_matches":[]}`, page)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestReverseImageSearchHits(t *testing.T) {
	w := newWorld()
	w.results[5] = []string{"https://www.bbc.co.uk/c"} // text search finds only context
	var asked []string
	srv := lensServer(t, "https://www.reuters.com/a", &asked)
	postImg := "https://cdn.example/viral.png"
	lens := search.ImageSearchers(search.Options{SerpAPIKey: "test-key", SerpAPIURL: srv.URL})
	if len(lens) != 1 {
		t.Fatalf("image searchers %v", lens)
	}
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w,
		Images: mapImages{postImg: imagetest.PNG(t, imagetest.Scene(0, 64, 64))}, ImageSearchers: lens,
		OCR: func(context.Context, *images.Image) (string, error) { return "", images.ErrNoTesseract }}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	local := writeFile(t, t.TempDir(), "local.png", imagetest.PNG(t, imagetest.Scene(1, 64, 64)))
	c := e.NewCheck(Post{Text: post, Images: []string{postImg, local}}, day("2024-02-01"))
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != postImg {
		t.Errorf("Lens asked about %v: only public URLs can be searched", asked)
	}
	var lensHit *Hit
	for i := range c.Hits {
		if c.Hits[i].Provider == search.NameSerpAPILens {
			lensHit = &c.Hits[i]
		}
	}
	if lensHit == nil || lensHit.URL != "https://www.reuters.com/a" || lensHit.Query != postImg {
		t.Fatalf("hits %+v", c.Hits)
	}
	if s := c.SourceByURL("https://www.reuters.com/a"); s == nil || s.Tier != TierHigh || s.Status != StatusUsed {
		t.Errorf("lens page %+v", s)
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

func TestCheckPostByURL(t *testing.T) {
	env := newVisionEnv(t)
	env.cfg.SearXNGURL = "" // only the archive: this test is about the post
	srv := platformServer(t, imagetest.PNG(t, imagetest.Scene(0, 400, 300)))
	e, closeFn, err := NewFromConfig(context.Background(), env.cfg, Options{LLMRetryDelay: 1,
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
		if err := e.Run(context.Background(), c, StageImages, nil); err != nil {
			t.Fatalf("%s: %v", tc.platform, err)
		}
		if im := c.Images[0]; im.AltText != "A signed council order banning bicycles on Main Street" ||
			im.Description != orderDescription || im.Format != "png" || len(c.Queries) != 5 {
			t.Errorf("%s: image %+v, %d queries", tc.platform, im, len(c.Queries))
		}
	}
	// A platform's failure is one line saying what went wrong.
	_, err = e.PostFromURL(context.Background(), srv.URL+"/@cityrumours/404")
	if err == nil || !errors.Is(err, posts.ErrNotFound) || strings.Contains(err.Error(), "\n") {
		t.Errorf("deleted post: %v", err)
	}
}

func TestDoctorTesseract(t *testing.T) {
	it := doctorTesseract()
	if v, ok := images.TesseractVersion(); ok {
		if it.Status != DoctorOK || !strings.Contains(it.Detail, v) {
			t.Errorf("installed: %+v", it)
		}
	}
	t.Setenv("PATH", t.TempDir())
	it = doctorTesseract()
	if it.Status != DoctorWarn || !strings.Contains(it.Fix, "apt-get install tesseract-ocr") {
		t.Errorf("missing: %+v", it)
	}
}
