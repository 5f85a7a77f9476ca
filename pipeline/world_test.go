package pipeline

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline/config"
	"github.com/musecheck/muse/sources/fetch/fetchtest"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// The loopback world of the end-to-end tests and the benchmark: news pages
// served under their real-looking hosts through a proxy, a SearXNG
// instance, and an OpenAI-compatible model that quotes what it is shown.

const (
	e2ePost = "BREAKING: Springfield city council banned all bicycles from Main Street starting Monday! " +
		"The mayor signed the order in secret. #Springfield"
	// What the pages say, and so what a faithful model quotes.
	quoteR1 = "Springfield's city council has not banned bicycles from Main Street, a council spokesperson told Reuters on Friday, calling posts claiming otherwise false."
	quoteR2 = "No order banning bicycles on Main Street was signed by Mayor Ellen Park, her office said, and the council's published agenda shows no such vote."
	quoteC1 = "The council voted in December to widen the protected bicycle lane on Main Street, a plan that adds space for cyclists rather than removing it."
	quoteC2 = "A temporary closure of one block of Main Street to all traffic, including bicycles, is planned for a weekend street festival, organisers said."
	quoteC3 = "Some shop owners on Main Street asked the council last year to restrict cycling on the pavement, but no restriction was adopted."
)

type page struct {
	path, title, site, date string // date "" = undated
	paras                   []string
	status                  int // 0 = 200
}

var e2eCutoff = time.Date(2024, 2, 1, 12, 0, 0, 0, time.UTC)

// background writes n distinct paragraphs of plausible reporting about the
// story, so pages are as long as wire stories and not duplicates.
func background(site string, n int) []string {
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
			"city centre, which is due to open in the spring and run for eight weeks (report %d).", site, t, 1200+i*37, i+1))
	}
	return out
}

func e2ePages() map[string]page {
	return map[string]page{
		"www.reuters.com": {path: "/world/us/springfield-bicycle-claim-false-idUS2024", title: "Fact Check: Springfield did not ban bicycles from Main Street",
			site: "Reuters", date: "2024-01-20", paras: append([]string{quoteR1}, background("Reuters", 14)...)},
		"apnews.com": {path: "/article/fact-check-springfield-bicycles", title: "No bicycle ban in Springfield, mayor's office says",
			site: "AP News", date: "2024-01-22", paras: append(background("AP", 6), append([]string{quoteR2}, background("The AP", 8)...)...)},
		"www.bbc.co.uk": {path: "/news/world-us-springfield-main-street", title: "Springfield widens Main Street bike lane",
			site: "BBC News", date: "2024-01-15", paras: append([]string{quoteC1}, background("The BBC", 12)...)},
		"www.npr.org": {path: "/2024/01/18/springfield-main-street-festival", title: "Springfield plans Main Street festival",
			site: "NPR", date: "2024-01-18", paras: append(background("NPR", 5), append([]string{quoteC2}, background("NPR's reporter", 7)...)...)},
		"www.cityherald.example": {path: "/springfield/main-street-cycling", title: "Shop owners and cyclists on Main Street",
			site: "City Herald", date: "2024-01-10", paras: append([]string{quoteC3}, background("The Herald", 10)...)},
		"www.unratedblog.example": {path: "/springfield-bikes", title: "My thoughts on Springfield bicycles and Main Street",
			site: "A Blog", date: "2024-01-12", paras: background("A blogger", 9)},
		"www.rumours.example": {path: "/springfield-bans-bikes", title: "Springfield BANS bicycles!",
			site: "Rumours Daily", date: "2024-01-25", paras: append([]string{"Springfield banned bicycles from Main Street, insiders say."}, background("Rumours", 8)...)},
		"www.latenews.example": {path: "/springfield-bicycles-update", title: "Springfield bicycles: an update",
			site: "Late News", date: "2024-03-05", paras: background("Late News", 9)},
		"www.undated.example": {path: "/springfield-bicycles", title: "Springfield and its bicycles",
			site: "Undated Gazette", paras: background("The Gazette", 9)},
		"www.shortnews.example": {path: "/springfield", title: "Springfield bikes", site: "Short News", date: "2024-01-19",
			paras: []string{"Springfield council discussed bicycles on Main Street on Thursday, officials said."}},
		"www.weather.example": {path: "/weekend-forecast", title: "Weekend forecast", site: "Weather Desk", date: "2024-01-26",
			paras: []string{strings.Repeat("Sunny skies are expected across the region over the weekend, with mild temperatures and a light breeze from the west. ", 12)}},
		"www.gone.example": {path: "/springfield-story", status: http.StatusNotFound},
	}
}

