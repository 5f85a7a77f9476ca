// Package testworld is the loopback world of muse's end-to-end tests and
// benchmarks: news pages served under their real-looking hosts through a
// proxy, a SearXNG instance, and an OpenAI-compatible model that quotes what
// it is shown. Tests in any package that uses the engine build it with New.
package testworld

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/fetch/fetchtest"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// The loopback world of the end-to-end tests and the benchmark: news pages
// served under their real-looking hosts through a proxy, a SearXNG
// instance, and an OpenAI-compatible model that quotes what it is shown.

const (
	Post = "BREAKING: Springfield city council banned all bicycles from Main Street starting Monday! " +
		"The mayor signed the order in secret. #Springfield"
	// What the pages say, and so what a faithful model quotes.
	QuoteR1 = "Springfield's city council has not banned bicycles from Main Street, a council spokesperson told Reuters on Friday, calling posts claiming otherwise false."
	QuoteR2 = "No order banning bicycles on Main Street was signed by Mayor Ellen Park, her office said, and the council's published agenda shows no such vote."
	QuoteC1 = "The council voted in December to widen the protected bicycle lane on Main Street, a plan that adds space for cyclists rather than removing it."
	QuoteC2 = "A temporary closure of one block of Main Street to all traffic, including bicycles, is planned for a weekend street festival, organisers said."
	QuoteC3 = "Some shop owners on Main Street asked the council last year to restrict cycling on the pavement, but no restriction was adopted."
)

// Page is one news page of the world.
type Page struct {
	Path, Title, Site, Date string // Date "" = undated
	Paras                   []string
	Status                  int // 0 = 200
}

// Cutoff is the world's post time: pages dated after it are too late.
var Cutoff = time.Date(2024, 2, 1, 12, 0, 0, 0, time.UTC)

// Background writes n distinct paragraphs of plausible reporting about the
// story, so pages are as long as wire stories and not duplicates: each
// site's paragraphs give counts of their own, so two sites' pages share
// the sentence frame (which each page repeats, and origin clustering
// leaves out) but no reporting.
func Background(site string, n int) []string {
	own := 0 // the site's own offset to the figures
	for _, r := range site {
		own = (own*31 + int(r)) % 997
	}
	topics := []string{
		"the council's transport committee", "local cycling groups", "the chamber of commerce", "residents near the old station",
		"the city's traffic engineers", "the regional bus operator", "delivery companies", "the police traffic unit",
		"schools along the route", "the parks department", "a neighbourhood association", "the state transport agency",
		"disability advocates", "taxi drivers", "the fire department", "market traders",
	}
	var out []string
	for i := range n {
		t := topics[i%len(topics)]
		out = append(out, fmt.Sprintf("%s spoke to %s about traffic on Main Street in Springfield, where %d people ride to work each day "+
			"according to the latest count. They described how the street has changed over the past decade, how parking "+
			"and loading bays are shared, and what they expect from the council's next round of consultations on the "+
			"city centre, which is due to open in the spring and run for eight weeks (report %d).", site, t, 1200+own+i*37, i+1))
	}
	return out
}

func Pages() map[string]Page {
	return map[string]Page{
		"www.reuters.com": {Path: "/world/us/springfield-bicycle-claim-false-idUS2024", Title: "Fact Check: Springfield did not ban bicycles from Main Street",
			Site: "Reuters", Date: "2024-01-20", Paras: append([]string{QuoteR1}, Background("Reuters", 14)...)},
		"apnews.com": {Path: "/article/fact-check-springfield-bicycles", Title: "No bicycle ban in Springfield, mayor's office says",
			Site: "AP News", Date: "2024-01-22", Paras: append(Background("AP", 6), append([]string{QuoteR2}, Background("The AP", 8)...)...)},
		"www.bbc.co.uk": {Path: "/news/world-us-springfield-main-street", Title: "Springfield widens Main Street bike lane",
			Site: "BBC News", Date: "2024-01-15", Paras: append([]string{QuoteC1}, Background("The BBC", 12)...)},
		"www.npr.org": {Path: "/2024/01/18/springfield-main-street-festival", Title: "Springfield plans Main Street festival",
			Site: "NPR", Date: "2024-01-18", Paras: append(Background("NPR", 5), append([]string{QuoteC2}, Background("NPR's reporter", 7)...)...)},
		"www.cityherald.example": {Path: "/springfield/main-street-cycling", Title: "Shop owners and cyclists on Main Street",
			Site: "City Herald", Date: "2024-01-10", Paras: append([]string{QuoteC3}, Background("The Herald", 10)...)},
		"www.unratedblog.example": {Path: "/springfield-bikes", Title: "My thoughts on Springfield bicycles and Main Street",
			Site: "A Blog", Date: "2024-01-12", Paras: Background("A blogger", 9)},
		"www.rumours.example": {Path: "/springfield-bans-bikes", Title: "Springfield BANS bicycles!",
			Site: "Rumours Daily", Date: "2024-01-25", Paras: append([]string{"Springfield banned bicycles from Main Street, insiders say."}, Background("Rumours", 8)...)},
		"www.latenews.example": {Path: "/springfield-bicycles-update", Title: "Springfield bicycles: an update",
			Site: "Late News", Date: "2024-03-05", Paras: Background("Late News", 9)},
		"www.undated.example": {Path: "/springfield-bicycles", Title: "Springfield and its bicycles",
			Site: "Undated Gazette", Paras: Background("The Gazette", 9)},
		"www.shortnews.example": {Path: "/springfield", Title: "Springfield bikes", Site: "Short News", Date: "2024-01-19",
			Paras: []string{"Springfield council discussed bicycles on Main Street on Thursday, officials said."}},
		"www.weather.example": {Path: "/weekend-forecast", Title: "Weekend forecast", Site: "Weather Desk", Date: "2024-01-26",
			Paras: []string{strings.Repeat("Sunny skies are expected across the region over the weekend, with mild temperatures and a light breeze from the west. ", 12)}},
		"www.gone.example": {Path: "/springfield-story", Status: http.StatusNotFound},
	}
}

