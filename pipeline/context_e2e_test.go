package pipeline_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
	"github.com/musecheck/muse/sources/posts"
)

// A post whose claim lives only in what it points at — its link card, the
// post it replies to, the post it quotes — checks as well as one that
// states it, on Bluesky, Mastodon and X: the queries are written for the
// claim, the world's fact-checks are found, and the correction says whose
// claim it is and cites the refuting pages.

// The claim, and what the posts' authors write around it.
const (
	ctxClaim = "Springfield city council banned all bicycles from Main Street starting Monday, insiders at the town hall told us, and cyclists will be fined."
	ctxAdmit = "They're finally admitting it 👇"
	ctxReply = "Exactly, and it's ten times worse."
	ctxQuote = "Told you so."
)

var ctxPosted = testworld.Cutoff.Add(-2 * time.Hour)

// contextPlatforms is a loopback Bluesky AppView, Mastodon instance and X
// syndication endpoint serving, on each, a post whose claim is only in its
// card, only in its parent, only in its quote; calls counts the requests.
func contextPlatforms(t *testing.T) (*httptest.Server, func() int) {
	t.Helper()
	var mu sync.Mutex
	calls := 0
	when := ctxPosted.Format("2006-01-02T15:04:05.000Z")
	before := ctxPosted.Add(-time.Hour).Format("2006-01-02T15:04:05.000Z")
	rumours := testworld.PageURL("www.rumours.example", testworld.Pages()["www.rumours.example"])
	did := "did:plc:ctxworld"
	author := map[string]any{"did": did, "handle": "cityfan.bsky.social", "displayName": "City Fan"}
	bskyPost := func(rkey, text string, embed map[string]any, reply bool) map[string]any {
		rec := map[string]any{"$type": "app.bsky.feed.post", "createdAt": when, "text": text, "langs": []string{"en"}}
		if reply {
			ref := map[string]string{"uri": "at://" + did + "/app.bsky.feed.post/3kclaim", "cid": "bafyreiclaim"}
			rec["reply"] = map[string]any{"root": ref, "parent": ref}
		}
		p := map[string]any{"uri": "at://" + did + "/app.bsky.feed.post/" + rkey, "cid": "bafyrei" + rkey, "author": author, "record": rec,
			"indexedAt": when, "labels": []any{}}
		if embed != nil {
			p["embed"] = embed
		}
		return p
	}
	claimRecord := map[string]any{"$type": "app.bsky.feed.post", "createdAt": before, "text": ctxClaim}
	bsky := map[string]map[string]any{
		// A thin card: the article is read for what it says.
		"3kcard": {"$type": "app.bsky.feed.defs#threadViewPost", "post": bskyPost("3kcard", ctxAdmit, map[string]any{
			"$type": "app.bsky.embed.external#view", "external": map[string]any{"uri": rumours, "title": "Springfield BANS bicycles!",
				"description": "Read the story.", "thumb": ""}}, false)},
		"3kparent": {"$type": "app.bsky.feed.defs#threadViewPost", "post": bskyPost("3kparent", ctxReply, nil, true),
			"parent": map[string]any{"$type": "app.bsky.feed.defs#threadViewPost", "post": map[string]any{
				"uri": "at://" + did + "/app.bsky.feed.post/3kclaim", "cid": "bafyreiclaim", "indexedAt": before,
				"author": map[string]any{"did": "did:plc:rumours", "handle": "cityrumours.bsky.social", "displayName": "City Rumours"},
				"record": claimRecord}}},
		"3kquote": {"$type": "app.bsky.feed.defs#threadViewPost", "post": bskyPost("3kquote", ctxQuote, map[string]any{
			"$type": "app.bsky.embed.record#view", "record": map[string]any{"$type": "app.bsky.embed.record#viewRecord",
				"uri": "at://did:plc:rumours/app.bsky.feed.post/3kclaim", "cid": "bafyreiclaim",
				"author": map[string]any{"did": "did:plc:rumours", "handle": "cityrumours.bsky.social", "displayName": "City Rumours"},
				"value":  claimRecord, "indexedAt": before}}, false)},
	}
	mastoAccount := map[string]any{"id": "1", "username": "cityfan", "acct": "cityfan", "display_name": "City Fan", "note": ""}
	rumoursAccount := map[string]any{"id": "2", "username": "cityrumours", "acct": "cityrumours", "display_name": "City Rumours", "note": ""}
	status := func(id, text string, acct map[string]any, extra map[string]any) map[string]any {
		st := map[string]any{"id": id, "created_at": when, "in_reply_to_id": nil, "spoiler_text": "", "visibility": "public",
			"url": "https://social.example/@" + acct["acct"].(string) + "/" + id, "content": "<p>" + text + "</p>", "reblog": nil,
			"account": acct, "media_attachments": []any{}, "card": nil}
		for k, v := range extra {
			st[k] = v
		}
		return st
	}
	claimStatus := status("100", ctxClaim, rumoursAccount, map[string]any{"created_at": before})
	masto := map[string]any{
		"/api/v1/statuses/101": status("101", ctxAdmit, mastoAccount, map[string]any{"card": map[string]any{"url": rumours,
			"title": "Springfield BANS bicycles!", "description": ctxClaim, "type": "link", "provider_name": "Rumours Daily", "image": nil}}),
		"/api/v1/statuses/102":         status("102", ctxReply, mastoAccount, map[string]any{"in_reply_to_id": "100"}),
		"/api/v1/statuses/102/context": map[string]any{"ancestors": []any{claimStatus}, "descendants": []any{}},
		"/api/v1/statuses/103":         status("103", ctxQuote, mastoAccount, map[string]any{"quote": map[string]any{"state": "accepted", "quoted_status": claimStatus}}),
		// A thin card whose article is gone.
		"/api/v1/statuses/104": status("104", ctxAdmit, mastoAccount, map[string]any{"card": map[string]any{
			"url": testworld.PageURL("www.gone.example", testworld.Pages()["www.gone.example"]), "title": "Springfield story",
			"description": "", "type": "link", "provider_name": "", "image": nil}}),
	}
	claimTweet := map[string]any{"id_str": "1750800000000000001", "text": ctxClaim, "created_at": before,
		"display_text_range": []int{0, len([]rune(ctxClaim))}, "entities": map[string]any{"urls": []any{}},
		"user": map[string]any{"name": "City Rumours", "screen_name": "cityrumours"}}
	tweet := func(id, text string, extra map[string]any) map[string]any {
		tw := map[string]any{"__typename": "Tweet", "id_str": id, "text": text, "created_at": when, "lang": "en",
			"entities": map[string]any{"urls": []any{}}, "user": map[string]any{"name": "City Fan", "screen_name": "cityfan"}}
		for k, v := range extra {
			tw[k] = v
		}
		return tw
	}
	x := map[string]any{
		"1750811111111111111": tweet("1750811111111111111", ctxAdmit+" https://t.co/Rb7kLm2QxZ", map[string]any{
			"entities": map[string]any{"urls": []any{map[string]any{"url": "https://t.co/Rb7kLm2QxZ", "expanded_url": rumours}}},
			"card": map[string]any{"name": "summary_large_image", "url": "https://t.co/Rb7kLm2QxZ", "binding_values": map[string]any{
				"title":       map[string]any{"type": "STRING", "string_value": "Springfield BANS bicycles!"},
				"description": map[string]any{"type": "STRING", "string_value": ctxClaim},
				"vanity_url":  map[string]any{"type": "STRING", "string_value": "rumours.example"}}}}),
		"1750822222222222222": tweet("1750822222222222222", ctxReply, map[string]any{"in_reply_to_status_id_str": "1750800000000000001", "parent": claimTweet}),
		"1750833333333333333": tweet("1750833333333333333", ctxQuote, map[string]any{"quoted_tweet": claimTweet}),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		var body any
		switch p := r.URL.Path; {
		case p == "/xrpc/com.atproto.identity.resolveHandle":
			body = map[string]string{"did": did}
		case p == "/xrpc/app.bsky.actor.getProfile":
			body = map[string]string{"did": did, "handle": "cityfan.bsky.social", "description": "Local news fan."}
		case p == "/xrpc/app.bsky.feed.getPostThread":
			n, ok := bsky[strings.TrimPrefix(r.URL.Query().Get("uri"), "at://"+did+"/app.bsky.feed.post/")]
			if !ok {
				http.Error(w, `{"error":"NotFound","message":"Post not found"}`, 400)
				return
			}
			body = map[string]any{"thread": n}
		case p == "/syndication/tweet-result":
			body = x[r.URL.Query().Get("id")]
		default:
			body = masto[p]
		}
		if body == nil {
			http.Error(w, `{"error":"Record not found"}`, 404)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return calls }
}

var contextLabel = regexp.MustCompile(`(?m)^(The [^,\n]+?)(?:, by [^\n]*)?:\n([^\n]*)$`)

// claimReader is a model that finds the claim only where the prompt shows
// it: it writes the world's queries when the claim is in the queries
// prompt, and corrects the post naming the label of the context item the
// claim is under, when the prompt is told not to lay the context on the
// author; otherwise it blames the author, as a careless model would.
func claimReader(req openai.ChatCompletionRequest) (llmtest.Reply, bool) {
	user := llmtest.LastUser(req)
	switch llmtest.SchemaName(req) {
	case "queries":
		if !strings.Contains(user, "banned bicycles") && !strings.Contains(user, "banned all bicycles") {
			return llmtest.Reply{Text: `{"queries":[]}`}, true
		}
		return llmtest.Reply{}, false
	case "":
		ids := testworld.PromptSources(user)
		whose := "Its author claims"
		if strings.Contains(user, "never attributes a claim made only in what the post points at to the post's author") {
			start, end := strings.Index(user, "<<<BEGIN CONTEXT>>>"), strings.Index(user, "<<<END CONTEXT>>>")
			if start >= 0 && end > start {
				for _, m := range contextLabel.FindAllStringSubmatch(user[start:end], -1) {
					if strings.Contains(m[2], "bicycles") {
						whose = m[1] + " claims"
					}
				}
			}
		}
		return llmtest.Reply{Text: "This post is misleading. " + whose + " that Springfield banned bicycles from Main Street; the council has not, and the mayor signed no such order " +
			strings.Join(ids[:min(2, len(ids))], "") + "."}, true
	}
	return llmtest.Reply{}, false
}

func TestContextClaimEndToEnd(t *testing.T) {
	env := testworld.New(t, nil)
	env.Model.Hook = claimReader
	srv, calls := contextPlatforms(t)
	opts := env.Options()
	opts.Posts = posts.Options{BlueskyURL: srv.URL, TwitterSyndicationURL: srv.URL + "/syndication", TwitterOEmbedURL: srv.URL + "/publish"}
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	reuters := testworld.PageURL("www.reuters.com", env.Pages["www.reuters.com"])
	for _, tc := range []struct {
		name, url, kind, whose string
		maxCalls               int
	}{
		{"bluesky card", "https://bsky.app/profile/cityfan.bsky.social/post/3kcard", pipeline.ContextLink, "The article this post shares claims", 3},
		{"bluesky parent", "https://bsky.app/profile/cityfan.bsky.social/post/3kparent", pipeline.ContextParent, "The post this replies to claims", 3},
		{"bluesky quote", "https://bsky.app/profile/cityfan.bsky.social/post/3kquote", pipeline.ContextQuote, "The post this one quotes claims", 3},
		{"mastodon card", srv.URL + "/@cityfan/101", pipeline.ContextLink, "The article this post shares claims", 1},
		{"mastodon parent", srv.URL + "/@cityfan/102", pipeline.ContextParent, "The post this replies to claims", 2},
		{"mastodon quote", srv.URL + "/@cityfan/103", pipeline.ContextQuote, "The post this one quotes claims", 1},
		{"x card", "https://x.com/cityfan/status/1750811111111111111", pipeline.ContextLink, "The article this post shares claims", 1},
		{"x parent", "https://x.com/cityfan/status/1750822222222222222", pipeline.ContextParent, "The post this replies to claims", 1},
		{"x quote", "https://x.com/cityfan/status/1750833333333333333", pipeline.ContextQuote, "The post this one quotes claims", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := calls()
			p, err := e.ReadPost(context.Background(), pipeline.Post{URL: tc.url})
			if err != nil {
				t.Fatal(err)
			}
			if n := calls() - before; n > tc.maxCalls {
				t.Errorf("%d API calls to read one post, want at most %d", n, tc.maxCalls)
			}
			if strings.Contains(p.Text, "bicycles") || len(p.Context) != 1 || p.Context[0].Kind != tc.kind ||
				!strings.Contains(p.Context[0].Body(), "bicycles") {
				t.Fatalf("post %q with context %+v", p.Text, p.Context)
			}
			if tc.name == "bluesky card" && (p.Context[0].TextFrom != "article" || !strings.Contains(p.Context[0].Text, "insiders say")) {
				t.Errorf("thin card not read from its article: %+v", p.Context[0])
			}
			c := e.NewCheck(p, p.PostedAt)
			if err := e.Run(context.Background(), c, pipeline.StageImages, nil); err != nil {
				t.Fatal(err)
			}
			if len(c.Queries) == 0 || c.Queries[0].Origin != pipeline.OriginModel {
				t.Errorf("queries %+v: the model did not see the claim", c.Queries)
			}
			if !strings.Contains(c.Correction.Text, tc.whose) || !strings.Contains(strings.Join(c.Correction.URLs, " "), reuters) {
				t.Errorf("correction %q citing %v", c.Correction.Text, c.Correction.URLs)
			}
			// Left out, the item is not shown to the model: the queries
			// and what follows go stale, and a rerun finds nothing to
			// search for in "Told you so." alone.
			if err := c.SetContextIncluded(0, false); err != nil {
				t.Fatal(err)
			}
			if st := c.Stage(pipeline.StageQueries).State; st != pipeline.StateStale {
				t.Errorf("queries %s after the context was left out", st)
			}
			if err := e.Run(context.Background(), c, pipeline.StageQueries, nil); err != nil && !strings.Contains(err.Error(), "evidence") {
				t.Logf("rerun: %v", err)
			}
			for _, q := range c.Queries {
				if q.Origin == pipeline.OriginModel {
					t.Errorf("the model wrote %q without the context", q.Text)
				}
			}
		})
	}
	// A thin card whose article cannot be read keeps its card, and says so.
	p, err := e.ReadPost(context.Background(), pipeline.Post{URL: srv.URL + "/@cityfan/104"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Context) != 1 || p.Context[0].TextFrom != "" || p.Context[0].Body() != "Springfield story" ||
		len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "the shared article http://www.gone.example/springfield-story could not be read") ||
		!strings.Contains(p.Notes[0], "404") {
		t.Errorf("unreadable article: context %+v, notes %q", p.Context, p.Notes)
	}
}
