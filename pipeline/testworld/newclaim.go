package testworld

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/fetch/fetchtest"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// The new-claim world: a post on X makes a claim no page made before it
// (the mayor resigned tonight), so only pages published after the post
// refute it: a wire report the next morning, a fact-check of this very post
// whose ClaimReview names the post's address and which embeds it, and a
// report that links to it. Before the post there are only context: a story
// two days before, and one two years before (stale).

const (
	NewClaimPost = "BREAKING: Springfield mayor Ellen Park has resigned tonight over the Harbour Bridge contract. " +
		"The council will name a replacement tomorrow. #Springfield"
	// NewClaimPostURL is the post's address; the fact-check embeds it
	// under twitter.com, as X's embed code writes it.
	NewClaimPostURL = "https://x.com/cityrumours/status/1766912345678901234"

	NewClaimReuters = "Springfield Mayor Ellen Park has not resigned, her office told Reuters on Monday, a day after a post on X claimed she had quit over the Harbour Bridge contract."
	NewClaimBBC     = "A post on X claiming that Springfield Mayor Ellen Park resigned over the Harbour Bridge contract is false: Park chaired the council's Monday meeting and said she had no plan to step down."
	NewClaimNPR     = "Mayor Ellen Park laughed off the viral post about her resignation at a press briefing on Tuesday, saying the Harbour Bridge contract vote would go ahead as planned."
	NewClaimAP      = "Springfield's council will vote next week on the Harbour Bridge repair contract, which Mayor Ellen Park has backed since January."
	NewClaimHerald  = "Ellen Park was sworn in as Springfield's mayor on Tuesday, promising to finish the Harbour Bridge repairs within two years."
	// NewClaimRating is the fact-check's rating of the post.
	NewClaimRating = "False"
)

// NewClaimPostedAt is when the post appeared.
var NewClaimPostedAt = time.Date(2024, 3, 10, 20, 0, 0, 0, time.UTC)

// newClaimPage is a page of the world with what it adds to ArticleHTML:
// JSON-LD in its head, an embed or a link in its article.
type newClaimPage struct {
	Page
	head, body string
}

// NewClaimURLs are the world's pages, in the order the search returns
// them: oldest first, so that rank, not the search, puts them in order.
var NewClaimURLs = []string{
	"http://www.cityherald.example/springfield/mayor-park-sworn-in",
	"http://apnews.com/article/springfield-harbour-bridge-contract-vote",
	"http://www.reuters.com/world/us/springfield-mayor-park-not-resigning-2024-03-11",
	"http://www.bbc.co.uk/news/fact-check-springfield-mayor-resignation",
	"http://www.npr.org/2024/03/12/springfield-mayor-park-briefing",
}

func newClaimBackground(site string, n int) []string {
	topics := []string{"the library's opening hours", "the summer music programme", "school bus routes", "the new recycling bins",
		"the farmers' market", "the swimming pool repairs", "street lighting", "the youth football league", "the museum's archive",
		"the animal shelter", "the community garden", "snow clearing"}
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s spoke to residents of the town about %s, which %d of them wrote to the local "+
			"paper about last year. Most said they were content with how things are run, though several asked for longer "+
			"hours at weekends and better notice of changes, which the town hall has promised to post online (note %d).",
			site, topics[i%len(topics)], 120+i*17, i+1))
	}
	return out
}

