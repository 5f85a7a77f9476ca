package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/eval"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/ratings"
)

// judgeFlags name the judge model, apart from the model under test.
type judgeFlags struct {
	model, baseURL string
	closers        []func() error
}

// close closes the judges' response caches.
func (f *judgeFlags) close() {
	for _, c := range f.closers {
		c()
	}
}

func (f *judgeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.model, "judge-model", "", "the LLM judge's model (env MUSE_JUDGE_MODEL); none: deterministic measures only")
	cmd.Flags().StringVar(&f.baseURL, "judge-base-url", "", "the judge's OpenAI-compatible server (env MUSE_JUDGE_BASE_URL; default the configured one); its key is MUSE_JUDGE_API_KEY, else the configured key on the same server")
}

// judge builds the judge from the flags and environment; nil when none is
// named.
func (f *judgeFlags) judge(ctx context.Context, app *App) (*eval.Judge, string, error) {
	return f.judgeFor(ctx, app, cmp.Or(f.model, app.Cfg.JudgeModel))
}

// judgeFor is the judge with model on the judge's server; nil for "".
func (f *judgeFlags) judgeFor(ctx context.Context, app *App, model string) (*eval.Judge, string, error) {
	if model == "" {
		return nil, "", nil
	}
	jc := *app.Cfg
	jc.Models, jc.Model = nil, model
	if base := cmp.Or(f.baseURL, app.Cfg.JudgeBaseURL); base != "" && base != app.Cfg.OpenAIBaseURL {
		jc.OpenAIBaseURL, jc.OpenAIAPIKey = base, ""
	}
	if key := app.Cfg.JudgeAPIKey; key != "" {
		jc.OpenAIAPIKey = key
	}
	client, closeClient, err := setup.NewCachedLLMClient(ctx, &jc, pipeline.Options{})
	if err != nil {
		return nil, "", usagef("judge: %w", err)
	}
	f.closers = append(f.closers, closeClient)
	return &eval.Judge{Client: client}, jc.OpenAIBaseURL, nil
}

