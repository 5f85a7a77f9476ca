package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/images"
	"github.com/musecheck/muse/sources/images/imagetest"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// The app's tests run the real engine (pipeline.Engine) over a loopback
// web (testworld.Web) that tells one story: a 2019 video of the Genoa
// bridge collapse shared in March 2024 as Baltimore's. The web serves the
// pages, answers the searches, rates the publishers, and holds a model
// that answers as a faithful one would; everything the check then shows
// is the engine's doing.

var fixedNow = time.Date(2024, 3, 5, 14, 30, 0, 0, time.UTC)

// page is one news page of a world: its address and publisher, when it was
// published (zero: undated), what it says that the model quotes (refuting
// the post, or giving context) and its language ("" English). A publisher
// muse's built-in table does not know, or knows under another name, is
// rated in the world's ratings file: Factuality and Bias under the domain
// RatedAs (its registrable domain when empty).
type page struct {
	URL, Title, Site, Publisher string
	Published                   time.Time
	Factuality, Bias, RatedAs   string
	Refutes, Context            []string
	Lang                        string
	Links                       []string // addresses the article links to
}

// world is what the web says in one language: the model's queries, the
// pages in the order the search gives them, how the model starts a
// correction, and a paragraph of reporting that makes each page as long
// as a news story (%s the site, %d a figure).
type world struct {
	queries    []string
	pages      []page
	lead       string
	background string
	// refuseEvidence: the model refuses every evidence call, in OpenAI's
	// refusal field.
	refuseEvidence bool
}

const englishBackground = "%s correspondents also covered the city budget debate, a rail strike and the weekend's football results; " +
	"about %d readers wrote in, and the newsroom answered their questions about the week's other news in a live blog that ran until late in the evening."

// englishWorld is the English story.
var englishWorld = world{
	queries: []string{"Baltimore bridge collapse video", "Genoa Morandi bridge video 2019", "bridge collapse video fact check"},
	lead:    "This post is misleading. ",
	pages: []page{
		{URL: "https://www.reuters.com/world/fact-check-bridge-video-2024-03-02/", Title: "Fact Check: Video does not show Baltimore bridge collapse",
			Site: "Reuters", Publisher: "Reuters", Published: day(2024, 3, 2),
			Refutes: []string{"A video shared on social media does not show a bridge collapse in Baltimore; it was filmed in 2019 in Genoa, Italy."},
			Context: []string{"The Morandi bridge collapsed on August 14, 2018."}},
		{URL: "https://apnews.com/article/bridge-video-misleading-9f1", Title: "Old video of Genoa bridge shared as new",
			Site: "AP News", Publisher: "Associated Press", Published: day(2024, 3, 3),
			Refutes: []string{"The footage circulating this week first appeared online in 2019 and shows the aftermath in Genoa."},
			Context: []string{"Italian officials confirmed the location."}},
		{URL: "https://www.bbc.com/news/world-europe-45193452", Title: "Genoa bridge collapse: what happened",
			Site: "BBC News", Publisher: "BBC", Published: day(2018, 8, 15),
			Refutes: []string{"A section of the Morandi motorway bridge in Genoa collapsed during a storm."}},
		{URL: "https://viralnewsdaily.example/bridge-shock", Title: "SHOCK: bridge down!!",
			Site: "Viral News Daily", Publisher: "Viral News Daily", Published: day(2024, 3, 4), Factuality: "low", Bias: "questionable",
			Context: []string{"Viewers say the bridge in the video is in Baltimore."}},
		{URL: "https://www.nytimes.com/2024/03/06/us/bridge-video.html", Title: "How an old video went viral",
			Site: "The New York Times", Publisher: "The New York Times", Published: day(2024, 3, 6),
			Context: []string{"The video of the Genoa bridge was first shared as Baltimore's on March 4."}},
	},
	background: englishBackground,
}

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// paragraphs are a page's article text: its quotes, then reporting in
// its language.
func (w world) paragraphs(p page) []string {
	out := append(append([]string{}, p.Refutes...), p.Context...)
	bg := w.background
	if p.Lang == "" {
		bg = englishBackground
	}
	for i := range 3 {
		out = append(out, fmt.Sprintf(bg, p.Site, 1200+len(p.URL)*7+i*31))
	}
	return out
}

