package testworld

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/fetch/fetchtest"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// The multilingual worlds: a post and local news pages in Spanish, German,
// Portuguese, Hindi, Arabic, Japanese, Chinese, Korean, Thai or Greek
// (testdata/languages.json, written for the tests), pages whose dates
// appear only in their visible text in the local format (native digits,
// Japanese eras, Thai Buddhist-era years, a Hijri date beside the
// Gregorian one), a SearXNG that answers local queries with local pages and an
// English query with an English page, and a model that answers in the
// language its prompt names, and in English when the prompt names none.

//go:embed testdata/languages.json
var languagesJSON []byte

//go:embed testdata/ratings_languages.csv
var languageRatingsCSV []byte

// LangWorld is one language's post, what a model writes about it, and its
// pages.
type LangWorld struct {
	Lang       string     `json:"lang"`
	Post       string     `json:"post"`
	Queries    []string   `json:"queries"`    // in Lang
	English    string     `json:"english"`    // the English query of an international claim; "" when the claim is local
	Correction string     `json:"correction"` // in Lang, before the sources' URLs
	Background string     `json:"background"` // a paragraph: site, topic, number
	Topics     []string   `json:"topics"`
	Pages      []LangPage `json:"pages"`
	// EnglishPage is found by the English query only.
	EnglishPage *LangPage `json:"english_page"`

	englishBackground string // the English pages' reporting
	englishTopics     []string
}

// LangPage is one news page of a LangWorld.
type LangPage struct {
	Host, Path, Site, Title string
	Dateline                string // the date as the page shows it, in its language
	Date                    string // what it must be read as (YYYY-MM-DD)
	Late                    bool   // published after the cutoff
	Refutes, Context        []string
}

// URL is the page's address.
func (p LangPage) URL() string { return "http://" + p.Host + p.Path }

// Paragraphs are the page's article text: its quotes, then reporting.
func (p LangPage) Paragraphs(w LangWorld) []string {
	out := append(append([]string{}, p.Refutes...), p.Context...)
	bg, topics := w.Background, w.Topics
	if w.EnglishPage != nil && p.Host == w.EnglishPage.Host {
		bg, topics = w.englishBackground, w.englishTopics
	}
	for i, t := range topics {
		out = append(out, fmt.Sprintf(bg, p.Site, t, 900+len(p.Host)*31+i*7))
	}
	return out
}

// LangCutoff is the multilingual worlds' post time.
var LangCutoff = func() time.Time {
	var f struct {
		Cutoff time.Time `json:"cutoff"`
	}
	if err := json.Unmarshal(languagesJSON, &f); err != nil {
		panic(err) // embedded: caught by every test of the worlds
	}
	return f.Cutoff
}()

// LangWorlds are the worlds of testdata/languages.json, by language.
func LangWorlds(t testing.TB) map[string]LangWorld {
	t.Helper()
	var f struct {
		Background string      `json:"english_background"`
		Topics     []string    `json:"english_topics"`
		Worlds     []LangWorld `json:"worlds"`
	}
	if err := json.Unmarshal(languagesJSON, &f); err != nil {
		t.Fatal(err)
	}
	out := map[string]LangWorld{}
	for _, w := range f.Worlds {
		w.englishBackground, w.englishTopics = f.Background, f.Topics
		out[w.Lang] = w
	}
	return out
}

// AllPages are the world's pages, the English one included.
func (w LangWorld) AllPages() []LangPage {
	out := append([]LangPage{}, w.Pages...)
	if w.EnglishPage != nil {
		out = append(out, *w.EnglishPage)
	}
	return out
}

// LocalHTML renders a page as a news site in its language does: the lang
// attribute, navigation, the article with its dateline in visible text
// only (no date in metadata or a <time> element), a footer.
func LocalHTML(code string, w LangWorld, p LangPage) string {
	var b strings.Builder
	dir := ""
	if code == "ar" {
		dir = ` dir="rtl"`
	}
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=\"%s\"%s><head><meta charset=\"utf-8\">\n", code, dir)
	fmt.Fprintf(&b, "<title>%s | %s</title>\n", html.EscapeString(p.Title), html.EscapeString(p.Site))
	fmt.Fprintf(&b, "<meta property=\"og:site_name\" content=\"%s\">\n<meta property=\"og:title\" content=\"%s\">\n",
		html.EscapeString(p.Site), html.EscapeString(p.Title))
	b.WriteString("</head><body>\n<header><nav><a href=\"/\">Inicio · Start · Início · मुखपृष्ठ · الرئيسية</a></nav></header>\n")
	fmt.Fprintf(&b, "<main><article><h1>%s</h1>\n", html.EscapeString(p.Title))
	fmt.Fprintf(&b, "<p class=\"dateline\">%s</p>\n", html.EscapeString(p.Dateline))
	for _, para := range p.Paragraphs(w) {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(para))
	}
	b.WriteString("</article></main>\n<footer><p>© " + html.EscapeString(p.Site) + "</p></footer></body></html>\n")
	return b.String()
}

// LangEnv is one multilingual world with a config pointing at it.
type LangEnv struct {
	Cfg   *setup.Config
	World LangWorld
	Model *LangModel
	LLM   *llmtest.Server
	Proxy *url.URL

	mu       sync.Mutex
	searches []Search
}

// Search is one query SearXNG was asked, with its language parameter.
type Search struct{ Query, Language string }

// Searches are the queries SearXNG was asked so far.
func (env *LangEnv) Searches() []Search {
	env.mu.Lock()
	defer env.mu.Unlock()
	return append([]Search{}, env.searches...)
}

