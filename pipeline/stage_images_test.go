package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/images"
	"github.com/musecheck/muse/sources/images/imagetest"
	"github.com/musecheck/muse/sources/search"
)

func day(s string) time.Time {
	t, _ := time.Parse(time.DateOnly, s)
	return t
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
		pp := promptPost(in.Post, in.Images, nil)
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
		"truncated": WriteFile(t, dir, "truncated.png", full[:len(full)/3]),
		"huge":      WriteFile(t, dir, "huge.png", bomb),
		"wrongext":  WriteFile(t, dir, "photo.jpg", []byte("plain text pretending to be a JPEG")),
		"notimage":  WriteFile(t, dir, "notes.png", []byte("%PDF-1.7\n1 0 obj\n")),
		"missing":   filepath.Join(dir, "nowhere.png"),
		"fine":      WriteFile(t, dir, "fine.jpg", full), // a PNG named .jpg is read by its content
	}
	w := newWorld()
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract,
		Rater: w, OCR: func(context.Context, *images.Image) (string, error) { return "", images.ErrNoTesseract }}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Two posts, since a post's images are read up to MaxPostImages.
	byKey := map[string]Image{}
	var evs []Event
	var c *Check
	for _, keys := range [][]string{{"truncated", "huge", "wrongext", "notimage"}, {"missing", "fine"}} {
		var list []string
		for _, k := range keys {
			list = append(list, srcs[k])
		}
		c = e.NewCheck(Post{Text: post, Images: list, AltTexts: map[string]string{srcs["truncated"]: "a council order"}}, day("2024-02-01"))
		ev, err := runCheck(t, e, c)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev...)
		for _, im := range c.Images {
			for k, s := range srcs {
				if s == im.Source {
					byKey[k] = im
				}
			}
		}
	}
	want := map[string]error{"truncated": images.ErrCorrupt, "huge": images.ErrTooLarge, "wrongext": images.ErrNotImage, "notimage": images.ErrNotImage}
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
	local := WriteFile(t, t.TempDir(), "local.png", imagetest.PNG(t, imagetest.Scene(1, 64, 64)))
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

// A video post's poster frame, a public URL the platform serves, is asked
// of reverse image search like a post image; a video file on this machine
// has no such frame and nothing is asked.
func TestReverseImageSearchVideoPoster(t *testing.T) {
	w := newWorld()
	var asked []string
	srv := lensServer(t, "https://www.reuters.com/fact-check/clip-poster", &asked) // not found by the text search
	lens := search.ImageSearchers(search.Options{SerpAPIKey: "test-key", SerpAPIURL: srv.URL})
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w,
		ImageSearchers: lens}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	clip, poster := "https://video.example/clip/playlist.m3u8", "https://video.example/clip/thumbnail.jpg"
	read := []VideoFrame{{At: 0, OCR: "SPRINGFIELD ORDER"}} // read already: not downloaded again
	c := e.NewCheck(Post{Text: post, Videos: []string{clip}, VideoPosters: map[string]string{clip: poster}}, day("2024-02-01"))
	c.Video = &Video{Source: clip, Poster: poster, Frames: read}
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != poster {
		t.Errorf("Lens asked about %v, want the video's poster", asked)
	}
	if !slices.ContainsFunc(c.Hits, func(h Hit) bool { return h.Provider == search.NameSerpAPILens && h.Query == poster }) {
		t.Errorf("no hit of the poster's search: %+v", c.Hits)
	}

	asked = nil
	c = e.NewCheck(Post{Text: post, Videos: []string{"/tmp/clip.mp4"}}, day("2024-02-01"))
	c.Video = &Video{Source: "/tmp/clip.mp4", Frames: read}
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 0 {
		t.Errorf("Lens asked about %v for a local video", asked)
	}
}