func PageURL(host string, p Page) string { return "http://" + host + p.Path }

// ArticleHTML renders a Page the way news sites do: navigation, a header,
// the article with its metadata, a footer.
func ArticleHTML(p Page) string {
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>%s | %s</title>\n", html.EscapeString(p.Title), html.EscapeString(p.Site))
	fmt.Fprintf(&b, "<meta property=\"og:site_name\" content=\"%s\">\n<meta property=\"og:title\" content=\"%s\">\n",
		html.EscapeString(p.Site), html.EscapeString(p.Title))
	if p.Date != "" {
		fmt.Fprintf(&b, "<meta property=\"article:published_time\" content=\"%sT09:30:00Z\">\n", p.Date)
	}
	b.WriteString("</head><body>\n<header><nav><a href=\"/\">Home</a> <a href=\"/world\">World</a> <a href=\"/business\">Business</a> <a href=\"/sport\">Sport</a></nav></header>\n")
	fmt.Fprintf(&b, "<main><article><h1>%s</h1>\n", html.EscapeString(p.Title))
	if p.Date != "" {
		fmt.Fprintf(&b, "<time datetime=\"%s\">%s</time>\n", p.Date, p.Date)
	}
	for _, para := range p.Paras {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(para))
	}
	b.WriteString("</article></main>\n<footer><p>Contact us</p><p>Terms of use</p></footer></body></html>\n")
	return b.String()
}

// NewsProxy serves the pages by host and path; anything else is a 404.
func NewsProxy(t testing.TB, pages map[string]Page) *url.URL {
	return fetchtest.NewProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.ToLower(r.Host)
		p, ok := pages[host]
		if !ok || r.URL.Path != p.Path || p.Status != 0 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, ArticleHTML(p))
	}))
}

// SearXNG answers /search?format=json with the URLs resultsFor gives
// for the query, as SearXNG's JSON API does.
func SearXNG(t testing.TB, resultsFor func(q string) []string) *httptest.Server {
	return SearXNGLanguage(t, func(q, _ string) []string { return resultsFor(q) })
}

// SearXNGLanguage is SearXNG with the request's language parameter too.
func SearXNGLanguage(t testing.TB, resultsFor func(q, language string) []string) *httptest.Server {
	return searxng(t, func(q, language string) []Result {
		var res []Result
		for _, u := range resultsFor(q, language) {
			res = append(res, Result{URL: u, Title: "Result for " + u, Content: "Springfield bicycles Main Street"})
		}
		return res
	})
}

var (
	articleBlock  = regexp.MustCompile(`(?s)<<<BEGIN ARTICLE>>>(.*?)<<<END ARTICLE>>>`)
	articlesBlock = regexp.MustCompile(`(?s)<<<BEGIN ARTICLES>>>(.*?)<<<END ARTICLES>>>`)
	articleHead   = regexp.MustCompile(`<<<\d+>>>`)
)

// Articles gives the text of each article of an evidence prompt, in order:
// the one article of a one-page prompt, or the numbered articles of a
// several-page prompt (from 1).
func Articles(prompt string) []string {
	if m := articleBlock.FindStringSubmatch(prompt); m != nil {
		return []string{m[1]}
	}
	m := articlesBlock.FindStringSubmatch(prompt)
	if m == nil {
		return nil
	}
	parts := articleHead.Split(m[1], -1)
	return parts[1:] // what precedes the first heading is no article
}

