package cli

import (
	"cmp"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/notewriter"
	"github.com/musecheck/muse/sources/posts"
)

// notesCmd is `muse notes evaluate|submit ID`: a saved check's note sent
// to X's AI Note Writer API.
func notesCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "notes",
		Short: "Send a saved check's Community Note to X's AI Note Writer API (evaluate, submit in test mode)",
		Long: "The keys are X_API_KEY, X_API_KEY_SECRET, X_ACCESS_TOKEN and X_ACCESS_TOKEN_SECRET (OAuth 1.0a, the\n" +
			"writer's app and account); MUSE_X_API_URL replaces https://api.x.com. Notes are submitted in test mode only.",
	}
	cmd.AddCommand(notesEvaluateCmd(app), notesSubmitCmd(app))
	return cmd
}

// noteForX loads case ID, its note and pre-flight, the post's ID and a
// client; it refuses a note the pre-flight fails, saying each failure.
func noteForX(cmd *cobra.Command, app *App, id, postID string) (*cases.Store, *pipeline.Check, export.NoteDoc, string, *notewriter.Client, error) {
	keys := notewriter.Keys{APIKey: os.Getenv("X_API_KEY"), APISecret: os.Getenv("X_API_KEY_SECRET"),
		AccessToken: os.Getenv("X_ACCESS_TOKEN"), AccessSecret: os.Getenv("X_ACCESS_TOKEN_SECRET")}
	fail := func(err error) (*cases.Store, *pipeline.Check, export.NoteDoc, string, *notewriter.Client, error) {
		return nil, nil, export.NoteDoc{}, "", nil, err
	}
	if m := keys.Missing(); len(m) > 0 {
		return fail(usagef("muse notes needs the writer's OAuth 1.0a keys: set %s", strings.Join(m, ", ")))
	}
	// The keys are never printed, whatever an error echoes.
	red := sources.NewRedactor(append(app.Cfg.Secrets(), keys.APIKey, keys.APISecret, keys.AccessToken, keys.AccessSecret)...)
	app.Stdout, app.Stderr = red.Writer(app.Stdout), red.Writer(app.Stderr)
	st, err := readCases(cmd.Context(), app)
	if err != nil {
		return fail(err)
	}
	if id, err = st.Resolve(cmd.Context(), id); err != nil {
		st.Close()
		return fail(err)
	}
	c, err := st.Get(cmd.Context(), id)
	if err != nil {
		st.Close()
		return fail(err)
	}
	postID = cmp.Or(postID, posts.TweetID(c.Post.URL))
	if postID == "" {
		st.Close()
		return fail(usagef("case %s is not an X post with a known URL: give its ID with --post", id))
	}
	d := export.NoteFor(cmd.Context(), c, nil)
	if !d.Preflight.OK() {
		for _, p := range d.Preflight.Problems {
			fmt.Fprintf(app.Stderr, "muse: pre-flight: %s — %s\n", p.What, p.Fix)
		}
		st.Close()
		return fail(fmt.Errorf("case %s: the note fails the pre-flight; nothing was sent to X", id))
	}
	base := strings.TrimSpace(os.Getenv("MUSE_X_API_URL"))
	return st, c, d, postID, notewriter.New(base, keys, nil), nil
}

func notesEvaluateCmd(app *App) *cobra.Command {
	var postID string
	cmd := &cobra.Command{
		Use:               "evaluate ID [--post POST_ID]",
		Short:             "X's ClaimOpinion score of the case's note (POST /2/evaluate_note); nothing is submitted",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: app.completeCaseIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, d, post, client, err := noteForX(cmd, app, args[0], postID)
			if err != nil {
				return err
			}
			defer st.Close()
			score, err := client.Evaluate(cmd.Context(), post, d.Text)
			if err != nil {
				return err
			}
			fmt.Fprintf(app.Stdout, "ClaimOpinion score %.2f on post %s\n", score, post)
			return nil
		},
	}
	cmd.Flags().StringVar(&postID, "post", "", "the X post's ID (default: from the case's post URL)")
	return cmd
}

func notesSubmitCmd(app *App) *cobra.Command {
	var postID string
	cmd := &cobra.Command{
		Use:               "submit ID [--post POST_ID]",
		Short:             "Submit the case's note to X in test mode (POST /2/notes): the checker's approval is this command",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: app.completeCaseIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, c, d, post, client, err := noteForX(cmd, app, args[0], postID)
			if err != nil {
				return err
			}
			defer st.Close()
			noteID, err := client.Submit(cmd.Context(), notewriter.Note{PostID: post, Text: d.Text,
				Classification: d.Classification, MisleadingTags: d.MisleadingTags}, false)
			if err != nil {
				return err
			}
			if err := st.Audit(cmd.Context(), c.ID, cases.ActionExported, "note submitted to X in test mode as note "+noteID); err != nil {
				fmt.Fprintln(app.Stderr, "muse: warning: the submission is not in the case's trail:", err)
			}
			fmt.Fprintf(app.Stdout, "submitted in test mode: note %s on post %s\n", noteID, post)
			return nil
		},
	}
	cmd.Flags().StringVar(&postID, "post", "", "the X post's ID (default: from the case's post URL)")
	return cmd
}