// evalCmd is `muse eval POSTS [--system NAME=SPEC]…`.
func evalCmd(app *App) *cobra.Command {
	var specs []string
	var outPath, htmlPath string
	var resume, asJSON, noFetch bool
	var parallel int
	var spendCap float64
	jf := &judgeFlags{}
	cmd := &cobra.Command{
		Use:   "eval POSTS.jsonl|POSTS.csv|dev.json [--system NAME=SPEC]… [--judge-model M] [-o RESULTS.jsonl] [--resume]",
		Short: "Compare systems' corrections of a set of posts: the paper's measures, an LLM judge, means with intervals and tests",
		Long: "Each system writes a correction of each post, which is then measured: links valid by X's pattern\n" +
			"and reachable now (the safe fetcher), publisher tiers, evidence pages, note length as Community\n" +
			"Notes counts it, language, quotes found on the cited pages; and, with --judge-model, the Muse\n" +
			"paper's 13 criteria and overall quality by a judge model kept apart from the models under test.\n\n" +
			"A system is NAME=muse (the engine, cutoff at each post's own time), NAME=model (the model alone,\n" +
			"no retrieval: the paper's GPT-4 baseline) or NAME=file (the corrections given with the posts\n" +
			"under NAME), followed by ,model=M ,config=FILE ,hits=N ,language=CODE to set it apart. Without\n" +
			"--system: muse as configured, and every system the post set gives corrections for.\n\n" +
			"Posts are JSON Lines {id, text, posted_at, author, handle, url, language, corrections: {NAME: text}},\n" +
			"a CSV with those columns and a correction:NAME column per given system, or AVeriTeC's dev.json\n" +
			"(then how often each system's pages include a gold evidence URL or its domain is reported).\n" +
			"Results go to RESULTS.jsonl as each is scored; --resume skips the ones done there.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			posts, err := eval.ReadPosts(args[0])
			if err != nil {
				return usagef("read posts: %w", err)
			}
			if resume && outPath == "" {
				return usagef("--resume needs -o RESULTS.jsonl")
			}
			if len(specs) == 0 {
				specs = defaultSystems(posts)
			}
			judge, judgeBase, err := jf.judge(ctx, app)
			defer jf.close()
			if err != nil {
				return err
			}
			var systems []eval.System
			for _, s := range specs {
				sys, closeSys, err := buildSystem(ctx, app, s)
				if err != nil {
					return err
				}
				defer closeSys()
				if judge != nil && sys.Model() != "" && sys.Model() == judge.Model() && judgeBase == systemBase(app, s) {
					return usagef("--system %s uses the judge's model %s: the judge must be a model apart from those under test", sys.Name(), judge.Model())
				}
				systems = append(systems, sys)
			}
			rater, err := ratings.Load(setup.RatingsOptions(app.Cfg))
			if err != nil {
				return usagef("ratings: %w", err)
			}
			o := eval.Options{Systems: systems, Judge: judge, Rater: rater, Parallel: parallel, SpendCapUSD: spendCap,
				Progress: app.progress(), TTY: app.StderrTTY, Done: map[string]bool{}}
			if !noFetch {
				reader, closeReader := newReader(cmd, app)
				defer closeReader()
				o.Reader = reader
			}
			var earlier []eval.Result
			out := io.Discard
			if outPath != "" {
				if !resume {
					if _, err := os.Stat(outPath); err == nil {
						return usagef("%s exists: --resume to go on with it, or name another file", outPath)
					}
				}
				if earlier, err = eval.ReadResults(outPath); err != nil {
					return usagef("read results: %w", err)
				}
				for _, r := range earlier {
					o.SpentUSD += r.CostUSD + r.JudgeUSD // what every earlier attempt cost
				}
				for _, r := range eval.Latest(earlier) {
					// A correction not judged when a judge is asked for is scored again.
					if r.Status == eval.StatusDone && (judge == nil || r.Judge != nil) {
						o.Done[r.Key()] = true
					}
				}
				f, err := eval.OpenResults(outPath)
				if err != nil {
					return usagef("open results: %w", err)
				}
				defer f.Close()
				out = app.redact.Writer(f)
			}
			results, runErr := eval.Run(ctx, posts, o, out)
			s := eval.Summarise(append(earlier, results...))
			if err := writeReport(app, s, asJSON, htmlPath); err != nil {
				return err
			}
			if runErr != nil {
				return runErr
			}
			failed := 0
			for _, r := range results {
				if r.Status == eval.StatusFailed {
					failed++
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d corrections failed; the results say why, and --resume tries them again", failed, len(results))
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&specs, "system", nil, "a system to evaluate, NAME=muse|model|file[,model=M][,config=FILE][,hits=N][,language=CODE] (repeatable)")
	cmd.Flags().StringVarP(&outPath, "output", "o", "", "write each result to this JSON Lines file as it is scored")
	cmd.Flags().BoolVar(&resume, "resume", false, "go on with the -o file: skip the corrections scored there")
	cmd.Flags().IntVarP(&parallel, "jobs", "j", 2, "corrections made and scored at once")
	cmd.Flags().Float64Var(&spendCap, "spend-cap", 0, "stop when the run's model calls (systems and judge) would cost more than USD (a resumed file's spending counts)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as one JSON object instead of the terminal report")
	cmd.Flags().StringVar(&htmlPath, "html", "", "also write the report as one self-contained HTML page with plots")
	cmd.Flags().BoolVar(&noFetch, "no-fetch", false, "do not fetch the cited links (no reachability, evidence pages or page text for the judge)")
	jf.register(cmd)
	cmd.AddCommand(evalReportCmd(app), evalCalibrateCmd(app))
	return cmd
}

// newReader reads cited pages through the safe fetcher, and a page that
// cannot be read from the local archive's copy when there is one.
func newReader(cmd *cobra.Command, app *App) (*eval.Reader, func()) {
	r := &eval.Reader{Fetcher: fetch.New(setup.FetchOptions(app.Cfg))}
	store, err := archive.Open(cmd.Context(), app.Cfg.ArchivePath())
	if err != nil {
		fmt.Fprintf(app.Stderr, "muse: the local archive is left out (a cited page that cannot be read now has no copy to fall back on): %v\n", err)
		return r, func() {}
	}
	r.Archive = pipeline.ArchiveOf(store)
	return r, func() { store.Close() }
}

// evalReportCmd is `muse eval report RESULTS.jsonl`.
func evalReportCmd(app *App) *cobra.Command {
	var asJSON bool
	var htmlPath string
	cmd := &cobra.Command{
		Use:   "report RESULTS.jsonl [--json] [--html FILE]",
		Short: "Report a results file of muse eval again: terminal bars, JSON or an HTML page",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rs, err := eval.ReadResults(args[0])
			if err != nil {
				return usagef("read results: %w", err)
			}
			if len(rs) == 0 {
				return usagef("%s has no results", args[0])
			}
			return writeReport(app, eval.Summarise(rs), asJSON, htmlPath)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as one JSON object")
	cmd.Flags().StringVar(&htmlPath, "html", "", "also write the report as one self-contained HTML page with plots")
	return cmd
}

func writeReport(app *App, s eval.Summary, asJSON bool, htmlPath string) error {
	if htmlPath != "" {
		f, err := os.Create(htmlPath)
		if err != nil {
			return fmt.Errorf("write HTML report: %w", err)
		}
		if err := eval.WriteHTML(app.redact.Writer(f), s); err != nil {
			f.Close()
			return fmt.Errorf("write HTML report: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write HTML report: %w", err)
		}
	}
	if asJSON {
		enc := json.NewEncoder(app.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	return eval.WriteText(app.Stdout, s)
}

// defaultSystems: muse as configured, and every system the posts give
// corrections for.
func defaultSystems(posts []eval.Post) []string {
	specs := []string{"muse=muse"}
	seen := map[string]bool{"muse": true}
	for _, p := range posts {
		for name := range p.Corrections {
			if !seen[name] {
				seen[name] = true
				specs = append(specs, name+"=file")
			}
		}
	}
	return specs
}

// systemSpec is a parsed --system.
type systemSpec struct {
	name, kind string
	opts       map[string]string
}

func parseSpec(s string) (systemSpec, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return systemSpec{}, usagef("--system %q: want NAME=muse|model|file[,key=value…]", s)
	}
	parts := strings.Split(rest, ",")
	sp := systemSpec{name: strings.TrimSpace(name), kind: strings.TrimSpace(parts[0]), opts: map[string]string{}}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		switch k = strings.TrimSpace(k); {
		case !ok:
			return sp, usagef("--system %q: %q is not key=value", s, kv)
		case k != "model" && k != "config" && k != "hits" && k != "language":
			return sp, usagef("--system %q: unknown key %q (model, config, hits, language)", s, k)
		}
		sp.opts[k] = strings.TrimSpace(v)
	}
	return sp, nil
}

// specConfig is the configuration a system runs with: the one loaded, or
// its own config file, with its model.
func specConfig(app *App, sp systemSpec) (*setup.Config, error) {
	cfg := app.Cfg
	if f := sp.opts["config"]; f != "" {
		c, err := setup.Load(f, os.Getenv)
		if err != nil {
			return nil, usagef("--system %s: config %s: %w", sp.name, f, err)
		}
		c.AllowPrivateAddresses = c.AllowPrivateAddresses || app.Cfg.AllowPrivateAddresses
		cfg = c
	}
	c := *cfg
	if m := sp.opts["model"]; m != "" {
		c.Model, c.Models = m, nil
	}
	return &c, nil
}

func systemBase(app *App, s string) string {
	sp, err := parseSpec(s)
	if err != nil {
		return ""
	}
	c, err := specConfig(app, sp)
	if err != nil {
		return ""
	}
	return c.OpenAIBaseURL
}

// buildSystem makes the system a --system names.
func buildSystem(ctx context.Context, app *App, s string) (eval.System, func(), error) {
	none := func() {}
	sp, err := parseSpec(s)
	if err != nil {
		return nil, none, err
	}
	cfg, err := specConfig(app, sp)
	if err != nil {
		return nil, none, err
	}
	opts := pipeline.Options{}
	if h := sp.opts["hits"]; h != "" {
		n, err := strconv.Atoi(h)
		if err != nil || n <= 0 {
			return nil, none, usagef("--system %s: hits=%q: want a number of 1 or more", sp.name, h)
		}
		opts.FirstPassHits = n
	}
	if l := sp.opts["language"]; l != "" {
		if opts.CorrectionLanguage = lang.Normalise(l); opts.CorrectionLanguage == "" {
			return nil, none, usagef("--system %s: language=%q: not a language", sp.name, l)
		}
	}
	switch sp.kind {
	case eval.KindMuse:
		if err := setup.CheckSearchable(ctx, cfg); err != nil {
			return nil, none, err
		}
		eng, closeEng, err := setup.NewFromConfig(ctx, cfg, opts)
		if err != nil {
			return nil, none, usage(err)
		}
		model := cfg.Models["correction"]
		if model == "" {
			model = cfg.Model
		}
		return &eval.Muse{SystemName: sp.name, ModelName: model, Engine: eng, CorrectionLanguage: opts.CorrectionLanguage}, func() { _ = closeEng() }, nil
	case eval.KindModel:
		client, closeClient, err := setup.NewCachedLLMClient(ctx, cfg, opts)
		if err != nil {
			return nil, none, usagef("--system %s: %w", sp.name, err)
		}
		return &eval.ModelAlone{SystemName: sp.name, Client: client}, func() { closeClient() }, nil
	case eval.KindFile:
		return &eval.Given{SystemName: sp.name}, none, nil
	}
	return nil, none, usagef("--system %s: kind %q: want muse, model or file", sp.name, sp.kind)
}

// evalCalibrateCmd is `muse eval calibrate DIR`.
func evalCalibrateCmd(app *App) *cobra.Command {
	var asJSON, noFetch bool
	var parallel int
	jf := &judgeFlags{}
	cmd := &cobra.Command{
		Use:   "calibrate DIR [--judge-model M] [--json] [--no-fetch]",
		Short: "Measure the judge and the publisher tiers against the Muse paper's expert ratings",
		Long: "DIR holds the paper's released expert ratings (Q9-overall_quality.csv, Q8-reference_reachability.csv,\n" +
			"Q8.1-reference_credibility.csv, posts.csv). Without a judge: the publisher tiers of the cited links\n" +
			"against the experts' credibility labels, and the measures that need no model by system (links\n" +
			"fetched now unless --no-fetch). With --judge-model: the judge scores every released\n" +
			"correction, and its agreement with the experts is reported (weighted kappa and Spearman on overall\n" +
			"quality, next to the experts' own kappa of 0.51; credibility; reachability of the links now\n" +
			"against the experts' then) with whether it orders the systems as the experts did. Several judge\n" +
			"models, comma-separated, are compared on half of the posts; the best is reported on the other half.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rs, err := eval.ReadCalibration(args[0])
			if err != nil {
				return usagef("read calibration data: %w", err)
			}
			rater, err := ratings.Load(setup.RatingsOptions(app.Cfg))
			if err != nil {
				return usagef("ratings: %w", err)
			}
			report := struct {
				Corrections int                  `json:"corrections"`
				Tiers       eval.TierAgreement   `json:"tiers"`
				Judge       *eval.JudgeAgreement `json:"judge,omitempty"`
				Choice      *eval.Choice         `json:"choice,omitempty"`
				Measures    eval.Summary         `json:"measures"`
			}{Corrections: len(rs), Tiers: eval.Tiers(rs, rater)}
			var models []string
			for _, m := range strings.Split(cmp.Or(jf.model, app.Cfg.JudgeModel), ",") {
				if m = strings.TrimSpace(m); m != "" {
					models = append(models, m)
				}
			}
			var reader *eval.Reader
			if !noFetch {
				r, closeReader := newReader(cmd, app)
				defer closeReader()
				reader = r
			}
			report.Measures = eval.MeasureReleased(cmd.Context(), rs, rater, reader)
			judged := map[string]eval.Judged{}
			defer jf.close()
			for _, m := range models {
				judge, _, err := jf.judgeFor(cmd.Context(), app, m)
				if err != nil {
					return err
				}
				judged[m] = eval.ScoreReleased(cmd.Context(), rs, judge, reader, parallel, app.progress())
			}
			switch {
			case len(models) == 1:
				// One judge, nothing chosen: the whole set.
				ja := eval.Agree(rs, judged[models[0]], nil)
				ja.Model = models[0]
				report.Judge = &ja
			case len(models) > 1:
				c := eval.Choose(rs, models, judged)
				report.Choice, report.Judge = &c, &c.HeldOut
			}
			if asJSON {
				enc := json.NewEncoder(app.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(report)
			}
			w := app.Stdout
			t := report.Tiers
			fmt.Fprintf(w, "%d released corrections.\n\nPublisher tiers against the experts' credibility labels (%d ratings of rated publishers):\n", len(rs), t.N)
			fmt.Fprintf(w, "  Spearman %.3f between tier and label; %d ratings of unrated publishers left out\n", t.Spearman, t.Unrated)
			for _, tier := range []string{"high", "medium", "low", "excluded", "unrated"} {
				if share, ok := t.HighShare[tier]; ok {
					fmt.Fprintf(w, "  tier %-8s: %5.1f%% rated High or Very High by the experts\n", tier, 100*share)
				}
			}
			fmt.Fprintln(w, "\nMeasures of the released corrections without a model, by system:")
			if err := eval.WriteText(w, report.Measures); err != nil {
				return err
			}
			if c := report.Choice; c != nil {
				fmt.Fprintf(w, "\nJudges compared on one half of the posts (weighted kappa on overall quality):\n")
				for _, a := range c.Candidates {
					fmt.Fprintf(w, "  %-20s %.3f over %d pairs\n", a.Model, a.Kappa, a.Pairs)
				}
				fmt.Fprintf(w, "Chosen: %s. Its figures below are on the other half, which the choice did not see.\n", c.Chosen)
			}
			if ja := report.Judge; ja != nil {
				fmt.Fprintf(w, "\nJudge %s against the experts on overall quality, %d corrections (%d pairs, %d not scored):\n", ja.Model, ja.Corrections, ja.Pairs, ja.Failed)
				fmt.Fprintf(w, "  weighted kappa %.3f (experts among themselves: %.2f), Spearman %.3f\n", ja.Kappa, ja.ExpertKappa, ja.Spearman)
				for _, s := range eval.CalibrationOrder {
					fmt.Fprintf(w, "  %-13s judge %.2f, experts %.2f\n", s, ja.JudgeMeans[s], ja.ExpertMeans[s])
				}
				fmt.Fprintf(w, "  the experts' order (muse > note-high > gpt-4 > note-average) reproduced: %v\n", ja.OrderReproduced)
				fmt.Fprintf(w, "  credibility: weighted kappa %.3f over %d pairs\n", ja.CredibilityKappa, ja.CredibilityPairs)
				if ja.ReachabilityPairs > 0 {
					fmt.Fprintf(w, "  reachability now vs the experts': %.1f%% agree over %d pairs\n", 100*ja.ReachabilityAgreement, ja.ReachabilityPairs)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the figures as one JSON object")
	cmd.Flags().BoolVar(&noFetch, "no-fetch", false, "do not fetch the cited links (the judge then sees no page text)")
	cmd.Flags().IntVarP(&parallel, "jobs", "j", 2, "corrections judged at once")
	jf.register(cmd)
	cmd.Flags().Lookup("judge-model").Usage = "the judge's model (env MUSE_JUDGE_MODEL); several, comma-separated, are compared on half of the posts and the best reported on the other half"
	return cmd
}