// EvidenceAnswer is the schema's answer: for each article, what quotes says
// of it, keyed by its number.
func EvidenceAnswer(arts []string, quotes func(art string) (ref, ctx []string)) string {
	type item struct {
		Article int      `json:"article"`
		Refutes []string `json:"refutes"`
		Context []string `json:"context"`
	}
	items := []item{}
	for i, art := range arts {
		ref, ctx := quotes(art)
		if len(ref)+len(ctx) > 0 {
			items = append(items, item{Article: i + 1, Refutes: append([]string{}, ref...), Context: append([]string{}, ctx...)})
		}
	}
	b, _ := json.Marshal(map[string]any{"Articles": items})
	return string(b)
}

// PromptURL finds the URLs a prompt shows the model.
var PromptURL = regexp.MustCompile(`https?://[^\s<>"')\]]+`)

var promptSource = regexp.MustCompile(`(?m)^\[S\d+\] `)

// PromptSources are the ids the correction prompt gives its sources, as a
// model cites them ("[S1]", "[S2]"…), in order.
func PromptSources(prompt string) []string {
	var out []string
	for _, m := range promptSource.FindAllString(prompt, -1) {
		out = append(out, strings.TrimSpace(m))
	}
	return out
}

// Model answers like a good model: three queries, the quotes really
// on each page, a correction citing the first two evidence URLs. Hooks let
// a test make it misbehave.
type Model struct {
	Mu              sync.Mutex
	EvidenceCalls   int
	PagesRead       int // article blocks seen in evidence prompts
	InventQuote     bool
	InventURL       bool
	QueriesAnswer   string // replaces the queries answer when set
	CorrectionReply *llmtest.Reply
	FailFirst       map[string]bool // article markers whose first evidence call gets a 429
	Failed          map[string]bool
	// Hook, when set, answers a request first; ok false leaves it to the
	// faithful model.
	Hook func(req openai.ChatCompletionRequest) (r llmtest.Reply, ok bool)
}

// Handle answers one chat request as a faithful model would.
func (m *Model) Handle(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
	if m.Hook != nil {
		if r, ok := m.Hook(req); ok {
			return r, nil
		}
	}
	switch llmtest.SchemaName(req) {
	case "queries":
		if m.QueriesAnswer != "" {
			return llmtest.Reply{Text: m.QueriesAnswer}, nil
		}
		return llmtest.Reply{Text: `{"queries":["Springfield bicycle ban Main Street","Springfield council bicycles fact check","Springfield mayor order bicycles"]}`}, nil
	case "evidence":
		arts := Articles(llmtest.LastUser(req))
		m.Mu.Lock()
		m.EvidenceCalls++
		m.PagesRead += len(arts)
		for marker := range m.FailFirst {
			if strings.Contains(strings.Join(arts, "\n"), marker) && !m.Failed[marker] {
				m.Failed[marker] = true
				m.Mu.Unlock()
				return llmtest.Reply{}, llmtest.ErrRateLimit
			}
		}
		m.Mu.Unlock()
		return llmtest.Reply{Text: EvidenceAnswer(arts, func(art string) (ref, ctx []string) {
			for _, q := range []string{QuoteR1, QuoteR2} {
				if strings.Contains(art, q) {
					ref = append(ref, q)
				}
			}
			for _, q := range []string{QuoteC1, QuoteC2, QuoteC3} {
				if strings.Contains(art, q) {
					ctx = append(ctx, q)
				}
			}
			if m.InventQuote && len(ref) > 0 {
				ref = append(ref, "Mayor Park admitted the bicycle ban was drafted by a prankster on the council staff.")
			}
			return ref, ctx
		})}, nil
	}
	// The correction: stream, citing the first two sources of the prompt
	// by their ids.
	ids := PromptSources(llmtest.LastUser(req))
	text := "This post is false. Springfield's council has not banned bicycles from Main Street, and the mayor signed no such order " +
		strings.Join(ids[:min(2, len(ids))], "") + "."
	if m.InventURL {
		text += " See also https://www.springfield-truth.example/ban-exposed for details."
	}
	if m.CorrectionReply != nil {
		r := *m.CorrectionReply
		if r.Text == "" && r.Refusal == "" {
			r.Text = text
		}
		return r, nil
	}
	return llmtest.Reply{Text: text}, nil
}

// Env is one loopback world with a config pointing at it.
type Env struct {
	Cfg   *setup.Config
	Model *Model
	LLM   *llmtest.Server
	Proxy *url.URL
	Pages map[string]Page
}

