package eval

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/ratings"
)

// worldMuse is muse on the loopback world as a system, with a reader and
// a rater that reach the same world.
func worldMuse(t *testing.T, env *testworld.Env) (*Muse, *Reader, *ratings.Rater) {
	t.Helper()
	eng, closeEng, err := setup.NewFromConfig(context.Background(), env.Cfg, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeEng() })
	rater, err := ratings.Load(setup.RatingsOptions(env.Cfg))
	if err != nil {
		t.Fatal(err)
	}
	reader := &Reader{Fetcher: fetch.New(fetch.Options{AllowPrivate: true, IgnoreRobots: true, Proxy: http.ProxyURL(env.Proxy), Timeout: 5 * time.Second})}
	return &Muse{SystemName: "muse", ModelName: "test-model", Engine: eng}, reader, rater
}

// TestMuseSystemOnTheWorld: muse as a system checks each post as of its
// own time, cites the world's pages, which are reachable through the
// fetcher and rated; the judge reads them; AVeriTeC's gold URLs are
// matched against the pages muse read.
func TestMuseSystemOnTheWorld(t *testing.T) {
	env := testworld.New(t, nil)
	muse, reader, rater := worldMuse(t, env)
	p := Post{ID: "1", Post: pipeline.Post{Text: testworld.Post, Author: "City Rumours", PostedAt: testworld.Cutoff}}
	judge := &Judge{Client: client(t, testworld.Judge(t, testworld.QuoteR1), "judge-model", nil)}
	rs, err := Run(context.Background(), []Post{p}, Options{Systems: []System{muse}, Judge: judge, Reader: reader, Rater: rater}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	if r.Status != StatusDone || r.Correction == "" || len(r.URLs) == 0 {
		t.Fatalf("muse on the world: %+v", r)
	}
	for _, l := range r.Measures.Links {
		if l.Page == nil || !l.Page.Reachable || l.Tier == "" || l.Tier == "unrated" {
			t.Errorf("cited %s: page %+v tier %q", l.URL, l.Page, l.Tier)
		}
	}
	if r.Judge == nil || r.Judge.Scores["overall"] != 8 {
		t.Errorf("the judge did not see the refuting page muse cited: %+v %s", r.Judge, r.JudgeError)
	}
	if r.Usage == nil || r.Usage.LLMCalls == 0 {
		t.Errorf("usage not kept: %+v", r.Usage)
	}
	// AVeriTeC: a gold URL among the pages muse read is a hit.
	p.GoldURLs = []string{"https://web.archive.org/web/2024/" + r.URLs[0], "https://nowhere.example/x"}
	rs, _ = Run(context.Background(), []Post{p}, Options{Systems: []System{muse}}, &bytes.Buffer{})
	if g := rs[0].Gold; g == nil || !g.URLHit || !g.DomainHit {
		t.Errorf("gold: %+v", rs[0].Gold)
	}
	// Without the post's time there is no cutoff to run as of.
	_, err = muse.Correct(context.Background(), Post{ID: "2", Post: pipeline.Post{Text: testworld.Post}})
	if !errors.Is(err, pipeline.ErrNoPostTime) {
		t.Errorf("a post without a time: %v", err)
	}
}