// html is a page as its site serves it.
func (w world) html(p page) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=%q><head><meta charset=\"utf-8\">\n<title>%s | %s</title>\n",
		firstNonEmpty(p.Lang, "en"), html.EscapeString(p.Title), html.EscapeString(p.Site))
	fmt.Fprintf(&b, "<meta property=\"og:site_name\" content=\"%s\">\n<meta property=\"og:title\" content=\"%s\">\n",
		html.EscapeString(p.Site), html.EscapeString(p.Title))
	if !p.Published.IsZero() {
		fmt.Fprintf(&b, "<meta property=\"article:published_time\" content=\"%s\">\n", p.Published.Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "</head><body>\n<header><nav><a href=\"/\">Home</a> <a href=\"/world\">World</a></nav></header>\n<main><article><h1>%s</h1>\n",
		html.EscapeString(p.Title))
	for _, para := range w.paragraphs(p) {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(para))
	}
	for _, u := range p.Links {
		fmt.Fprintf(&b, "<p>The <a href=\"%s\">post</a> was shared widely.</p>\n", html.EscapeString(u))
	}
	b.WriteString("</article></main>\n<footer><p>Contact us</p><p>Terms of use</p></footer></body></html>\n")
	return b.String()
}

// ratings is the world's ratings file: the publishers it rates itself
// (nil: none, muse's built-in table rates them all).
func (w world) ratings() []byte {
	var b []byte
	for _, p := range w.pages {
		if p.Factuality != "" {
			b = fmt.Appendf(b, "%s,%s,%s,%s\n", firstNonEmpty(p.RatedAs, sources.RegistrableDomain(sources.HostOf(p.URL))),
				p.Factuality, p.Bias, p.Publisher)
		}
	}
	if b == nil {
		return nil
	}
	return append([]byte("domain,factuality,bias,publisher\n"), b...)
}

// The tokens each of the model's answers reports (prompt, completion): at
// the world's price, 0.10 and 4.25 dollars a million, a check without
// images uses 2,040 tokens and costs $0.0012. The vision model describes
// the post's image as imageDescribed, and OCR reads imageText in it.
var (
	worldPrice     = setup.Price{Prompt: 0.10, Completion: 4.25}
	queriesTokens  = [2]int{600, 40}
	evidenceTokens = [2]int{450, 60} // a call, of one page
	correctTokens  = [2]int{300, 80}
	describeTokens = [2]int{500, 30}
	imageDescribed = "A photo of a collapsed road bridge over a river with the caption \"BREAKING: BALTIMORE BRIDGE DOWN\""
	imageText      = "BREAKING: BALTIMORE BRIDGE DOWN"
	factSourceRE   = regexp.MustCompile(`^\[(S\d+)\] `)
)