// New builds the world. order lists the page hosts in the order SearXNG
// returns them for every query; nil spreads all pages over the three queries.
func New(t testing.TB, order []string, llmOpts ...llmtest.Option) *Env {
	t.Helper()
	pages := Pages()
	model := &Model{FailFirst: map[string]bool{}, Failed: map[string]bool{}}
	srv := llmtest.NewReplyServer(t, model.Handle, llmOpts...)
	urlsFor := func(hosts []string) []string {
		var out []string
		for _, h := range hosts {
			out = append(out, PageURL(h, pages[h]))
		}
		return out
	}
	sx := SearXNG(t, func(q string) []string {
		if order != nil {
			return urlsFor(order)
		}
		switch {
		case strings.Contains(q, "fact check"):
			return urlsFor([]string{"www.reuters.com", "apnews.com", "www.bbc.co.uk", "www.rumours.example"})
		case strings.Contains(q, "mayor"):
			return urlsFor([]string{"www.npr.org", "www.latenews.example", "www.undated.example", "www.shortnews.example"})
		default:
			return urlsFor([]string{"www.cityherald.example", "www.weather.example", "www.gone.example", "www.unratedblog.example"})
		}
	})
	return &Env{Cfg: worldConfig(t, srv.BaseURL, sx.URL), Model: model, LLM: srv, Proxy: NewsProxy(t, pages), Pages: pages}
}

// worldConfig is the configuration of a world: its model server and
// SearXNG, the world's ratings, and a data directory of its own.
func worldConfig(t testing.TB, llmURL, searxngURL string) *setup.Config {
	dir := t.TempDir()
	return &setup.Config{OpenAIBaseURL: llmURL, OpenAIAPIKey: "sk-test", Model: "test-model",
		SearXNGURL: searxngURL, AllowPrivateAddresses: true, IgnoreRobots: true,
		RatingsFile: writeRatings(t, dir), DataDir: dir,
		OverridesFile: filepath.Join(dir, "overrides.toml"), ConfigDir: dir}
}

func (env *Env) Options() pipeline.Options { return worldOptions(env.Proxy) }

// worldOptions are the engine options that reach a world through its proxy.
func worldOptions(proxy *url.URL) pipeline.Options {
	return pipeline.Options{PageProxy: proxy, LLMRetryDelay: 10 * time.Millisecond}
}

// RatingsCSV is the world's publisher ratings: the news hosts rated as the
// MBFC file would, the rumour and blog hosts low or unrated.
//
//go:embed testdata/ratings.csv
var RatingsCSV []byte

// writeRatings puts the ratings fixture in dir, so a test can hand the
// world's configuration to any process, under any user.
func writeRatings(t testing.TB, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "ratings.csv")
	if err := os.WriteFile(p, RatingsCSV, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Check runs the world's post through an engine built from env's
// configuration with opts, from the first stage.
func (env *Env) Check(t testing.TB, opts pipeline.Options) (*pipeline.Check, error) {
	t.Helper()
	return checkPost(t, env.Cfg, opts, pipeline.Post{Text: Post, Author: "City Rumours", Handle: "@cityrumours", PostedAt: Cutoff}, Cutoff)
}

// checkPost runs post through an engine built from cfg with opts, from the
// first stage.
func checkPost(t testing.TB, cfg *setup.Config, opts pipeline.Options, post pipeline.Post, cutoff time.Time) (*pipeline.Check, error) {
	t.Helper()
	e, closeFn, err := setup.NewFromConfig(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(post, cutoff)
	err = e.Run(context.Background(), c, pipeline.StageImages, nil)
	return c, err
}

// MostHitsPerQuery is the most first-search hits one query got from one
// provider (open or site-restricted) in c: what a check asked of the
// world's SearXNG per query, which returns four pages for every query.
func MostHitsPerQuery(c *pipeline.Check) int {
	n, most := map[string]int{}, 0
	for _, h := range c.Hits {
		if h.Pass == 1 {
			k := fmt.Sprint(h.Query, "\x00", h.Provider, "\x00", h.Restricted)
			n[k]++
			most = max(most, n[k])
		}
	}
	return most
}

// CorrectionsIn counts the correction calls srv received that ask for the
// correction in the language labelled label ("Spanish (es)"), and the
// others.
func CorrectionsIn(srv *llmtest.Server, label string) (in, other int) {
	for _, c := range srv.ChatCalls() {
		if llmtest.SchemaName(*c.Chat) != "" {
			continue // not the correction, which has no schema
		}
		if strings.Contains(c.Chat.Messages[len(c.Chat.Messages)-1].Content, "is written in "+label) {
			in++
		} else {
			other++
		}
	}
	return in, other
}