func pageURL(host string, p page) string { return "http://" + host + p.path }

// articleHTML renders a page the way news sites do: navigation, a header,
// the article with its metadata, a footer.
func articleHTML(p page) string {
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>%s | %s</title>\n", html.EscapeString(p.title), html.EscapeString(p.site))
	fmt.Fprintf(&b, "<meta property=\"og:site_name\" content=\"%s\">\n<meta property=\"og:title\" content=\"%s\">\n",
		html.EscapeString(p.site), html.EscapeString(p.title))
	if p.date != "" {
		fmt.Fprintf(&b, "<meta property=\"article:published_time\" content=\"%sT09:30:00Z\">\n", p.date)
	}
	b.WriteString("</head><body>\n<header><nav><a href=\"/\">Home</a> <a href=\"/world\">World</a> <a href=\"/business\">Business</a> <a href=\"/sport\">Sport</a></nav></header>\n")
	fmt.Fprintf(&b, "<main><article><h1>%s</h1>\n", html.EscapeString(p.title))
	if p.date != "" {
		fmt.Fprintf(&b, "<time datetime=\"%s\">%s</time>\n", p.date, p.date)
	}
	for _, para := range p.paras {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(para))
	}
	b.WriteString("</article></main>\n<footer><p>Contact us</p><p>Terms of use</p></footer></body></html>\n")
	return b.String()
}

// newsProxy serves the pages by host and path; anything else is a 404.
func newsProxy(t testing.TB, pages map[string]page) *url.URL {
	return fetchtest.NewProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.ToLower(r.Host)
		p, ok := pages[host]
		if !ok || r.URL.Path != p.path || p.status != 0 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, articleHTML(p))
	}))
}