func newClaimPages() map[string]newClaimPage {
	embed := `<blockquote class="twitter-tweet"><p lang="en" dir="ltr">BREAKING: Springfield mayor Ellen Park has resigned tonight over the Harbour Bridge contract.</p>` +
		`&mdash; City Rumours (@cityrumours) <a href="https://twitter.com/cityrumours/status/1766912345678901234?ref_src=twsrc%5Etfw">March 10, 2024</a></blockquote>`
	claimReview := `<script type="application/ld+json">{"@context":"https://schema.org","@type":"ClaimReview",` +
		`"url":"http://www.bbc.co.uk/news/fact-check-springfield-mayor-resignation","datePublished":"2024-03-12",` +
		`"claimReviewed":"Springfield mayor Ellen Park resigned over the Harbour Bridge contract",` +
		`"author":{"@type":"Organization","name":"BBC Verify"},` +
		`"itemReviewed":{"@type":"Claim","author":{"@type":"Person","name":"City Rumours"},` +
		`"appearance":{"@type":"SocialMediaPosting","url":"https://twitter.com/cityrumours/status/1766912345678901234"}},` +
		`"reviewRating":{"@type":"Rating","ratingValue":1,"bestRating":5,"worstRating":1,"alternateName":"` + NewClaimRating + `"}}</script>`
	pages := []newClaimPage{
		{Page: Page{Title: "Ellen Park sworn in as Springfield mayor", Site: "City Herald", Date: "2022-01-05",
			Paras: append([]string{NewClaimHerald}, newClaimBackground("The Herald", 9)...)}},
		{Page: Page{Title: "Springfield council to vote on Harbour Bridge contract", Site: "AP News", Date: "2024-03-08",
			Paras: append(newClaimBackground("AP", 4), append([]string{NewClaimAP}, newClaimBackground("The AP", 6)...)...)}},
		{Page: Page{Title: "Springfield mayor has not resigned, her office says", Site: "Reuters", Date: "2024-03-11",
			Paras: append([]string{NewClaimReuters}, newClaimBackground("Reuters", 10)...)}},
		{Page: Page{Title: "Fact check: Springfield's mayor has not resigned", Site: "BBC News", Date: "2024-03-12",
			Paras: append([]string{NewClaimBBC}, newClaimBackground("BBC Verify", 9)...)}, head: claimReview, body: embed},
		{Page: Page{Title: "Mayor Park laughs off resignation post", Site: "NPR", Date: "2024-03-12",
			Paras: append(newClaimBackground("NPR", 3), append([]string{NewClaimNPR}, newClaimBackground("NPR's reporter", 6)...)...)},
			body: `<p>The <a href="https://x.com/cityrumours/status/1766912345678901234">post</a> was shared more than 20,000 times.</p>`},
	}
	out := map[string]newClaimPage{}
	for i, p := range pages {
		u, _ := url.Parse(NewClaimURLs[i])
		p.Path = u.Path
		out[u.Host] = p
	}
	return out
}

func (p newClaimPage) html() string {
	h := ArticleHTML(p.Page)
	h = strings.Replace(h, "</head>", p.head+"</head>", 1)
	return strings.Replace(h, "</article>", p.body+"</article>", 1)
}

// NewClaimModel answers like a faithful model over the new-claim world:
// queries about the mayor, the quotes really on each page (refuting the
// post: the Reuters report and the fact-check), and a correction citing
// the first two sources of its prompt.
func NewClaimModel(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
	switch llmtest.SchemaName(req) {
	case "queries":
		return llmtest.Reply{Text: `{"queries":["Springfield mayor Ellen Park resigned","Ellen Park resignation Harbour Bridge fact check","Springfield council mayor replacement"]}`}, nil
	case "evidence":
		return llmtest.Reply{Text: EvidenceAnswer(Articles(llmtest.LastUser(req)), func(art string) (ref, ctx []string) {
			for _, q := range []string{NewClaimReuters, NewClaimBBC} {
				if strings.Contains(art, q) {
					ref = append(ref, q)
				}
			}
			for _, q := range []string{NewClaimNPR, NewClaimAP, NewClaimHerald} {
				if strings.Contains(art, q) {
					ctx = append(ctx, q)
				}
			}
			return ref, ctx
		})}, nil
	}
	ids := PromptSources(llmtest.LastUser(req))
	return llmtest.Reply{Text: "This post is false. Since the post, the mayor's office said she has not resigned " +
		strings.Join(ids[:min(2, len(ids))], "") + "."}, nil
}

// ClaimEnv is the new-claim world with a config pointing at it.
type ClaimEnv struct {
	Cfg   *setup.Config
	LLM   *llmtest.Server
	Proxy *url.URL
}

// NewClaim builds the new-claim world.
func NewClaim(t testing.TB) *ClaimEnv {
	t.Helper()
	pages := newClaimPages()
	srv := llmtest.NewReplyServer(t, NewClaimModel)
	sx := SearXNG(t, func(string) []string { return NewClaimURLs })
	proxy := fetchtest.NewProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[strings.ToLower(r.Host)]
		if !ok || r.URL.Path != p.Path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, p.html())
	}))
	cfg := worldConfig(t, srv.BaseURL, sx.URL)
	cfg.NoCache = true
	return &ClaimEnv{Cfg: cfg, LLM: srv, Proxy: proxy}
}

// Post is the world's post, with its address and time.
func (env *ClaimEnv) Post() pipeline.Post {
	return pipeline.Post{Text: NewClaimPost, Author: "City Rumours", Handle: "@cityrumours", PostedAt: NewClaimPostedAt,
		URL: NewClaimPostURL, Platform: "X"}
}

// Check runs the world's post with the cutoff given (zero: none).
func (env *ClaimEnv) Check(t testing.TB, opts pipeline.Options, cutoff time.Time) (*pipeline.Check, error) {
	t.Helper()
	o := opts
	o.PageProxy, o.LLMRetryDelay = env.Proxy, 10*time.Millisecond
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(env.Post(), cutoff)
	err = e.Run(context.Background(), c, pipeline.StageImages, nil)
	return c, err
}
