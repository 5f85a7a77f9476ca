package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/notes"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/notewriter"
	"github.com/musecheck/muse/sources/sanitize"
)

// notesCmd is `muse notes eligible|evaluate|submit|status`: X's AI Note
// Writer API from the command line.
func notesCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "notes",
		Short: "X's AI Note Writer API: eligible posts, a case's note evaluated and submitted in test mode, the admission ledger",
		Long: "The keys are X_API_KEY, X_API_KEY_SECRET, X_ACCESS_TOKEN and X_ACCESS_TOKEN_SECRET (OAuth 1.0a, the\n" +
			"writer's app and account), or x.api_key, x.api_key_secret, x.access_token and x.access_token_secret in\n" +
			"the config file; MUSE_X_API_URL (x.api_url) replaces https://api.x.com. Notes are submitted in test mode;\n" +
			"live only with --live, x.live_notes = true and a ledger that meets X's admission bar. Requests wait in a\n" +
			"queue under X's limits (90 per 15 minutes, 250 notes a day); Ctrl-C stops a wait.",
	}
	cmd.AddCommand(notesEligibleCmd(app), notesEvaluateCmd(app), notesSubmitCmd(app), notesStatusCmd(app))
	return cmd
}

// noteWriter is the configuration's writer; its keys are never printed,
// whatever an error echoes, and each wait of the queue is said on stderr.
func noteWriter(app *App) (*notes.Writer, error) {
	red := sources.NewRedactor(app.Cfg.Secrets()...)
	app.Stdout, app.Stderr = red.Writer(app.Stdout), red.Writer(app.Stderr)
	stderr := app.Stderr
	w, err := notes.New(app.Cfg, nil, func(wt notewriter.Wait) {
		fmt.Fprintf(stderr, "muse: %s; Ctrl-C stops\n", wt)
	})
	if errors.Is(err, notes.ErrNoKeys) {
		return nil, usage(err)
	}
	return w, err
}

// openNoteCase opens the case store and case ID.
func openNoteCase(cmd *cobra.Command, app *App, id string) (*cases.Store, *pipeline.Check, error) {
	st, err := openCases(cmd.Context(), app)
	if err != nil {
		return nil, nil, err
	}
	if id, err = st.Resolve(cmd.Context(), id); err != nil {
		st.Close()
		return nil, nil, err
	}
	c, err := st.Get(cmd.Context(), id)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, c, nil
}

// preflightSaid prints each pre-flight failure with its fix.
func preflightSaid(app *App, err error) {
	var pe *notes.PreflightError
	if errors.As(err, &pe) {
		for _, p := range pe.Problems {
			fmt.Fprintf(app.Stderr, "muse: pre-flight: %s — %s\n", p.What, p.Fix)
		}
	}
}

