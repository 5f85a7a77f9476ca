package testworld

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// The verdict worlds: posts that are true, false, half true, disputed or
// unverifiable, the rated news pages a search finds for each, and a model
// (StanceModel) that follows muse's prompts and decides from the text it
// is shown, as a careful model would: it splits the post into its
// sentences, quotes each paragraph that bears on a claim with the stance
// the paragraph takes, and writes a correction whose verdict follows the
// stances of the facts it is given.

// VerdictWorld is one post and the pages the search finds for it, by host
// (the hosts of the world's ratings).
type VerdictWorld struct {
	Post  string
	Pages map[string]Page
}

// Sentences of the verdict worlds' pages: what a faithful model quotes.
const (
	LaneClaim    = "Springfield city council voted on Tuesday to widen the protected bicycle lane on Main Street."
	ResignClaim  = "Mayor Ellen Park resigned after the council vote on the bicycle lane."
	BanClaim     = "Springfield city council banned all bicycles from Main Street on Tuesday."
	CostClaim    = "The new bicycle lane on Main Street in Springfield cost two million dollars."
	YachtClaim   = "Springfield mayor Ellen Park secretly owns a yacht called the Golden Heron."
	LaneReuters  = "Springfield city council voted on Tuesday to widen the protected bicycle lane on Main Street, according to the council's published minutes."
	LaneAP       = "The city council in Springfield voted Tuesday to widen the protected bicycle lane along Main Street, officials said."
	LaneBBC      = "Councillors in Springfield voted on Tuesday to widen the protected bicycle lane on Main Street by a metre."
	ResignAP     = "Mayor Ellen Park has not resigned after the council vote on the bicycle lane, her office said on Wednesday."
	ResignNPR    = "Mayor Ellen Park did not resign after the council vote on the bicycle lane and chaired the next council meeting herself."
	BanReuters   = "Springfield city council has not banned bicycles from Main Street, a council spokesperson said on Wednesday, calling posts claiming otherwise false."
	BanAP        = "No bicycles were banned from Main Street in Springfield on Tuesday or since, the city council said."
	CostReuters  = "The new bicycle lane on Main Street in Springfield cost two million dollars, the city's accounts show."
	CostAP       = "The new bicycle lane on Main Street in Springfield did not cost two million dollars: the city auditor put it at half that."
	YachtUnrated = "Springfield residents held a regatta on the river last summer, with boats of every size on the water."
)

func verdictPage(site, title, date string, quote string, at int) Page {
	bg := Background(site, 10)
	paras := append(slices.Clone(bg[:at]), quote)
	return Page{Title: title, Site: site, Date: date, Paras: append(paras, bg[at:]...)}
}

