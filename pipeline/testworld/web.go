package testworld

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/fetch/fetchtest"
	"github.com/musecheck/muse/sources/images"
	"github.com/musecheck/muse/sources/llm/llmtest"
	"github.com/musecheck/muse/sources/ratings"
	"github.com/musecheck/muse/sources/search"
)

// A Web is a loopback world a test lays out itself, for tests outside the
// engine (the app's) that need the real engine over a story of their own:
// pages and files served under their own hosts, over http or https,
// through a proxy whose CA the engine trusts; a SearXNG answering with the
// results the test gives; a model server answering as the test's handler
// says, behind a gate that can hold a streamed answer mid-way; the
// publisher ratings the test gives. Engine builds the engine over it.
type Web struct {
	// Cfg is the configuration pointing at the web (its model, SearXNG and
	// ratings file).
	Cfg *setup.Config
	// LLM is the model server, with every request it received.
	LLM *llmtest.Server

	proxy *fetchtest.Proxy
	ocr   func(ctx context.Context, img *images.Image) (string, error)
	hold  atomic.Int64 // words after which a stream stalls; 0: never
}

// WebOptions lay out a Web.
type WebOptions struct {
	// Pages are the HTML documents served, by URL (http or https).
	Pages map[string]string
	// Files are other content served, by URL (images), as their bytes
	// show it to be.
	Files map[string][]byte
	// Results answers a search: the results for the query, in the
	// language SearXNG is asked for ("" none).
	Results func(query, language string) []Result
	// Model answers each chat request.
	Model func(openai.ChatCompletionRequest) (llmtest.Reply, error)
	// ModelName is the model configured (default "test-model"); Price, if
	// set, is what it costs.
	ModelName string
	Price     setup.Price
	// Ratings is the publisher ratings file (CSV), beside muse's built-in
	// table; nil: the built-in table alone.
	Ratings []byte
	// OCR reads the text in an image, as tesseract would; nil reads none.
	OCR func(ctx context.Context, img *images.Image) (string, error)
}

// Result is one search result as SearXNG gives it.
type Result struct {
	URL, Title, Content string
}

// ratingsDate is the date of a Web's ratings file.
var ratingsDate = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// NewWeb starts a Web; it stops when the test ends.
func NewWeb(t testing.TB, o WebOptions) *Web {
	t.Helper()
	w := &Web{ocr: o.OCR}
	w.proxy = fetchtest.Start(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		u := "http://"
		if r.TLS != nil {
			u = "https://"
		}
		u += strings.ToLower(r.Host) + r.URL.RequestURI()
		if doc, ok := o.Pages[u]; ok {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(rw, doc)
			return
		}
		if b, ok := o.Files[u]; ok {
			rw.Header().Set("Content-Type", http.DetectContentType(b))
			_, _ = rw.Write(b)
			return
		}
		http.NotFound(rw, r)
	}))
	results := o.Results
	if results == nil {
		results = func(string, string) []Result { return nil }
	}
	sx := searxng(t, results)
	w.LLM = llmtest.NewReplyServer(t, o.Model)
	gate := httptest.NewServer(http.HandlerFunc(w.gate))
	t.Cleanup(gate.Close)
	dir := t.TempDir()
	ratingsFile := ""
	if o.Ratings != nil {
		// A CSV file's ratings are dated by its modification time, which
		// is shown where a rating's origin is: the same day every day.
		ratingsFile = filepath.Join(dir, "ratings.csv")
		if err := os.WriteFile(ratingsFile, o.Ratings, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(ratingsFile, ratingsDate, ratingsDate); err != nil {
			t.Fatal(err)
		}
	}
	name := cmp.Or(o.ModelName, "test-model")
	w.Cfg = &setup.Config{OpenAIBaseURL: gate.URL + "/v1", OpenAIAPIKey: "sk-test", Model: name,
		SearXNGURL: sx.URL, AllowPrivateAddresses: true, IgnoreRobots: true, NoCache: true,
		RatingsFile: ratingsFile, DataDir: dir, ConfigDir: dir, OverridesFile: filepath.Join(dir, "overrides.toml")}
	if o.Price != (setup.Price{}) {
		w.Cfg.Prices = map[string]setup.Price{name: o.Price}
	}
	return w
}

