package tui

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the README's key table from the keymap")

// readmeKeyTable finds the key table under "#### Keys" in the README.
func readmeKeyTable(t *testing.T, readme string) (start, end int) {
	t.Helper()
	i := strings.Index(readme, "#### Keys\n")
	if i < 0 {
		t.Fatal("README has no #### Keys section")
	}
	start = i + len("#### Keys\n")
	end = start
	for end < len(readme) && strings.HasPrefix(readme[end:], "|") {
		end += strings.Index(readme[end:], "\n") + 1
	}
	if end == start {
		t.Fatal("no table right under #### Keys")
	}
	return start, end
}

// TestREADMEKeyTable: the README's key table is the keymap's
// (go test ./tui -run TestREADMEKeyTable -update-readme rewrites it).
func TestREADMEKeyTable(t *testing.T) {
	const path = "../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start, end := readmeKeyTable(t, readme)
	want := keyTable(newKeyMap())
	if *updateREADME {
		if err := os.WriteFile(path, []byte(readme[:start]+want+readme[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := readme[start:end]; got != want {
		t.Errorf("the README's key table is not the keymap's; run go test ./tui -run TestREADMEKeyTable -update-readme\ngot:\n%s\nwant:\n%s", got, want)
	}
}

// TestHelpShowsEveryBinding: the ? screen lists every binding of the
// keymap, so help and keys cannot disagree.
func TestHelpShowsEveryBinding(t *testing.T) {
	m, _ := finished(t, 160, 48)
	press(t, m, "?")
	var all []string
	for m.overlay == overlayHelp {
		all = append(all, m.View())
		press(t, m, "pgdown")
		if len(all) > 10 {
			break
		}
	}
	m.overlay = overlayHelp
	v := strings.Join(all, "\n")
	for _, g := range m.keys.keyGroups() {
		for _, kb := range g.keys {
			if !strings.Contains(v, kb.Help().Key) {
				t.Errorf("help lacks %q (%s)", kb.Help().Key, kb.Help().Desc)
			}
		}
	}
}

// TestFilterKeepsCursorAcrossReruns: `/` filters with a count, and the
// cursor stays on its item through a rerun's reordering and the filter's
// removal.
func TestFilterKeepsCursorAcrossReruns(t *testing.T) {
	m, _ := finished(t, 100, 30)
	m.sel = stageIndex(pipeline.StageSources)
	press(t, m, "/")
	press(t, m, "high", "enter")
	if got := m.filterCount(pipeline.StageSources); !strings.HasPrefix(got, "3/5") {
		t.Errorf("filter count %q", got)
	}
	press(t, m, "j") // Associated Press, the second high one
	want := m.currentSource().URL
	snap := cloneCheck(m.check)
	snap.Sources = append(snap.Sources[4:], snap.Sources[:4]...) // a rerun reorders
	m.onEvent(pipeline.Event{Kind: pipeline.EventItem, Stage: pipeline.StageSources, Check: snap})
	if got := m.currentSource().URL; got != want {
		t.Errorf("after a rerun the cursor is on %s, want %s", got, want)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
	m.prompt.input.SetValue("")
	press(t, m, "enter")
	if got := m.currentSource().URL; got != want {
		t.Errorf("clearing the filter moved the cursor to %s", got)
	}
}

// TestREADMEWalkthroughKeys: every key the README's walkthrough names is
// one the app answers to (a keymap binding or an export menu key).
func TestREADMEWalkthroughKeys(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "#### A short walkthrough")
	end := strings.Index(readme, "#### Keys")
	if start < 0 || end < start {
		t.Fatal("README lacks the walkthrough or the key table")
	}
	valid := map[string]bool{}
	arrows := map[string]string{"up": "↑", "down": "↓", "left": "←", "right": "→"}
	for _, g := range newKeyMap().keyGroups() {
		for _, kb := range g.keys {
			for _, k := range kb.Keys() {
				valid[k] = true
				if a, ok := arrows[k]; ok {
					valid[a] = true
				}
			}
		}
	}
	for _, c := range exportChoices(true) {
		valid[c.key] = true
	}
	keyLike := regexp.MustCompile("`([a-zA-Z]|ctrl\\+[a-z]|shift\\+tab|esc|tab|enter|space|[/\\\\?↑↓←→])`")
	named := 0
	for _, m := range keyLike.FindAllStringSubmatch(readme[start:end], -1) {
		named++
		if !valid[m[1]] {
			t.Errorf("the walkthrough names `%s`, which no binding has", m[1])
		}
	}
	if named < 20 {
		t.Errorf("only %d keys found in the walkthrough: the pattern no longer reads it", named)
	}
}