// VerdictWorlds are the worlds of the verdict tests, by name.
func VerdictWorlds() map[string]VerdictWorld {
	lane := func(host string) Page {
		switch host {
		case "www.reuters.com":
			return verdictPage("Reuters", "Springfield council votes to widen Main Street bike lane", "2024-01-24", LaneReuters, 0)
		case "apnews.com":
			return verdictPage("AP News", "Springfield widens protected bicycle lane", "2024-01-24", LaneAP, 2)
		}
		return verdictPage("BBC News", "Springfield's Main Street bike lane to grow", "2024-01-25", LaneBBC, 1)
	}
	withPath := func(p Page, path string) Page { p.Path = path; return p }
	return map[string]VerdictWorld{
		"true": {Post: LaneClaim, Pages: map[string]Page{
			"www.reuters.com": withPath(lane("www.reuters.com"), "/world/us/springfield-bike-lane-vote"),
			"apnews.com":      withPath(lane("apnews.com"), "/article/springfield-bike-lane"),
			"www.bbc.co.uk":   withPath(lane("www.bbc.co.uk"), "/news/springfield-bike-lane"),
		}},
		"false": {Post: BanClaim, Pages: map[string]Page{
			"www.reuters.com": withPath(verdictPage("Reuters", "Fact Check: no bicycle ban on Springfield's Main Street", "2024-01-24", BanReuters, 0), "/fact-check/springfield-bicycles"),
			"apnews.com":      withPath(verdictPage("AP News", "Springfield did not ban bicycles", "2024-01-25", BanAP, 3), "/article/springfield-no-ban"),
		}},
		"mixed": {Post: LaneClaim + " " + ResignClaim, Pages: map[string]Page{
			"www.reuters.com": withPath(lane("www.reuters.com"), "/world/us/springfield-bike-lane-vote"),
			"www.bbc.co.uk":   withPath(lane("www.bbc.co.uk"), "/news/springfield-bike-lane"),
			"apnews.com":      withPath(verdictPage("AP News", "Springfield mayor stays on after bike lane vote", "2024-01-25", ResignAP, 1), "/article/springfield-mayor"),
			"www.npr.org":     withPath(verdictPage("NPR", "Springfield's mayor chairs council after vote", "2024-01-26", ResignNPR, 2), "/2024/01/26/springfield-mayor"),
		}},
		"two-false": {Post: BanClaim + " " + ResignClaim, Pages: map[string]Page{
			"www.reuters.com": withPath(verdictPage("Reuters", "Fact Check: no bicycle ban on Springfield's Main Street", "2024-01-24", BanReuters, 0), "/fact-check/springfield-bicycles"),
			"www.bbc.co.uk":   withPath(verdictPage("BBC News", "No ban on Springfield bicycles", "2024-01-25", BanAP, 2), "/news/springfield-no-ban"),
			"apnews.com":      withPath(verdictPage("AP News", "Springfield mayor stays on after bike lane vote", "2024-01-25", ResignAP, 1), "/article/springfield-mayor"),
			"www.npr.org":     withPath(verdictPage("NPR", "Springfield's mayor chairs council after vote", "2024-01-26", ResignNPR, 2), "/2024/01/26/springfield-mayor"),
		}},
		"disputed": {Post: CostClaim, Pages: map[string]Page{
			"www.reuters.com": withPath(verdictPage("Reuters", "What Springfield's bicycle lane cost", "2024-01-24", CostReuters, 1), "/world/us/springfield-lane-cost"),
			"apnews.com":      withPath(verdictPage("AP News", "Auditor questions Springfield bike lane figure", "2024-01-25", CostAP, 2), "/article/springfield-lane-auditor"),
		}},
		"unverifiable": {Post: YachtClaim, Pages: map[string]Page{
			"www.reuters.com": withPath(verdictPage("Reuters", "Springfield mayor Ellen Park and the river regatta", "2024-01-24", YachtUnrated, 1), "/world/us/springfield-regatta"),
			"apnews.com":      withPath(verdictPage("AP News", "Springfield mayor Ellen Park opens regatta", "2024-01-25", YachtUnrated, 3), "/article/springfield-regatta"),
		}},
	}
}