// NewLang builds the world of the language code.
func NewLang(t testing.TB, code string) *LangEnv {
	t.Helper()
	w, ok := LangWorlds(t)[code]
	if !ok {
		t.Fatalf("no world in %q", code)
	}
	env := &LangEnv{World: w, Model: &LangModel{World: w}}
	env.LLM = llmtest.NewReplyServer(t, env.Model.Handle)
	pages := map[string]LangPage{}
	for _, p := range w.AllPages() {
		pages[p.Host] = p
	}
	env.Proxy = fetchtest.NewProxy(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		p, ok := pages[strings.ToLower(r.Host)]
		if !ok || r.URL.Path != p.Path {
			http.NotFound(rw, r)
			return
		}
		code := w.Lang
		if w.EnglishPage != nil && p.Host == w.EnglishPage.Host {
			code = "en"
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(rw, LocalHTML(code, w, p))
	}))
	sx := SearXNGLanguage(t, func(q, language string) []string {
		env.mu.Lock()
		env.searches = append(env.searches, Search{q, language})
		env.mu.Unlock()
		var found []string
		switch {
		case w.English != "" && q == w.English && w.EnglishPage != nil:
			found = []string{w.EnglishPage.URL()}
		case slices.Contains(w.Queries, q):
			for _, p := range w.Pages {
				found = append(found, p.URL())
			}
		}
		return found
	})
	dir := t.TempDir()
	ratings := filepath.Join(dir, "ratings.csv")
	if err := os.WriteFile(ratings, languageRatingsCSV, 0o644); err != nil {
		t.Fatal(err)
	}
	env.Cfg = &setup.Config{OpenAIBaseURL: env.LLM.BaseURL, OpenAIAPIKey: "sk-test", Model: "test-model",
		SearXNGURL: sx.URL, AllowPrivateAddresses: true, IgnoreRobots: true, RatingsFile: ratings, DataDir: dir,
		OverridesFile: filepath.Join(dir, "overrides.toml"), ConfigDir: dir}
	return env
}

// Options are the engine options that reach the world.
func (env *LangEnv) Options() pipeline.Options { return worldOptions(env.Proxy) }

// Check runs the world's post (language left to detection) through an
// engine built from env's configuration with opts.
func (env *LangEnv) Check(t testing.TB, opts pipeline.Options) (*pipeline.Check, error) {
	t.Helper()
	return checkPost(t, env.Cfg, opts, pipeline.Post{Text: env.World.Post, PostedAt: LangCutoff}, LangCutoff)
}

// LangModel answers like a good model that follows the language its
// prompt names ("Spanish (es)"): queries in that language (and the English
// one of an international claim), the quotes really on each page in the
// page's own words, and a correction in the language asked for citing the
// evidence URLs. A prompt that names no language gets English, as a model
// left to itself often answers, so a prompt that forgets the language
// fails the test.
type LangModel struct {
	World LangWorld

	mu      sync.Mutex
	prompts map[string][]string // by task: the user messages seen
}

// Prompts are the user messages of the task ("queries", "evidence",
// "correction") the model was sent.
func (m *LangModel) Prompts(task string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string{}, m.prompts[task]...)
}

var (
	queriesLanguage    = regexp.MustCompile(`The post is written in [^()\n]+ \(([a-z]{2})\)\. Write queries 1 to`)
	englishAlso        = regexp.MustCompile(`also write query \d+ in English \(en\)`)
	correctionLanguage = regexp.MustCompile(`is written in [^()\n]+ \(([a-z]{2})\)`)
)

// Handle answers one chat request.
func (m *LangModel) Handle(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
	prompt := llmtest.LastUser(req)
	task := llmtest.SchemaName(req)
	if task == "" {
		task = "correction"
	}
	m.mu.Lock()
	if m.prompts == nil {
		m.prompts = map[string][]string{}
	}
	m.prompts[task] = append(m.prompts[task], prompt)
	m.mu.Unlock()
	w := m.World
	switch task {
	case "queries":
		var qs []string
		if mm := queriesLanguage.FindStringSubmatch(prompt); mm != nil && mm[1] == w.Lang {
			qs = append(qs, w.Queries...)
			if w.English != "" && englishAlso.MatchString(prompt) {
				qs = append(qs, w.English)
			}
		} else {
			qs = []string{cmp.Or(w.English, "bicycle ban fact check")}
		}
		b, _ := json.Marshal(map[string]any{"queries": qs})
		return llmtest.Reply{Text: string(b)}, nil
	case "evidence":
		return llmtest.Reply{Text: EvidenceAnswer(Articles(prompt), func(art string) (ref, ctx []string) {
			for _, p := range w.AllPages() {
				for _, q := range p.Refutes {
					if strings.Contains(art, q) {
						ref = append(ref, q)
					}
				}
				for _, q := range p.Context {
					if strings.Contains(art, q) {
						ctx = append(ctx, q)
					}
				}
			}
			return ref, ctx
		})}, nil
	}
	text := "This post is false: no such ban was ordered"
	if mm := correctionLanguage.FindStringSubmatch(prompt); mm != nil && mm[1] == w.Lang {
		text = w.Correction
	}
	return llmtest.Reply{Text: text + " " + strings.Join(PromptSources(prompt), " ") + "."}, nil
}

// Label names the world's language as the prompts must ("Spanish (es)").
func (w LangWorld) Label() string { return lang.Label(w.Lang) }
