package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/httpcache"
	"github.com/musecheck/muse/sources/jobs"
	"github.com/musecheck/muse/sources/pgdb"
	"github.com/musecheck/muse/sources/sanitize"
	"github.com/musecheck/muse/sources/spend"
)

// newsroomCmd is `muse newsroom`: the roles of a newsroom's PostgreSQL
// database (cases.InitNewsroom, cases.Grant).
func newsroomCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "newsroom", Short: "Set up a newsroom's logins and roles on its PostgreSQL database"}
	url := func() (string, error) {
		u := app.Cfg.DatabaseURL
		if !pgdb.IsURL(u) {
			return "", usagef("newsroom: roles are a PostgreSQL newsroom's: set MUSE_DATABASE_URL (or --database-url) to postgres://…")
		}
		return u, nil
	}
	initCmd := &cobra.Command{
		Use:   "init",
		Short: "Create the roles checker, editor and admin and the rules the database enforces (as the database's owner)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := url()
			if err != nil {
				return err
			}
			if err := migrateAll(cmd.Context(), app, u); err != nil {
				return err
			}
			if err := cases.InitNewsroom(cmd.Context(), u); err != nil {
				return err
			}
			fmt.Fprintf(app.Stdout, "the newsroom at %s has roles: checker, editor, admin; give logins one with `muse newsroom grant LOGIN ROLE`\n", pgdb.Redact(u))
			return nil
		},
	}
	grant := &cobra.Command{
		Use:   "grant LOGIN checker|editor|admin",
		Short: "Give a database login a newsroom role (checkers change their own cases, editors anyone's, admins also grant)",
		Args:  cobra.ExactArgs(2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 1 {
				return cases.Roles, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := url()
			if err != nil {
				return err
			}
			if err := cases.Grant(cmd.Context(), u, args[0], args[1]); err != nil {
				return err
			}
			fmt.Fprintf(app.Stdout, "%s is now a %s of the newsroom\n", args[0], args[1])
			return nil
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke LOGIN",
		Short: "Take every newsroom role from a database login",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := url()
			if err != nil {
				return err
			}
			if err := cases.Revoke(cmd.Context(), u, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(app.Stdout, "%s has no newsroom role now\n", args[0])
			return nil
		},
	}
	var asJSON bool
	who := &cobra.Command{
		Use:   "who [--json]",
		Short: "List the logins with a newsroom role",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := url()
			if err != nil {
				return err
			}
			ms, err := cases.Members(cmd.Context(), u)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(app.Stdout, ms)
			}
			if len(ms) == 0 {
				fmt.Fprintln(app.Stdout, "no login has a newsroom role yet")
			}
			for _, m := range ms {
				fmt.Fprintf(app.Stdout, "%-24s %s\n", sanitize.String(m.Login), m.Role)
			}
			return nil
		},
	}
	who.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of {login, role}")
	cmd.AddCommand(initCmd, grant, revoke, who)
	return cmd
}

// migrateAll opens every store on the newsroom's database once, so that
// each has created or upgraded its tables before the roles are granted on
// them.
func migrateAll(ctx context.Context, app *App, u string) error {
	cs, err := cases.OpenOptions(ctx, cases.Options{Path: u, Secrets: app.Cfg.Secrets()})
	if err != nil {
		return err
	}
	cs.Close()
	ar, err := archive.Open(ctx, u)
	if err != nil {
		return err
	}
	ar.Close()
	hc, err := httpcache.Open(ctx, httpcache.Options{Path: u, Bypass: true})
	if err != nil {
		return err
	}
	hc.Close()
	led, err := spend.Open(ctx, u)
	if err != nil {
		return err
	}
	led.Close()
	q, err := jobs.Open(ctx, app.Cfg.QueueOptions())
	if err != nil {
		return err
	}
	q.Close()
	return nil
}