// searxngServer answers /search?format=json with the URLs resultsFor gives
// for the query, as SearXNG's JSON API does.
func searxngServer(t testing.TB, resultsFor func(q string) []string) *httptest.Server {
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
		var res []result
		for _, u := range resultsFor(r.URL.Query().Get("q")) {
			res = append(res, result{URL: u, Title: "Result for " + u, Content: "Springfield bicycles Main Street", Engine: "duckduckgo"})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"query": r.URL.Query().Get("q"), "number_of_results": len(res),
			"results": res, "answers": []any{}, "suggestions": []any{}, "unresponsive_engines": []any{}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

var articleBlock = regexp.MustCompile(`(?s)<<<BEGIN ARTICLE(?: \d+)?>>>(.*?)<<<END ARTICLE(?: \d+)?>>>`)

// articles gives the text of each article block of an evidence prompt, in
// order (one page per prompt or several, numbered from 1).
func articles(prompt string) []string {
	var out []string
	for _, m := range articleBlock.FindAllStringSubmatch(prompt, -1) {
		out = append(out, m[1])
	}
	return out
}

// evidenceAnswer is the schema's answer: for each article, what quotes says
// of it, keyed by its number.
func evidenceAnswer(arts []string, quotes func(art string) (ref, ctx []string)) string {
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
	b, _ := json.Marshal(map[string]any{"articles": items})
	return string(b)
}

var promptURL = regexp.MustCompile(`https?://[^\s<>"')\]]+`)

// faithfulModel answers like a good model: three queries, the quotes really
// on each page, a correction citing the first two evidence URLs. Hooks let
// a test make it misbehave.
type faithfulModel struct {
	mu              sync.Mutex
	evidenceCalls   int
	pagesRead       int // article blocks seen in evidence prompts
	inventQuote     bool
	inventURL       bool
	queriesAnswer   string // replaces the queries answer when set
	correctionReply *llmtest.Reply
	failFirst       map[string]bool // article markers whose first evidence call gets a 429
	failed          map[string]bool
}

func (m *faithfulModel) handle(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
	switch llmtest.SchemaName(req) {
	case "queries":
		if m.queriesAnswer != "" {
			return llmtest.Reply{Text: m.queriesAnswer}, nil
		}
		return llmtest.Reply{Text: `{"queries":["Springfield bicycle ban Main Street","Springfield council bicycles fact check","Springfield mayor order bicycles"]}`}, nil
	case "evidence":
		arts := articles(llmtest.LastUser(req))
		m.mu.Lock()
		m.evidenceCalls++
		m.pagesRead += len(arts)
		for marker := range m.failFirst {
			if strings.Contains(strings.Join(arts, "\n"), marker) && !m.failed[marker] {
				m.failed[marker] = true
				m.mu.Unlock()
				return llmtest.Reply{}, llmtest.ErrRateLimit
			}
		}
		m.mu.Unlock()
		return llmtest.Reply{Text: evidenceAnswer(arts, func(art string) (ref, ctx []string) {
			for _, q := range []string{quoteR1, quoteR2} {
				if strings.Contains(art, q) {
					ref = append(ref, q)
				}
			}
			for _, q := range []string{quoteC1, quoteC2, quoteC3} {
				if strings.Contains(art, q) {
					ctx = append(ctx, q)
				}
			}
			if m.inventQuote && len(ref) > 0 {
				ref = append(ref, "Mayor Park admitted the bicycle ban was drafted by a prankster on the council staff.")
			}
			return ref, ctx
		})}, nil
	}
	// The correction: stream, citing evidence URLs found in the prompt.
	var urls []string
	for _, u := range promptURL.FindAllString(llmtest.LastUser(req), -1) {
		if !strings.Contains(strings.Join(urls, " "), u) && len(urls) < 2 {
			urls = append(urls, u)
		}
	}
	text := "This post is false. Springfield's council has not banned bicycles from Main Street, and the mayor signed no such order (" +
		strings.Join(urls, "; ") + ")."
	if m.inventURL {
		text += " See also https://www.springfield-truth.example/ban-exposed for details."
	}
	if m.correctionReply != nil {
		r := *m.correctionReply
		if r.Text == "" && r.Refusal == "" {
			r.Text = text
		}
		return r, nil
	}
	return llmtest.Reply{Text: text}, nil
}

// e2eEnv is one loopback world with a config pointing at it.
type e2eEnv struct {
	cfg   *config.Config
	model *faithfulModel
	llm   *llmtest.Server
	proxy *url.URL
	pages map[string]page
}

// newE2E builds the world. order lists the page hosts in the order SearXNG
// returns them for every query; nil spreads all pages over the three queries.
func newE2E(t testing.TB, order []string, llmOpts ...llmtest.Option) *e2eEnv {
	t.Helper()
	pages := e2ePages()
	model := &faithfulModel{failFirst: map[string]bool{}, failed: map[string]bool{}}
	srv := llmtest.NewReplyServer(t, model.handle, llmOpts...)
	urlsFor := func(hosts []string) []string {
		var out []string
		for _, h := range hosts {
			out = append(out, pageURL(h, pages[h]))
		}
		return out
	}
	sx := searxngServer(t, func(q string) []string {
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
	dir := t.TempDir()
	cfg := &config.Config{OpenAIBaseURL: srv.BaseURL, OpenAIAPIKey: "sk-test", Model: "test-model",
		SearXNGURL: sx.URL, AllowPrivateAddresses: true, IgnoreRobots: true,
		RatingsFile: filepath.Join("testdata", "ratings.csv"), DataDir: dir,
		OverridesFile: filepath.Join(dir, "overrides.toml"), ConfigDir: dir}
	return &e2eEnv{cfg: cfg, model: model, llm: srv, proxy: newsProxy(t, pages), pages: pages}
}

func (env *e2eEnv) opts() Options {
	return Options{PageProxy: env.proxy, LLMRetryDelay: 10 * time.Millisecond}
}