// NewVerdictWorld builds a world serving w's pages, found by every query,
// and a StanceModel.
func NewVerdictWorld(t testing.TB, w VerdictWorld) (*Env, *StanceModel) {
	t.Helper()
	model := &StanceModel{}
	srv := llmtest.NewReplyServer(t, model.Handle)
	var urls []string
	for _, host := range slices.Sorted(mapKeys(w.Pages)) {
		urls = append(urls, PageURL(host, w.Pages[host]))
	}
	sx := SearXNG(t, func(string) []string { return urls })
	return &Env{Cfg: worldConfig(t, srv.BaseURL, sx.URL), LLM: srv, Proxy: NewsProxy(t, w.Pages), Pages: w.Pages}, model
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// CheckVerdictPost runs post through env's engine.
func (env *Env) CheckVerdictPost(t testing.TB, post string) (*pipeline.Check, error) {
	t.Helper()
	return checkPost(t, env.Cfg, env.Options(), pipeline.Post{Text: post, Author: "City Rumours", Handle: "@cityrumours", PostedAt: Cutoff}, Cutoff)
}

// StanceModel is a model that follows muse's prompts and decides from the
// text it is shown: claims are the post's sentences; a paragraph bears on
// a claim when it holds most of the claim's words, and refutes it when it
// negates it, confirms it otherwise; the correction's verdict follows the
// stances of the facts the prompt lists.
type StanceModel struct {
	Mu sync.Mutex
	// Corrections are the correction prompts it was sent.
	Corrections []string
}

var (
	postBlock   = regexp.MustCompile(`(?s)<<<BEGIN POST>>>.*\n[^\n]*:\n(.*?)\n<<<END POST>>>`)
	claimsBlock = regexp.MustCompile(`(?s)The post's checkable claims, numbered:\n(.*?)\n\n`)
	claimLine   = regexp.MustCompile(`(?m)^(\d+)\. (.+)$`)
	sentenceEnd = regexp.MustCompile(`[.!?]\s+`)
	factHead    = regexp.MustCompile(`^\[(S\d+)\] `)
	factLine    = regexp.MustCompile(`^(Refutes|Supports|Context)(?: claim (\d+))?: (.*)$`)
	wordRe      = regexp.MustCompile(`[\p{L}\p{N}]+`)
)

// Handle answers one chat request.
func (m *StanceModel) Handle(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
	prompt := llmtest.LastUser(req)
	switch llmtest.SchemaName(req) {
	case "queries":
		post := promptPostText(prompt)
		b, _ := json.Marshal(map[string][]string{"queries": {post, "Springfield " + firstWords(post, 6), "Springfield council fact check"},
			"claims": sentenceEnd.Split(strings.TrimSpace(post), -1)})
		return llmtest.Reply{Text: string(b)}, nil
	case "evidence":
		return llmtest.Reply{Text: StanceAnswer(prompt, StanceOverlap)}, nil
	case "":
		m.Mu.Lock()
		m.Corrections = append(m.Corrections, prompt)
		m.Mu.Unlock()
		return llmtest.Reply{Text: stanceCorrection(prompt)}, nil
	}
	return llmtest.Reply{Text: "{}"}, nil
}

func promptPostText(prompt string) string {
	if m := postBlock.FindStringSubmatch(prompt); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

func firstWords(s string, n int) string {
	ws := strings.Fields(s)
	return strings.Join(ws[:min(n, len(ws))], " ")
}

// promptClaims are the numbered claims of a prompt, or the post as its one
// claim.
func promptClaims(prompt string) []string {
	if m := claimsBlock.FindStringSubmatch(prompt + "\n\n"); m != nil {
		var out []string
		for _, l := range claimLine.FindAllStringSubmatch(m[1], -1) {
			out = append(out, l[2])
		}
		return out
	}
	return []string{promptPostText(prompt)}
}

var stopWords = []string{"from", "with", "that", "this", "after", "their", "have", "been", "were", "which", "about", "said"}

var negations = []string{"not", "no", "never", "false", "denied", "didn't", "hasn't"}

func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range wordRe.FindAllString(strings.ToLower(s), -1) {
		if len(w) >= 4 && !slices.Contains(stopWords, w) {
			out[w] = true
		}
	}
	return out
}

// StanceOverlap is the share of a claim's words a paragraph must hold to
// bear on it, as StanceModel reads pages: set by hand for the worlds'
// pages (AVeriTeC's figures choose their own on one half of the data).
const StanceOverlap = 0.7

// stance says whether para bears on claim (holding at least overlap of
// its words) and how: refutes when it negates what the claim does not,
// supports otherwise.
func stance(claim, para string, overlap float64) (string, bool) {
	cw, pw := contentWords(claim), contentWords(para)
	shared := 0
	for w := range cw {
		if pw[w] {
			shared++
		}
	}
	if len(cw) == 0 || float64(shared)/float64(len(cw)) < overlap {
		return "", false
	}
	words := wordRe.FindAllString(strings.ToLower(para), -1)
	claimWords := wordRe.FindAllString(strings.ToLower(claim), -1)
	for _, n := range negations {
		if slices.Contains(words, n) && !slices.Contains(claimWords, n) {
			return "refutes", true
		}
	}
	return "supports", true
}

// StanceAnswer is StanceModel's answer to an evidence prompt: each
// paragraph of each article that holds overlap of a claim's words, quoted
// with its stance on that claim, in the schema's JSON.
func StanceAnswer(prompt string, overlap float64) string {
	claims := promptClaims(prompt)
	type quote struct {
		Quote  string `json:"quote"`
		Stance string `json:"stance"`
		Claim  int    `json:"claim"`
	}
	type article struct {
		Article int     `json:"article"`
		Quotes  []quote `json:"quotes"`
	}
	arts := []article{}
	for i, art := range Articles(prompt) {
		a := article{Article: i + 1, Quotes: []quote{}}
		for _, para := range strings.Split(art, "\n") {
			para = strings.TrimSpace(para)
			for ci, cl := range claims {
				if st, ok := stance(cl, para, overlap); ok {
					a.Quotes = append(a.Quotes, quote{Quote: para, Stance: st, Claim: ci + 1})
				}
			}
		}
		if len(a.Quotes) > 0 {
			arts = append(arts, a)
		}
	}
	b, _ := json.Marshal(map[string]any{"articles": arts})
	return string(b)
}

// stanceCorrection writes the correction the facts of the prompt call
// for, claim by claim, citing each fact's source by id.
func stanceCorrection(prompt string) string {
	claims := promptClaims(prompt)
	by := make([]map[string][]string, len(claims)) // stance → source ids
	for i := range by {
		by[i] = map[string][]string{}
	}
	id := ""
	for _, line := range strings.Split(prompt, "\n") {
		if m := factHead.FindStringSubmatch(line); m != nil {
			id = m[1]
			continue
		}
		if m := factLine.FindStringSubmatch(line); m != nil && id != "" {
			n, _ := strconv.Atoi(m[2])
			i := max(n, 1) - 1
			if i < len(by) && !slices.Contains(by[i][m[1]], id) {
				by[i][m[1]] = append(by[i][m[1]], id)
			}
		}
	}
	cite := func(ids []string) string {
		var b strings.Builder
		for _, s := range ids {
			b.WriteString("[" + s + "]")
		}
		return b.String()
	}
	var parts []string
	verdicts := map[string]bool{}
	for i, cl := range claims {
		st := by[i]
		claim := strings.TrimSuffix(cl, ".")
		switch {
		case len(st["Supports"]) > 0 && len(st["Refutes"]) > 0:
			verdicts["disputed"] = true
			parts = append(parts, fmt.Sprintf("sources disagree on whether %s: some confirm it %s, others refute it %s", claim, cite(st["Supports"]), cite(st["Refutes"])))
		case len(st["Refutes"]) > 0:
			verdicts["false"] = true
			parts = append(parts, fmt.Sprintf("it is not true that %s %s", claim, cite(st["Refutes"])))
		case len(st["Supports"]) > 0:
			verdicts["accurate"] = true
			parts = append(parts, fmt.Sprintf("%s, as reported %s", claim, cite(st["Supports"])))
		default:
			verdicts["unverified"] = true
			parts = append(parts, fmt.Sprintf("no fact given says whether %s", claim))
		}
	}
	open := "unverified"
	switch {
	case verdicts["disputed"]:
		open = "disputed"
	case verdicts["false"] && verdicts["accurate"]:
		open = "misleading"
	case verdicts["false"]:
		open = "false"
	case verdicts["accurate"] && !verdicts["unverified"]:
		open = "accurate"
	}
	return "This post is " + open + ": " + strings.Join(parts, "; ") + "."
}
