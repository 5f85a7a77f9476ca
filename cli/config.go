package cli

import (
	"cmp"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/httpcache"
	"github.com/musecheck/muse/sources/pgdb"
)

// doctorCmd is `muse doctor`.
func doctorCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Check the configuration, model, prices, search providers, ratings and archive, and say what to fix",
		Long:  "Exits 1 when anything failed. --json prints a JSON array of {name, status, detail, fix}.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			items := setup.Doctor(cmd.Context(), app.Cfg)
			failed := 0
			for _, it := range items {
				if it.Status == setup.DoctorFail {
					failed++
				}
			}
			if asJSON {
				if err := writeJSON(app.Stdout, items); err != nil {
					return err
				}
			} else {
				for _, it := range items {
					fmt.Fprintf(app.Stdout, "[%s] %s: %s\n", it.Status, it.Name, it.Detail)
					if it.Fix != "" {
						fmt.Fprintf(app.Stdout, "       fix: %s\n", it.Fix)
					}
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d problem(s) found; see the fixes above", failed)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of findings {name, status, detail, fix}")
	return cmd
}

// configCmd is `muse config init|show`.
func configCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Write a commented config file, or show the settings in effect"}
	var force, print bool
	initCmd := &cobra.Command{
		Use:   "init [--force] [--print]",
		Short: "Write a commented config.toml with every key (to --config, or $XDG_CONFIG_HOME/muse/config.toml)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if print {
				_, err := io.WriteString(app.Stdout, setup.ConfigTemplate)
				return err
			}
			path := cmp.Or(app.configFile, app.Cfg.DefaultFile())
			if err := setup.WriteTemplate(path, force); err != nil {
				return usage(err)
			}
			fmt.Fprintf(app.Stderr, "muse: wrote %s; every key is commented out, `muse config show` shows what is in effect\n", path)
			return nil
		},
	}
	initCmd.Flags().BoolVar(&force, "force", false, "write over an existing file")
	initCmd.Flags().BoolVar(&print, "print", false, "print the file on stdout instead of writing it")
	var asJSON bool
	show := &cobra.Command{
		Use:   "show [--json]",
		Short: "Print every setting in effect and where it came from (flag, env, file, default), secrets masked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			settings := app.Cfg.Settings()
			if asJSON {
				return writeJSON(app.Stdout, settings)
			}
			fmt.Fprintf(app.Stdout, "# config file: %s\n# data: %s\n# cache: %s\n", cmp.Or(app.Cfg.File, "none"), app.Cfg.DataDir, app.Cfg.CacheDir)
			tw := tabwriter.NewWriter(app.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tVALUE\tFROM\tENV")
			for _, s := range settings {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Key, cmp.Or(s.Value, "-"), s.Origin, cmp.Or(s.Env, "-"))
			}
			return tw.Flush()
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of {key, env, value, origin}")
	cmd.AddCommand(initCmd, show)
	return cmd
}

// versionCmd is `muse version [--json]`, the same as `muse --version`.
func versionCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print muse's version: module version, VCS revision and time, Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return writeJSON(app.Stdout, buildInfo())
			}
			_, err := fmt.Fprintln(app.Stdout, "muse", versionString())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object {version, revision, time, modified, go}")
	return cmd
}

// build is what the binary says of its build (runtime/debug build info,
// as `go build` records it from the module and the VCS).
type build struct {
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Time     string `json:"time"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

func buildInfo() build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return build{Version: "(no build information)"}
	}
	b := build{Version: bi.Main.Version, Go: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// versionString is buildInfo in one line: module version, short VCS
// revision (unless the pseudo-version carries it), "-dirty", commit time,
// Go version.
func versionString() string {
	b := buildInfo()
	v := b.Version
	if short := b.Revision[:min(12, len(b.Revision))]; short != "" {
		if !strings.Contains(v, short) {
			v += " " + short
		}
		if b.Modified {
			v += "-dirty"
		}
	}
	if b.Time != "" {
		v += " " + b.Time
	}
	return strings.TrimSpace(v + " " + b.Go)
}

// cacheCmd groups `muse cache clear` and `muse cache stats`.
func cacheCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "cache", Short: "Manage the cache of search and model responses ($XDG_CACHE_HOME/muse)"}
	open := func(cmd *cobra.Command) (*httpcache.Cache, error) {
		return httpcache.Open(cmd.Context(), httpcache.Options{Path: app.Cfg.CachePath(), Bypass: true})
	}
	var asJSON bool
	stats := &cobra.Command{
		Use:   "stats [--json]",
		Short: "Show how many responses are cached and their size",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := open(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			s, err := c.Stats(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(app.Stdout, struct {
					Path    string `json:"path"`
					Entries int64  `json:"entries"`
					Bytes   int64  `json:"bytes"`
				}{pgdb.Redact(app.Cfg.CachePath()), s.Entries, s.Bytes})
			}
			fmt.Fprintf(app.Stdout, "%d cached responses, %d bytes, in %s\n", s.Entries, s.Bytes, pgdb.Redact(app.Cfg.CachePath()))
			return nil
		},
	}
	stats.Flags().BoolVar(&asJSON, "json", false, "print one JSON object {path, entries, bytes}")
	cmd.AddCommand(&cobra.Command{
		Use:   "clear",
		Short: "Forget every cached search and model response",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := open(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			n, err := c.Clear(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(app.Stdout, "removed %d cached responses from %s\n", n, pgdb.Redact(app.Cfg.CachePath()))
			return nil
		},
	}, stats)
	return cmd
}