// Engine is the real engine over the web with opts, built as
// setup.NewFromConfig builds it from w.Cfg but for what a test of a story
// needs: pages and images are read through the web's proxy, trusting its
// CA; the text in images is read by the web's OCR rather than tesseract,
// which a machine may or may not have; and there is no response cache or
// page archive, so every run asks the web afresh and finds only what it
// serves.
func (w *Web) Engine(t testing.TB, opts pipeline.Options) *pipeline.Engine {
	t.Helper()
	client, err := setup.NewLLMClient(context.Background(), w.Cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := ratings.Load(setup.RatingsOptions(w.Cfg))
	if err != nil {
		t.Fatal(err)
	}
	fo := setup.FetchOptions(w.Cfg)
	fo.Proxy, fo.TLSConfig = w.proxy.ProxyFunc(), w.proxy.TLSConfig()
	f := fetch.New(fo)
	t.Cleanup(f.CloseIdleConnections)
	ocr := w.ocr
	if ocr == nil {
		ocr = func(context.Context, *images.Image) (string, error) { return "", nil }
	}
	imageClient := &http.Client{Transport: &http.Transport{Proxy: w.proxy.ProxyFunc(), TLSClientConfig: w.proxy.TLSConfig()}}
	e, err := pipeline.New(pipeline.Deps{
		Model:     &pipeline.LLMModel{Client: client},
		Searchers: search.Providers(setup.SearchOptions(w.Cfg)),
		Fetcher:   pipeline.RememberingFetcher(f),
		Extract: func(body []byte, pageURL string) (*extract.Article, error) {
			return extract.Options{}.ExtractContent(body, "", pageURL)
		},
		Rater:  rater{rt},
		Images: pipeline.ImageLoader(images.Options{AllowPrivate: true, Client: imageClient}),
		OCR:    ocr,
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// HoldStreams makes every streamed answer (the correction) stall once it
// has sent words words, until its request goes away (the run is stopped),
// as a model that hangs mid-answer would; 0 lets streams run.
func (w *Web) HoldStreams(words int) { w.hold.Store(int64(words)) }

// gate passes the model's requests on to its server, holding a stream
// mid-way when HoldStreams asks it to.
func (w *Web) gate(rw http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, w.LLM.URL+r.URL.RequestURI(), r.Body)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		rw.Header()[k] = v
	}
	rw.WriteHeader(resp.StatusCode)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		_, _ = io.Copy(rw, resp.Body)
		return
	}
	fl, _ := rw.(http.Flusher)
	in := bufio.NewReader(resp.Body)
	var sent strings.Builder // the answer's text passed on so far
	for {
		line, err := in.ReadString('\n')
		if piece := streamedText(line); piece != "" {
			if n := w.hold.Load(); n > 0 && int64(strings.Count(sent.String(), " ")) >= n {
				<-r.Context().Done()
				return
			}
			sent.WriteString(piece)
		}
		if _, werr := io.WriteString(rw, line); werr != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
		if err != nil {
			return
		}
	}
}

// streamedText is the answer text an SSE line of a chat stream carries.
func streamedText(line string) string {
	data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
	if !ok || !strings.HasPrefix(data, "{") {
		return ""
	}
	var chunk struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal([]byte(data), &chunk) != nil || len(chunk.Choices) == 0 {
		return ""
	}
	return chunk.Choices[0].Delta.Content
}

// searxng answers /search?format=json with results, as SearXNG's JSON API
// does.
func searxng(t testing.TB, results func(q, language string) []Result) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		type result struct {
			URL     string `json:"url"`
			Title   string `json:"title"`
			Content string `json:"content"`
			Engine  string `json:"engine"`
		}
		res := []result{}
		for _, x := range results(r.URL.Query().Get("q"), r.URL.Query().Get("language")) {
			res = append(res, result{URL: x.URL, Title: x.Title, Content: x.Content, Engine: "duckduckgo"})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"query": r.URL.Query().Get("q"), "number_of_results": len(res),
			"results": res, "answers": []any{}, "suggestions": []any{}, "unresponsive_engines": []any{}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// rater rates publishers with sources/ratings, as the engine's rater does.
type rater struct{ r *ratings.Rater }

func (a rater) CredibleDomains() []string { return a.r.CredibleDomains() }

func (a rater) Rate(u string) pipeline.Rating {
	rt := a.r.Rate(u)
	return pipeline.Rating{Domain: cmp.Or(rt.Domain, sources.HostOf(u)), Publisher: rt.Publisher, Factuality: rt.Factuality,
		Bias: rt.Bias, Tier: rt.Tier, Origin: rt.Origin, UserContent: rt.UserContent, Boost: rt.Boost, Drop: rt.Drop}
}
