package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/extract"
)

// A page read only up to its paywall, and one a bot protection refused,
// say so in the sources pane and in "why this source": the wall and what
// showed it, the words read, and the summary that counts them apart.
func TestWhyThisSourceNamesTheWall(t *testing.T) {
	m, _ := finished(t, 120, 60)
	m.sel = stageIndex(pipeline.StageSources)
	s := &m.check.Sources[0]
	s.Status, s.Words = pipeline.StatusPartial, 79
	s.Wall = &extract.Wall{Kind: extract.WallPaywall, Signs: []string{"isAccessibleForFree: false"}}
	s.Reason = "paywalled: only the first 79 words were readable, and the model read them: it quoted none of them as confirming, refuting or explaining the post"
	b := &m.check.Sources[1]
	b.Status, b.Reason, b.Paragraphs, b.Words = pipeline.StatusBlocked, "the site's bot protection refused muse (Cloudflare, HTTP 403)", nil, 0
	m.check.Evidence = nil
	pane := strings.Join(strings.Fields(m.View()), " ")
	for _, want := range []string{"~ partial", "✗ bot wall"} {
		if !strings.Contains(pane, want) {
			t.Errorf("the sources pane does not show %q:\n%s", want, m.View())
		}
	}
	press(t, m, "enter")
	why := strings.Join(strings.Fields(strings.ReplaceAll(m.View(), "│", " ")), " ")
	for _, want := range []string{"paywall (isAccessibleForFree: false) — only the opening was read", "only the first 79 words were readable",
		"became partial", "behind a paywall: only its first 79 words could be read", "could not be read: the site's bot protection refused muse (HTTP 403)"} {
		if !strings.Contains(why, want) {
			t.Errorf("why this source does not say %q:\n%s", want, m.View())
		}
	}
	if strings.Contains(why, "none addresses the post") || strings.Contains(why, "was read and it does not address") {
		t.Errorf("the partial page is counted as read:\n%s", m.View())
	}
}

// P on a source opens $EDITOR on an empty file; what the journalist
// pastes there and saves becomes the page's text, said to be pasted, and
// the status line says which rerun reads it.
func TestPasteTheTextOfASource(t *testing.T) {
	m, _ := finished(t, 120, 40)
	m.sel = stageIndex(pipeline.StageSources)
	i := m.cur(pipeline.StageSources)
	src := &m.check.Sources[i]
	src.Status, src.Reason, src.Paragraphs, src.Words = pipeline.StatusBlocked, "the site's bot protection refused muse (Cloudflare, HTTP 403)", nil, 0
	script := filepath.Join(t.TempDir(), "paste-editor")
	const pasted = "The council has not voted on any ban.\n\nIts published agenda shows no such item, a spokesperson said on Friday."
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s\\n' '"+pasted+"' > \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m.opts.Editor = script
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("P")})
	if cmd == nil {
		t.Fatal("P did nothing")
	}
	ready, ok := cmd().(editorReadyMsg)
	if !ok || ready.err != nil || ready.source != src.URL {
		t.Fatalf("P gave %+v, want the editor on a file for %s", ready, src.URL)
	}
	if b, _ := os.ReadFile(ready.path); strings.TrimSpace(string(b)) != "" {
		t.Errorf("the file to paste into is not empty: %q", b)
	}
	if err := editorCmd(m.opts.Editor, ready.path).Run(); err != nil { // what tea.ExecProcess runs
		t.Fatal(err)
	}
	b, _ := os.ReadFile(ready.path)
	drive(t, m, m.onEditorDone(editorDoneMsg{text: string(b), source: ready.source}))
	s := m.check.Sources[i]
	if s.TextFrom != pipeline.TextPasted || len(s.Paragraphs) != 2 || s.Paragraphs[0] != "The council has not voted on any ban." {
		t.Errorf("after the paste: text from %q, paragraphs %q", s.TextFrom, s.Paragraphs)
	}
	if st := m.check.Stage(pipeline.StageSources).State; st != pipeline.StateStale {
		t.Errorf("the sources stage is %s after a paste, want stale", st)
	}
	if v := m.View(); !strings.Contains(v, "words pasted as the text of") || !strings.Contains(v, "s reads the pages again") {
		t.Errorf("the status line does not say what was pasted and what reads it:\n%s", v)
	}
}
