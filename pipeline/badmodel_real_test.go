package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// TestBadModelOnRealPages: a loopback model that answers the evidence call
// with prose, HTML, nothing, a refusal, JSON for another task or quotes
// from the post itself, on a real tweet and the real PolitiFact page about
// it. Each ends in a clear outcome — muse's fixed text saying the page was
// not judged (or, for quotes not on the page, that no credible source was
// found), a warning naming what was wrong, and ErrNoEvidence saying the
// model's answers could not be used — never a panic, never an unverified
// quote used; a faithful answer on the same page is the control.
func TestBadModelOnRealPages(t *testing.T) {
	post, _, title, paras := pipeline.RealPolitiFactPair(t, 7)
	page := testworld.Page{Path: "/factchecks/real-pair/", Title: title, Site: "PolitiFact", Date: "2016-01-05", Paras: paras}
	pages := map[string]testworld.Page{"www.politifact.com": page}
	pageURL := testworld.PageURL("www.politifact.com", page)
	postSentence := strings.TrimSpace(strings.Split(post, "\n")[0])
	var paraQuote string
	for _, p := range paras {
		if len(p) > 80 {
			paraQuote = p
			break
		}
	}
	articles := func(refutes ...string) string {
		b, _ := json.Marshal(map[string]any{"articles": []any{map[string]any{"article": 1, "refutes": refutes, "context": []string{}}}})
		return string(b)
	}
	cases := []struct {
		name  string
		reply llmtest.Reply
		warn  string
		good  bool
	}{
		{"prose", llmtest.Reply{Text: "This article explains the claim in detail and shows that it does not hold up."}, "malformed", false},
		{"html", llmtest.Reply{Text: "<html><body><h1>502 Bad Gateway</h1></body></html>"}, "malformed", false},
		{"empty", llmtest.Reply{Text: ""}, "empty answer", false},
		{"refusal field", llmtest.Reply{Refusal: "I can't help with that request."}, "model refused", false},
		{"refusal text", llmtest.Reply{Text: "I'm sorry, but I can't assist with that."}, "model refused", false},
		{"json for another task", llmtest.Reply{Text: `{"queries": ["fact check", "politifact"]}`}, "malformed", false},
		{"quotes from the post", llmtest.Reply{Text: articles(postSentence + " " + postSentence)}, "left out a quote", false},
		{"faithful (control)", llmtest.Reply{Text: "<think>The page says {x}.</think>" + articles("According to the article, "+paraQuote)}, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewReplyServer(t, func(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
				switch llmtest.SchemaName(req) {
				case "queries":
					return llmtest.Reply{Text: `{"queries":["` + strings.ReplaceAll(title, `"`, "") + `"]}`}, nil
				case "evidence":
					return tc.reply, nil
				}
				return llmtest.Reply{Text: "This post is false, says PolitiFact (" + pageURL + ")."}, nil
			})
			sx := testworld.SearXNG(t, func(string) []string { return []string{pageURL} })
			e, closeFn, err := setup.NewFromConfig(context.Background(), worldConfig(t, srv.BaseURL, sx.URL),
				pipeline.Options{PageProxy: testworld.NewsProxy(t, pages), LLMRetryDelay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer closeFn()
			c := e.NewCheck(pipeline.Post{Text: post, PostedAt: time.Date(2018, 6, 1, 0, 0, 0, 0, time.UTC)}, time.Time{})
			err = e.Run(context.Background(), c, pipeline.StageImages, nil)
			for _, ev := range c.Evidence {
				if ev.Included && !ev.Verified {
					t.Errorf("unverified quote used: %+v", ev)
				}
			}
			if tc.good {
				if err != nil || len(c.IncludedEvidence()) == 0 || c.IncludedEvidence()[0].Quote != paraQuote {
					t.Fatalf("control: err %v, evidence %+v", err, c.Evidence)
				}
				return
			}
			if !errors.Is(err, pipeline.ErrNoEvidence) || !strings.Contains(err.Error(), "the model's answers could not be used") {
				t.Errorf("err %v, want ErrNoEvidence saying the answers could not be used", err)
			}
			// A page whose answer was lost was not judged: muse says so and
			// never that no credible source was found. A page whose quotes
			// are not on it was judged.
			judged := tc.name == "quotes from the post"
			if s := c.SourceByURL(pageURL); s == nil || (s.Status == pipeline.StatusNotJudged) == judged {
				t.Errorf("the page: %+v", s)
			}
			if judged && c.Correction.Text != pipeline.NoSourceText {
				t.Errorf("correction %q", c.Correction.Text)
			}
			if !judged && (!strings.HasPrefix(c.Correction.Text, pipeline.NotJudgedLead) || !c.Correction.Unsourced()) {
				t.Errorf("correction %q, want it to say the page was not judged", c.Correction.Text)
			}
			if w := pipeline.Warnings(c); !strings.Contains(w, tc.warn) {
				t.Errorf("warnings do not say %q:\n%s", tc.warn, w)
			}
			if tc.name == "quotes from the post" {
				if len(c.Evidence) == 0 || c.Evidence[0].Verified || !strings.Contains(c.Evidence[0].Reason, "closest passage") {
					t.Errorf("a quote from the post: %+v", c.Evidence)
				}
			}
		})
	}
}
