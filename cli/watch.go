package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/batch"
	"github.com/musecheck/muse/pipeline/notes"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/watch"
	"github.com/musecheck/muse/sources/feeds"
	"github.com/musecheck/muse/sources/posts"
	"github.com/musecheck/muse/sources/spend"
	"github.com/musecheck/muse/tui"
)

// MastodonTokenEnv names the environment variable that holds the Mastodon
// access token of `muse watch --mastodon`.
const MastodonTokenEnv = "MASTODON_ACCESS_TOKEN"

// watchFlags are `muse watch`'s flags.
type watchFlags struct {
	bluesky    bool
	jetstream  string
	dids       []string
	mastodon   string
	streaming  string
	hashtag    string
	list       string
	local      bool
	urls       string
	keywords   []string
	asJSON     bool
	enqueue    bool
	threshold  float64
	perHour    int
	batchSize  int
	limit      int
	forget     time.Duration
	mastoToken string
	xEligible  bool
	xLang      string
}

// watchCmd is `muse watch`.
func watchCmd(app *App) *cobra.Command {
	var f watchFlags
	cmd := &cobra.Command{
		Use:   "watch [--bluesky|--did DID…] [--mastodon URL (--hashtag TAG|--list ID|--local)] [--urls FILE|-] [--keyword WORD…]",
		Short: "Watch feeds of posts and triage them: near-duplicates clustered, repeats of fact-checked claims flagged, check-worthiness scored, the worthy queued for muse worker",
		Long: "muse watch reads Bluesky's firehose (Jetstream), a Mastodon timeline (a hashtag, a list, the public one)\n" +
			"or a list of post URLs, and triages every post: its language, its cluster of near-duplicates, a match\n" +
			"against the imported fact-checks (muse archive add --claimreview), then a check-worthiness score by the\n" +
			"model, many posts a call. With --enqueue the posts scoring at least --threshold are queued for\n" +
			"muse worker, at most --per-hour an hour and none once the day's spend cap is reached. A restart goes on\n" +
			"from where each feed stopped. On a terminal it shows the ranked stream: enter opens a post as a check,\n" +
			"d dismisses it, p pins it. --json prints each cluster as JSON Lines when it is new or changes.\n" +
			"The Mastodon token is read from $" + MastodonTokenEnv + ".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.mastoToken = os.Getenv(MastodonTokenEnv)
			return runWatch(cmd, app, &f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.bluesky, "bluesky", false, "watch Bluesky's posts through Jetstream (every post, or those of --did, or with --keyword)")
	fl.StringVar(&f.jetstream, "jetstream", feeds.DefaultJetstream, "the Jetstream instance's subscribe address")
	fl.StringSliceVar(&f.dids, "did", nil, "watch these Bluesky accounts (DIDs, did:plc:…), repeatable")
	fl.StringVar(&f.mastodon, "mastodon", "", "watch a timeline of this Mastodon instance (https://…); token in $"+MastodonTokenEnv)
	fl.StringVar(&f.streaming, "mastodon-streaming", "", "the instance's streaming server, when it is not the instance's address")
	fl.StringVar(&f.hashtag, "hashtag", "", "the Mastodon hashtag timeline to watch (without #)")
	fl.StringVar(&f.list, "list", "", "the Mastodon list to watch (its ID: the accounts the list follows)")
	fl.BoolVar(&f.local, "local", false, "the instance's local timeline rather than the federated one")
	fl.StringVar(&f.urls, "urls", "", "a file of post URLs, one a line, or - for standard input")
	fl.BoolVar(&f.xEligible, "x-eligible", false, "watch the posts people asked Community Notes for (X's AI Note Writer API, test mode; keys as for muse notes), asked every 5 minutes")
	fl.StringVar(&f.xLang, "x-lang", "", "the language of --x-eligible's feed (ISO 639-1, or all; default X's, English)")
	fl.StringSliceVar(&f.keywords, "keyword", nil, "keep only posts holding this word or phrase, any case (repeatable)")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON Lines instead of the terminal view: one JSON object per cluster each time it is new or changes")
	fl.BoolVar(&f.enqueue, "enqueue", false, "queue the posts that score at least --threshold for muse worker")
	fl.Float64Var(&f.threshold, "threshold", watch.DefaultThreshold, "the least check-worthiness score (0 to 1) queued")
	fl.IntVar(&f.perHour, "per-hour", watch.DefaultPerHour, "the most posts queued in any hour")
	fl.IntVar(&f.batchSize, "batch-size", 20, "posts scored in one model call")
	fl.IntVar(&f.limit, "limit", 0, "stop after this many posts (0: never)")
	cmd.AddCommand(watchCalibrateCmd(app))
	fl.DurationVar(&f.forget, "forget-after", watch.DefaultRetain, "forget a cluster no post has joined for this long, with its posts, unless it was opened, pinned, queued or held (0: never)")
	return cmd
}

// feedsOf are the feeds the flags name.
func (f *watchFlags) feedsOf(stdin io.Reader) ([]feeds.Feed, error) {
	var out []feeds.Feed
	if f.bluesky || len(f.dids) > 0 {
		out = append(out, &feeds.Jetstream{URL: f.jetstream, DIDs: f.dids, Keywords: f.keywords})
	}
	if f.mastodon != "" {
		m := &feeds.Mastodon{Instance: f.mastodon, Streaming: f.streaming, Keywords: f.keywords, Token: f.mastoToken}
		switch {
		case f.hashtag != "" && f.list != "":
			return nil, usagef("--hashtag and --list: one timeline per instance")
		case f.hashtag != "":
			m.Timeline, m.Tag = "hashtag", f.hashtag
		case f.list != "":
			m.Timeline, m.List = "list", f.list
		case f.local:
			m.Timeline = "public:local"
		default:
			m.Timeline = "public"
		}
		out = append(out, m)
	} else if f.hashtag != "" || f.list != "" || f.local {
		return nil, usagef("--hashtag, --list and --local are Mastodon timelines: give the instance with --mastodon")
	}
	if f.urls != "" {
		src := f.urls
		open := func() (io.ReadCloser, error) { return os.Open(src) }
		if src == "-" {
			open = func() (io.ReadCloser, error) { return io.NopCloser(stdin), nil }
		}
		out = append(out, &feeds.URLs{Source: src, Open: open})
	}
	if len(out) == 0 && !f.xEligible {
		return nil, usagef("nothing to watch: give --bluesky, --did, --mastodon, --urls or --x-eligible")
	}
	switch {
	case !(f.threshold >= 0 && f.threshold <= 1): // NaN too
		return nil, usagef("--threshold %v: a score from 0 to 1", f.threshold)
	case f.perHour < 1:
		return nil, usagef("--per-hour %d: at least 1 (without --enqueue nothing is queued)", f.perHour)
	case f.batchSize < 1 || f.batchSize > maxWatchBatch:
		return nil, usagef("--batch-size %d: from 1 to %d posts a call", f.batchSize, maxWatchBatch)
	case f.limit < 0:
		return nil, usagef("--limit %d: a number of posts, or 0 for no limit", f.limit)
	case f.forget < 0:
		return nil, usagef("--forget-after %s: a duration, or 0 to keep every cluster", f.forget)
	}
	for _, d := range f.dids {
		if !strings.HasPrefix(d, "did:") || strings.ContainsAny(d, " /?&#") {
			return nil, usagef("--did %q: a Bluesky account's DID (did:plc:… or did:web:…)", d)
		}
	}
	return out, nil
}

// maxWatchBatch bounds --batch-size: the model's answer grows with it.
const maxWatchBatch = 100

// watchRow is a cluster as --json prints it, with its alert.
type watchRow struct {
	watch.Cluster
	Alert string `json:"alert,omitempty"`
}

func runWatch(cmd *cobra.Command, app *App, f *watchFlags) error {
	ctx := cmd.Context()
	fs, err := f.feedsOf(app.Stdin)
	if err != nil {
		return err
	}
	if f.xEligible {
		w, err := notes.New(app.Cfg, nil, nil)
		if errors.Is(err, notes.ErrNoKeys) {
			return usage(err)
		} else if err != nil {
			return err
		}
		fs = append(fs, &feeds.XEligible{Client: w.Client, Lang: f.xLang})
	}
	if !f.asJSON && !app.Terminal {
		return usagef("muse watch shows the stream in the terminal, which needs one (standard input and output are not one); for scripts: muse watch --json")
	}
	cfg := app.Cfg
	eng, closeEngine, err := setup.NewFromConfig(ctx, cfg, pipeline.Options{})
	noModel := ""
	if errors.Is(err, pipeline.ErrNoModel) {
		noModel = "not scored: no model configured"
		eng, closeEngine, err = setup.NewFromConfig(ctx, cfg, pipeline.Options{NoLLM: true})
	}
	if err != nil {
		return fmt.Errorf("start the engine: %w", err)
	}
	defer closeEngine()
	st, err := watch.Open(ctx, cfgWatchPath(cfg))
	if err != nil {
		return err
	}
	defer st.Close()
	o := watch.Options{Store: st, Matcher: eng, Scorer: eng, NoScore: noModel, BatchSize: f.batchSize,
		Rule: watch.Rule{Threshold: f.threshold, PerHour: f.perHour}, Retain: cmp.Or(f.forget, -1)}
	if noModel != "" {
		o.Scorer = nil
	}
	o.Read = func(ctx context.Context, u string) (*posts.Post, error) {
		p, err := eng.PostFromURL(ctx, u)
		if err != nil {
			return nil, err
		}
		out := &posts.Post{Text: p.Text, Author: p.Author, Handle: p.Handle, PostedAt: p.PostedAt, URL: cmp.Or(p.URL, u), Platform: p.Platform}
		for _, im := range p.Images {
			out.Images = append(out.Images, posts.ImageRef{URL: im, Alt: p.AltTexts[im]})
		}
		return out, nil
	}
	if cfg.SpendCapDayUSD > 0 {
		ledger, err := spend.Open(ctx, cfg.LedgerPath())
		if err != nil {
			return err
		}
		defer ledger.Close()
		o.Rule.SpendCapUSD, o.Rule.Spent = cfg.SpendCapDayUSD, ledger.Today
	}
	if f.enqueue {
		q, err := openQueue(ctx, app)
		if err != nil {
			return err
		}
		defer q.Close()
		o.Enqueue = watch.QueueTo(q, cfg.Model, batch.CheckOptions{NoLLM: noModel != ""})
	}
	var mu sync.Mutex
	var warnings []string
	o.Warn = func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if f.asJSON {
			fmt.Fprintln(app.Stderr, "muse: watch:", s)
		} else {
			warnings = append(warnings[max(0, len(warnings)-4):], s)
		}
	}
	for _, fd := range fs {
		if x, ok := fd.(*feeds.XEligible); ok { // its failed polls, said as the feeds' are
			x.Errors = func(err error) { o.Warn(err.Error()) }
		}
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	o.Limit = f.limit
	if f.asJSON {
		o.Changed = func(c watch.Cluster) {
			mu.Lock()
			defer mu.Unlock()
			b, _ := json.Marshal(watchRow{c, c.Alert()})
			app.Stdout.Write(append(b, '\n'))
		}
	}
	tr, err := watch.New(ctx, o)
	if err != nil {
		return err
	}
	if f.asJSON {
		err := tr.Watch(wctx, fs...)
		if ctx.Err() != nil {
			return nil // interrupted: everything read is kept
		}
		return err
	}
	done := make(chan error, 1)
	go func() { done <- tr.Watch(wctx, fs...) }()
	names := make([]string, len(fs))
	for i, fd := range fs {
		names[i] = fd.Name()
	}
	var back int64 // the cluster opened last, selected again after its check
	for {
		open, err := tui.RunWatch(wctx, tui.WatchOptions{Store: st, Feeds: strings.Join(names, " · "), Warnings: func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), warnings...)
		}, Done: done, Select: back})
		if err != nil || open == nil {
			stop()
			<-done
			return err
		}
		back = open.ID
		_ = st.SetState(ctx, open.ID, watch.StateOpened, "opened as a check", "")
		p := pipeline.Post{Text: open.Post.Text, Author: open.Post.Author, Handle: open.Post.Handle, PostedAt: open.Post.PostedAt,
			URL: open.Post.URL, Platform: open.Post.Platform}
		for _, im := range open.Post.Images {
			p.Images = append(p.Images, im.URL)
		}
		eo := pipeline.Options{NoLLM: noModel != ""}
		if err := startTUI(ctx, app, eo, false, tui.Options{Post: p, Start: true}); err != nil {
			stop()
			<-done
			return err
		}
	}
}

// cfgWatchPath is where the watch store lives: the newsroom's database,
// else watch.db under the data directory.
func cfgWatchPath(cfg *setup.Config) string {
	return cmp.Or(cfg.DatabaseURL, watch.DefaultPath(cfg.DataDir))
}
