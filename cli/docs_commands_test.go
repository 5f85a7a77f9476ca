package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// mistakes are the command lines the docs show as what not to type.
var mistakes = map[string]bool{"muse doctr": true, "muse xyzzy": true, "muse cache stat": true}

var (
	inlineMuse = regexp.MustCompile("`(muse [^`]*)`")
	lowerWord  = regexp.MustCompile(`^[a-z]+$`)
)

// docCommands are the muse command lines in README.md and docs/*.md: each
// inline code span that starts with "muse ", and each line of a code block
// that does (after any VAR=value assignments), with the file they are in.
func docCommands(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "README.md"))
	found := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		block := false
		for line := range strings.Lines(string(b)) {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "```") {
				block = !block
				continue
			}
			if block {
				words := strings.Fields(line)
				for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
					words = words[1:]
				}
				if len(words) > 0 && words[0] == "muse" {
					found[strings.Join(words, " ")] = filepath.Base(f)
				}
				continue
			}
			for _, m := range inlineMuse.FindAllStringSubmatch(line, -1) {
				found[m[1]] = filepath.Base(f)
			}
		}
	}
	return found
}

// checkCommandLine says what is wrong with a muse command line the docs
// show: a subcommand or a flag the command tree does not have ("" when
// nothing is).
func checkCommandLine(root *cobra.Command, line string) string {
	words := strings.Fields(line)[1:]
	// What a shell would not pass: comments, pipes, redirections.
	for i, w := range words {
		if strings.HasPrefix(w, "#") || w == "|" || w == ">" || w == ">>" || w == "2>&1" || w == "&&" {
			words = words[:i]
			break
		}
	}
	var path []string
	cmd := root
	for _, w := range words {
		if strings.HasPrefix(w, "-") || !lowerWord.MatchString(w) {
			break
		}
		sub, _, err := cmd.Find([]string{w})
		if err != nil || sub == cmd {
			break
		}
		cmd, path = sub, append(path, w)
	}
	rest := words[len(path):]
	if len(rest) > 0 && lowerWord.MatchString(rest[0]) && (cmd == root || cmd.HasSubCommands()) && cmd.Name() != "completion" {
		return "muse " + strings.Join(append(path, rest[0]), " ") + ": not a command"
	}
	for _, w := range rest {
		if !strings.HasPrefix(w, "-") || w == "-" || strings.HasPrefix(w, "-…") {
			continue
		}
		name := strings.TrimLeft(strings.SplitN(w, "=", 2)[0], "-")
		name = strings.TrimRight(name, "…,.;:)]")
		var ok bool
		if strings.HasPrefix(w, "--") {
			ok = cmd.Flags().Lookup(name) != nil || cmd.InheritedFlags().Lookup(name) != nil
		} else {
			ok = cmd.Flags().ShorthandLookup(name[:1]) != nil || cmd.InheritedFlags().ShorthandLookup(name[:1]) != nil
		}
		if !ok {
			return cmd.CommandPath() + " has no flag " + w
		}
	}
	return ""
}

// TestDocsCommandsExist: every muse command line the README and docs/ show
// names commands and flags muse has, so a renamed command or flag fails
// here rather than in a reader's terminal.
func TestDocsCommandsExist(t *testing.T) {
	root := newRoot(&App{})
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	lines := docCommands(t)
	if len(lines) < 30 {
		t.Fatalf("found %d muse command lines in the docs; the reader is broken", len(lines))
	}
	for line, file := range lines {
		if mistakes[line] {
			continue
		}
		if why := checkCommandLine(root, line); why != "" {
			t.Errorf("%s shows `%s`: %s", file, line, why)
		}
	}
	// The check itself: a renamed command and a missing flag are caught.
	for _, bad := range []string{"muse cases list", "muse check --jsn TEXT", "muse sources ratings x", "muse batch -x FILE"} {
		if checkCommandLine(root, bad) == "" {
			t.Errorf("checkCommandLine(%q) found nothing wrong", bad)
		}
	}
}