func notesEligibleCmd(app *App) *cobra.Command {
	var asJSON bool
	var max, check int
	var feedLang string
	cmd := &cobra.Command{
		Use:   "eligible [--json] [-n N] [--lang CODE] [--check N]",
		Short: "The posts X offers for a note in test mode, with the note requests; --check N checks the Nth",
		Long: "Lists the posts eligible for notes (GET /2/notes/search/posts_eligible_for_notes, test mode), each with\n" +
			"its language, media and what the people asking for a note suggested. --lang picks the feed's language\n" +
			"(an ISO 639-1 code, or all; X's default is English). --check N checks the Nth post as `muse check` does\n" +
			"and keeps it as a case with X's note requests; `muse notes submit ID` then sends its note.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			w, err := noteWriter(app)
			if err != nil {
				return err
			}
			ps, _, err := w.Client.Eligible(cmd.Context(), notewriter.EligibleOptions{Max: max, Lang: feedLang})
			if err != nil {
				return err
			}
			if check > 0 {
				if check > len(ps) {
					return usagef("--check %d: X offered %d posts", check, len(ps))
				}
				post, x := notes.Post(ps[check-1])
				fmt.Fprintf(app.Stderr, "muse: checking post %s (%s)\n", x.PostID, post.URL)
				return runPost(cmd, app, &postFlags{}, asJSON, false, post, time.Time{}, pipeline.Options{}, func(c *pipeline.Check) { c.XNote = x })
			}
			if asJSON {
				if ps == nil {
					ps = []notewriter.EligiblePost{}
				}
				b, err := json.MarshalIndent(ps, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(app.Stdout, "%s\n", b)
				return err
			}
			if len(ps) == 0 {
				fmt.Fprintln(app.Stdout, "X offers no post for a note in this feed now.")
				return nil
			}
			for i, p := range ps {
				printEligible(app.Stdout, i+1, p)
			}
			fmt.Fprintln(app.Stdout, "\nmuse notes eligible --check N checks the Nth post and keeps it as a case.")
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the posts as a JSON array (with --check: the Check, as muse check --json)")
	cmd.Flags().IntVarP(&max, "n", "n", 10, "how many posts to ask for (1 to 100)")
	cmd.Flags().StringVar(&feedLang, "lang", "", "the feed's language: an ISO 639-1 code such as es, or all (X's default: en)")
	cmd.Flags().IntVar(&check, "check", 0, "check the Nth post listed and keep it as a case")
	return cmd
}

// printEligible prints one eligible post: its number, ID, time, language
// and text on one line, then its media and the note requests.
func printEligible(w io.Writer, n int, p notewriter.EligiblePost) {
	text := safeLine(p.Text)
	if r := []rune(text); len(r) > 100 {
		text = string(r[:99]) + "…"
	}
	when := ""
	if !p.CreatedAt.IsZero() {
		when = p.CreatedAt.UTC().Format("2006-01-02 15:04") + "  "
	}
	fmt.Fprintf(w, "%2d. %s  %s%s  %s\n", n, p.ID, when, p.Lang, text)
	for _, m := range p.Media {
		fmt.Fprintf(w, "      %s %s\n", m.Type, safeLine(m.URL))
	}
	if p.Quoted != nil {
		fmt.Fprintf(w, "      quotes %s\n", p.Quoted.URL())
	}
	if p.RepliedTo != nil {
		fmt.Fprintf(w, "      replies to %s\n", p.RepliedTo.URL())
	}
	for _, r := range p.Requests {
		line := "      note request: " + safeLine(r.Suggestion)
		if r.SourceLink != "" {
			line += " (" + safeLine(r.SourceLink) + ")"
		}
		fmt.Fprintln(w, line)
	}
	for _, s := range p.Sources {
		fmt.Fprintf(w, "      suggested source ×%d: %s\n", s.Count, safeLine(s.URL))
	}
}

// safeLine is text from X as one printable line: no control sequence
// (a terminal's escapes), no line break.
func safeLine(s string) string { return strings.Join(strings.Fields(sanitize.String(s)), " ") }

// noteOnCase is what evaluate and submit start from: the note writer
// (its links fetched live first with liveLinks), the case store and case
// ID, --post laid over the case's post.
func noteOnCase(cmd *cobra.Command, app *App, id, post string, liveLinks bool) (*notes.Writer, *cases.Store, *pipeline.Check, error) {
	w, err := noteWriter(app)
	if err != nil {
		return nil, nil, nil, err
	}
	if liveLinks {
		w.Links = fetch.New(setup.FetchOptions(app.Cfg)).Client()
	}
	st, c, err := openNoteCase(cmd, app, id)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := givenPost(c, post); err != nil {
		st.Close()
		return nil, nil, nil, err
	}
	return w, st, c, nil
}

// givenPost lays --post POST_ID over the case's post.
func givenPost(c *pipeline.Check, post string) error {
	if post == "" {
		return nil
	}
	if strings.Trim(post, "0123456789") != "" {
		return usagef("--post %q: an X post's ID is a number", post)
	}
	if c.XNote == nil {
		c.XNote = &pipeline.XNote{}
	}
	c.XNote.PostID = post
	return nil
}

func notesEvaluateCmd(app *App) *cobra.Command {
	var live bool
	var post string
	cmd := &cobra.Command{
		Use:               "evaluate ID [--post POST_ID] [--live]",
		Short:             "X's ClaimOpinion score of the case's note (POST /2/evaluate_note), kept on the case; nothing is submitted",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: app.completeCaseIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			w, st, c, err := noteOnCase(cmd, app, args[0], post, live)
			if err != nil {
				return err
			}
			defer st.Close()
			score, err := w.Evaluate(cmd.Context(), c)
			if err != nil {
				preflightSaid(app, err)
				return fmt.Errorf("case %s: %w", c.ID, err)
			}
			if err := st.Save(cmd.Context(), c); err != nil {
				fmt.Fprintln(app.Stderr, "muse: warning: the score is not kept on the case:", err)
			}
			fmt.Fprintf(app.Stdout, "ClaimOpinion score %.2f on post %s\n", score, c.XNote.PostID)
			return nil
		},
	}
	cmd.Flags().BoolVar(&live, "live", false, "pre-flight the links live first: each token X reads as a link must answer 200")
	cmd.Flags().StringVar(&post, "post", "", "the X post's ID (default: the one X offered, or the case's post URL)")
	return cmd
}

func notesSubmitCmd(app *App) *cobra.Command {
	var live, liveLinks bool
	var post string
	cmd := &cobra.Command{
		Use:   "submit ID [--post POST_ID] [--live]",
		Short: "Submit the case's note to X in test mode (POST /2/notes): the checker's approval is this command",
		Long: "Pre-flights the note (--check-links fetches its links too), submits it in test mode and keeps the note's\n" +
			"ID on the case; `muse notes status` brings its scores back. --live submits it for raters to see, only\n" +
			"with x.live_notes = true in the config and once the admission ledger meets X's bar.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: app.completeCaseIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			w, st, c, err := noteOnCase(cmd, app, args[0], post, liveLinks)
			if err != nil {
				return err
			}
			defer st.Close()
			id, err := w.Submit(cmd.Context(), c, live)
			if err != nil {
				preflightSaid(app, err)
				return fmt.Errorf("case %s: %w", c.ID, err)
			}
			mode := "test mode"
			if live {
				mode = "live"
			}
			if err := st.Save(cmd.Context(), c); err != nil {
				fmt.Fprintf(app.Stderr, "muse: warning: note %s is not kept on the case: %v\n", id, err)
			}
			if err := st.Audit(cmd.Context(), c.ID, cases.ActionExported, "note submitted to X in "+mode+" as note "+id); err != nil {
				fmt.Fprintln(app.Stderr, "muse: warning: the submission is not in the case's trail:", err)
			}
			fmt.Fprintf(app.Stdout, "submitted in %s: note %s on post %s\n", mode, id, c.XNote.PostID)
			return nil
		},
	}
	cmd.Flags().BoolVar(&live, "live", false, "submit for raters to see (needs x.live_notes and a ledger meeting X's bar)")
	cmd.Flags().BoolVar(&liveLinks, "check-links", false, "fetch each token X reads as a link first; each must answer 200")
	cmd.Flags().StringVar(&post, "post", "", "the X post's ID (default: the one X offered, or the case's post URL)")
	return cmd
}

func notesStatusCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [--json]",
		Short: "The admission ledger: the last 50 test-mode notes, their scores, X's four ratios; each case told its note's",
		Long: "Reads the notes written in test mode (GET /2/notes/search/notes_written) and says, over the last 50, the\n" +
			"share high and low on ClaimOpinion, high on UrlValidity and high on HarassmentAbuse against X's admission\n" +
			"bar (≥30%, ≤30%, ≥95%, ≥98%) and how many more notes it needs. Each case whose note (or post) is among\n" +
			"them keeps its status and scores.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			w, err := noteWriter(app)
			if err != nil {
				return err
			}
			written, err := w.Client.NotesWritten(cmd.Context(), false, 100)
			if err != nil {
				return err
			}
			l := notewriter.NewLedger(written)
			byNote := map[string]string{}
			if st, err := openCases(cmd.Context(), app); err != nil {
				fmt.Fprintln(app.Stderr, "muse: warning: the cases are not told their notes' scores:", err)
			} else {
				byNote = applyStatuses(cmd, app, st, written)
				st.Close()
			}
			if asJSON {
				out := struct {
					notewriter.Ledger
					Summary string            `json:"summary"`
					Cases   map[string]string `json:"cases"` // note ID → case ID
				}{l, l.Summary(), byNote}
				b, err := json.MarshalIndent(out, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(app.Stdout, "%s\n", b)
				return err
			}
			fmt.Fprintf(app.Stdout, "Admission ledger: the last %d test-mode notes (X reads %d)\n", l.Written, notewriter.AdmissionWindow)
			for _, b := range l.Bars {
				fmt.Fprintln(app.Stdout, "  "+b.String())
			}
			fmt.Fprintln(app.Stdout, strings.ToUpper(l.Summary()[:1])+l.Summary()[1:]+".")
			if len(l.Notes) > 0 {
				fmt.Fprintln(app.Stdout)
			}
			for _, n := range l.Notes {
				line := fmt.Sprintf("  %s  post %s  %s", n.ID, n.PostID, notes.Scores(n.Scores))
				if n.Status != "" {
					line += "  " + n.Status
				}
				if id := byNote[n.ID]; id != "" {
					line += "  case " + id
				}
				fmt.Fprintln(app.Stdout, line)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the ledger as one JSON object")
	return cmd
}

// applyStatuses tells every case with an X post its note's status and
// scores (notes.Apply), saving those that changed; it returns the case of
// each note.
func applyStatuses(cmd *cobra.Command, app *App, st *cases.Store, written []notewriter.WrittenNote) map[string]string {
	byNote := map[string]string{}
	sums, err := st.List(cmd.Context(), cases.ListOptions{})
	if err != nil {
		fmt.Fprintln(app.Stderr, "muse: warning: the cases are not told their notes' scores:", err)
		return byNote
	}
	posts := map[string]bool{}
	for _, n := range written {
		posts[n.PostID] = true
	}
	for _, s := range sums {
		c, err := st.Get(cmd.Context(), s.ID)
		if err != nil || !posts[notes.PostID(c)] {
			continue
		}
		if notes.Apply(c, written, time.Now()) {
			if err := st.Save(cmd.Context(), c); err != nil {
				fmt.Fprintf(app.Stderr, "muse: warning: case %s: %v\n", c.ID, err)
			}
		}
		if c.XNote != nil && c.XNote.NoteID != "" {
			byNote[c.XNote.NoteID] = c.ID
		}
	}
	return byNote
}