// model answers as a faithful model does: the world's queries, and one
// from each image's description; the quotes really on each page; a
// correction that leads in, states the refuting facts and cites their
// sources by id.
func (w world) model(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
	prompt := llmtest.LastUser(req)
	switch llmtest.SchemaName(req) {
	case "queries":
		qs := append([]string{}, w.queries...)
		_, imgs, _ := strings.Cut(prompt, "Attached images:\n")
		for _, l := range strings.Split(imgs, "\n") {
			d, ok := strings.CutPrefix(l, "- ")
			if !ok {
				break // the images' list is over
			}
			words := strings.Fields(strings.TrimPrefix(d, "A photo of "))
			qs = append(qs, strings.Join(words[:min(len(words), 8)], " "))
		}
		b, _ := json.Marshal(map[string][]string{"queries": qs})
		return llmtest.Reply{Text: string(b), PromptTokens: queriesTokens[0], CompletionTokens: queriesTokens[1]}, nil
	case "evidence":
		if w.refuseEvidence {
			return llmtest.Reply{Refusal: "I'm sorry, but I can't help with that request."}, nil
		}
		text := testworld.EvidenceAnswer(testworld.Articles(prompt), func(art string) (ref, ctx []string) {
			for _, p := range w.pages {
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
		})
		return llmtest.Reply{Text: text, PromptTokens: evidenceTokens[0], CompletionTokens: evidenceTokens[1]}, nil
	case "support":
		return llmtest.Reply{Text: supportAnswer(prompt), PromptTokens: 300, CompletionTokens: 80}, nil
	case "image_description":
		b, _ := json.Marshal(map[string]string{"description": imageDescribed})
		return llmtest.Reply{Text: string(b), PromptTokens: describeTokens[0], CompletionTokens: describeTokens[1]}, nil
	}
	var facts, ids []string
	_, block, _ := strings.Cut(prompt, "<<<BEGIN FACTS>>>")
	block, _, _ = strings.Cut(block, "<<<END FACTS>>>")
	id := ""
	for _, l := range strings.Split(block, "\n") {
		if m := factSourceRE.FindStringSubmatch(l); m != nil {
			id = m[1]
		}
		if f, ok := strings.CutPrefix(l, "Refutes: "); ok {
			facts = append(facts, strings.TrimSuffix(f, "."))
			ids = append(ids, id)
		}
	}
	text := w.lead + strings.Join(facts, "; ") + ". " + strings.Join(ids, " ")
	return llmtest.Reply{Text: strings.TrimSpace(text), PromptTokens: correctTokens[0], CompletionTokens: correctTokens[1]}, nil
}

// web serves the world, with the post image bridgeImage.
func (w world) web(t *testing.T) *testworld.Web {
	t.Helper()
	pages := map[string]string{}
	for _, p := range w.pages {
		pages[p.URL] = w.html(p)
	}
	return testworld.NewWeb(t, testworld.WebOptions{
		Pages: pages,
		Files: map[string][]byte{bridgeImage: imagetest.PNG(t, imagetest.Scene(0, 320, 240))},
		Results: func(string, string) []testworld.Result {
			var res []testworld.Result
			for _, p := range w.pages {
				res = append(res, testworld.Result{URL: p.URL, Title: p.Title, Content: p.Title})
			}
			return res
		},
		Model:   w.model,
		Price:   worldPrice,
		Ratings: w.ratings(),
		OCR:     func(context.Context, *images.Image) (string, error) { return imageText, nil },
	})
}

// engineRunner is the real engine as the app's Runner, over a world's web.
// It notes every run it is asked for (the stage it starts from, a copy of
// the check it is handed) so tests can see what the app sent; the web can
// hold the correction mid-stream (testworld.Web.HoldStreams).
type engineRunner struct {
	*pipeline.Engine
	web *testworld.Web

	mu    sync.Mutex
	froms []pipeline.Stage
	seen  []*pipeline.Check
}

// newRunner is the engine over the English story, or over the world given.
func newRunner(t *testing.T, in ...world) *engineRunner {
	t.Helper()
	w := englishWorld
	if len(in) > 0 {
		w = in[0]
	}
	web := w.web(t)
	// One page per evidence call, one call at a time: the pages are read
	// in rank order and the reading stops once two refute, as it does when
	// the calls return in that order.
	e := web.Engine(t, pipeline.Options{Snapshots: true, Now: func() time.Time { return fixedNow },
		EvidenceBatch: 1, EvidenceParallel: 1, LLMRetryDelay: 10 * time.Millisecond})
	return &engineRunner{Engine: e, web: web}
}

func (r *engineRunner) Run(ctx context.Context, c *pipeline.Check, from pipeline.Stage, events chan<- pipeline.Event) error {
	r.mu.Lock()
	r.froms = append(r.froms, from)
	r.seen = append(r.seen, c.Clone())
	r.mu.Unlock()
	return r.Engine.Run(ctx, c, from, events)
}

func (r *engineRunner) runs() ([]pipeline.Stage, []*pipeline.Check) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pipeline.Stage(nil), r.froms...), append([]*pipeline.Check(nil), r.seen...)
}

// supportAnswer judges each sentence of the support prompt as a faithful
// model does, and writes it as models do (a preamble, a fenced block): a
// sentence holding a quote it cites, less its full stop, is supported.
func supportAnswer(prompt string) string {
	var items []string
	for _, block := range strings.Split(prompt, "<<<BEGIN SENTENCE ")[1:] {
		n, rest, _ := strings.Cut(block, ">>>")
		text, cites, _ := strings.Cut(rest, "<<<END SENTENCE")
		status := "unsupported"
		for _, l := range strings.Split(cites, "\n") {
			if q := strings.Trim(strings.TrimSpace(l), `"`); strings.HasPrefix(strings.TrimSpace(l), `"`) && strings.Contains(text, strings.TrimSuffix(q, ".")) {
				status = "supported"
			}
		}
		items = append(items, fmt.Sprintf(`{"n": %s, "status": %q, "reason": "Checked against the quotes."}`, n, status))
	}
	return "Here is my assessment.\n```json\n{\"sentences\": [" + strings.Join(items, ", ") + "]}\n```"
}
