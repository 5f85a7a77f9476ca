package tui

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atotto/clipboard"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/ratings"
)

// The defects of issue 13, each with the test that shows it fixed.

// untilTrue feeds the messages of cmd (and those that follow) to m in the
// background, as the program would, until done holds.
func untilTrue(t *testing.T, m *Model, cmd tea.Cmd, done func() bool) chan tea.Msg {
	t.Helper()
	msgs := make(chan tea.Msg, 1000)
	go pump(cmd, msgs)
	feed(t, m, msgs, done)
	return msgs
}

// feed goes on feeding the messages of msgs to m until done holds.
func feed(t *testing.T, m *Model, msgs chan tea.Msg, done func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !done() {
		select {
		case msg := <-msgs:
			if _, ok := msg.(statusClearMsg); ok {
				continue
			}
			_, next := m.Update(msg)
			go pump(next, msgs)
		case <-deadline:
			t.Fatal("condition not met in 10s")
		}
	}
}

// caseModel is a model whose checks are kept in a fresh case store.
func caseModel(t *testing.T, r Runner, w, h int) (*Model, *cases.Store) {
	t.Helper()
	store := openStore(t)
	opts := testOptions(r)
	opts.Cases = store
	m := New(context.Background(), opts)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m, store
}

// Copy inside tmux: a plain OSC 52 (tmux relays it with set-clipboard on),
// never the DCS passthrough tmux 3.3+ drops; the status says what was done.
func TestCopySendsPlainOSC52(t *testing.T) {
	m, _ := finished(t, 80, 24)
	var out bytes.Buffer
	m.opts.Clipboard, m.opts.Output, m.opts.Tmux = nil, &out, true
	msg := m.copyCorrection()()
	m.Update(msg)
	want := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(strings.TrimSpace(m.check.Correction.Text)))
	if !strings.Contains(out.String(), want) {
		t.Errorf("no plain OSC 52 with the correction written: %q", out.String())
	}
	if strings.Contains(out.String(), "\x1bPtmux;") {
		t.Errorf("OSC 52 wrapped in tmux passthrough: %q", out.String())
	}
	if clipboard.Unsupported && (!strings.Contains(m.status, "sent the correction") || !strings.Contains(m.status, "OSC 52") ||
		!strings.Contains(m.status, "set-clipboard on") || strings.Contains(m.status, "copied")) {
		t.Errorf("status claims more than was done: %q", m.status)
	}
}

// Y copies the selected source's address.
func TestCopySourceURL(t *testing.T) {
	m, _ := finished(t, 80, 24)
	var c clip
	m.opts.Clipboard = c.copy
	m.sel = stageIndex(pipeline.StageSources)
	press(t, m, "j", "Y")
	if got := c.last(); got != englishWorld.pages[1].URL {
		t.Errorf("Y copied %q, want %q", got, englishWorld.pages[1].URL)
	}
}

// An inline edit in progress when muse dies is in a draft tied to the
// case within a second, and `muse cases open ID` offers it back.
func TestInlineEditSurvivesAKill(t *testing.T) {
	store := openStore(t)
	dir := t.TempDir()
	opts := testOptions(newRunner(t))
	opts.Cases, opts.DraftDir, opts.Start = store, dir, true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tm := teatest.NewTestModel(t, New(ctx, opts), teatest.WithInitialTermSize(100, 30))
	waitFor(t, tm, "correction ready")
	tm.Type("e")
	waitFor(t, tm, "finish editing")
	tm.Send(keyMsg(tea.KeyCtrlE))
	tm.Type(" Typed before the crash.")
	saved := storedCase(t, store, func(c *pipeline.Check) bool { return c.Correction.Text != "" })
	path := filepath.Join(dir, saved.ID+".json")
	deadline := time.Now().Add(3 * time.Second)
	for {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("Typed before the crash.")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the edit in progress is not in %s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel() // killed: no quit
	_ = tm.Quit()

	saved, _ = store.Get(context.Background(), saved.ID)
	if strings.Contains(saved.Correction.Text, "Typed before the crash.") {
		t.Fatal("test premise: the unsaved edit is already in the case")
	}
	opts2 := testOptions(newRunner(t))
	opts2.Cases, opts2.DraftDir, opts2.Case = store, dir, saved
	tm2 := teatest.NewTestModel(t, New(context.Background(), opts2), teatest.WithInitialTermSize(100, 30))
	waitFor(t, tm2, "Unsaved draft found")
	tm2.Type("r")
	waitFor(t, tm2, "finish editing")
	tm2.Send(keyMsg(tea.KeyEsc))
	waitFor(t, tm2, "edit saved")
	tm2.Type("q")
	tm2.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	got, _ := store.Get(context.Background(), saved.ID)
	if !strings.HasSuffix(got.Correction.Text, "Typed before the crash.") || !got.Correction.Edited {
		t.Errorf("recovered edit not in the case: %q", got.Correction.Text)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("draft left after its text reached the case (err %v)", err)
	}
}

// Quitting with the inline editor open keeps the edit in the case.
func TestQuitWhileEditingKeepsTheEdit(t *testing.T) {
	store := openStore(t)
	opts := testOptions(newRunner(t))
	opts.Cases, opts.Start, opts.DraftDir = store, true, t.TempDir()
	tm := teatest.NewTestModel(t, New(context.Background(), opts), teatest.WithInitialTermSize(100, 30))
	waitFor(t, tm, "correction ready")
	tm.Type("e")
	waitFor(t, tm, "finish editing")
	tm.Send(keyMsg(tea.KeyCtrlE))
	tm.Type(" Last words.")
	tm.Send(keyMsg(tea.KeyCtrlC)) // q would be typed into the edit
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	got := storedCase(t, store, func(c *pipeline.Check) bool { return strings.HasSuffix(c.Correction.Text, "Last words.") })
	if !got.Correction.Edited {
		t.Error("the quit edit is not marked as the person's")
	}
	if files, _ := filepath.Glob(filepath.Join(opts.DraftDir, "*.json")); len(files) != 0 {
		t.Errorf("drafts left after the edit reached the case: %v", files)
	}
}

// A restored compose draft is a new post, checked as a new case: nothing
// of the case shown before it comes with it, and that case is untouched.
func TestComposeDraftStartsANewCase(t *testing.T) {
	dir := t.TempDir()
	m, store := caseModel(t, newRunner(t), 80, 24)
	m.opts.DraftDir = dir
	press(t, m, "ctrl+s")
	first := m.check.ID
	press(t, m, "n")
	if m.compose.inputs[fieldHandle].Value() != "" || m.compose.text.Value() != "" {
		t.Errorf("n kept the last post: handle %q", m.compose.inputs[fieldHandle].Value())
	}
	press(t, m, "The mayor banned cars downtown")
	d := m.draftSnapshot()
	if d.Check.ID != "" || len(d.Check.Queries) > 0 || d.Check.Correction.Text != "" {
		t.Fatalf("the compose draft carries the last case: id %q, %d queries", d.Check.ID, len(d.Check.Queries))
	}
	drive(t, m, saveDraft(nil, dir, m.draftKey(), d, fixedNow))

	opts := testOptions(newRunner(t))
	opts.Cases, opts.DraftDir = store, dir
	opts.Now = func() time.Time { return fixedNow.Add(time.Hour) }
	m2 := New(context.Background(), opts)
	m2.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(t, m2, m2.Init())
	if m2.overlay != overlayRestore {
		t.Fatal("the compose draft was not offered")
	}
	press(t, m2, "r")
	if m2.screen != screenCompose || m2.compose.text.Value() != "The mayor banned cars downtown" {
		t.Fatalf("restored to screen %v with %q", m2.screen, m2.compose.text.Value())
	}
	press(t, m2, "ctrl+s")
	if m2.check.ID == first || m2.check.Post.Text != "The mayor banned cars downtown" {
		t.Errorf("restored draft checked as case %q (first %q): %q", m2.check.ID, first, m2.check.Post.Text)
	}
	old, err := store.Get(context.Background(), first)
	if err != nil || old.Post.Text != testPost.Text {
		t.Errorf("the first case's post became %q (%v)", old.Post.Text, err)
	}
}

// A boost says which rerun makes it count, refuses where the engine's rules
// keep a page out, and the row keeps the real status.
func TestBoostSaysWhatItCanDo(t *testing.T) {
	m, _ := finished(t, 160, 48)
	m.sel = stageIndex(pipeline.StageSources)
	m.check.Sources[2].Status, m.check.Sources[2].Reason = pipeline.StatusUndated, "no publication date"
	m.setCursor(pipeline.StageSources, 2)
	press(t, m, "b")
	if m.check.Sources[2].Boosted || !strings.Contains(m.status, "a boost cannot bring back bbc.com: no publication date") {
		t.Errorf("boost of an undated page: boosted %v, status %q", m.check.Sources[2].Boosted, m.status)
	}
	// The relevance gate counts words; the checker may know better.
	m.check.Sources[2].Status, m.check.Sources[2].Reason = pipeline.StatusIrrelevant, "relevance 0.10 under 0.25"
	press(t, m, "b")
	if !m.check.Sources[2].Boosted || !strings.Contains(m.status, "boosted bbc.com") || !strings.Contains(m.status, "s reads the pages again") {
		t.Errorf("boost of a page off the subject: boosted %v, status %q", m.check.Sources[2].Boosted, m.status)
	}
	low := slices.IndexFunc(m.check.Sources, func(s pipeline.Source) bool { return s.Status == pipeline.StatusExcludedRating })
	m.setCursor(pipeline.StageSources, low) // excluded for its rating
	press(t, m, "b")
	if low < 0 || !m.check.Sources[low].Boosted || !strings.Contains(m.status, "s reads the pages again") {
		t.Errorf("boost of a low-rated publisher: status %q", m.status)
	}
	if v := m.View(); !strings.Contains(v, "↑ ✗ rating") {
		t.Errorf("the boosted row hides its status:\n%s", v)
	}
}

// esc during "write again" keeps the previous correction, keeps the
// half-written one as a version, and marks the stage stopped.
func TestStoppedRewriteKeepsTheCorrection(t *testing.T) {
	r := newRunner(t)
	m, store := caseModel(t, r, 80, 24)
	press(t, m, "ctrl+s")
	prev := m.check.Correction.Text
	r.web.HoldStreams(3) // the model writes three words again, then hangs
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("w")})
	msgs := untilTrue(t, m, cmd, func() bool {
		return m.stage(pipeline.StageCorrection).State == pipeline.StateRunning && strings.Count(m.check.Correction.Text, " ") >= 2
	})
	partial := m.check.Correction.Text
	m.Update(tea.KeyMsg{Type: tea.KeyEsc})
	feed(t, m, msgs, func() bool { return !m.running })
	if m.check.Correction.Text != prev {
		t.Errorf("correction after the stop = %q, want the previous one", m.check.Correction.Text)
	}
	if info := m.stage(pipeline.StageCorrection); info.State != pipeline.StateFailed || info.Error != "stopped" {
		t.Errorf("stopped stage: %+v", info)
	}
	if v := m.View(); !strings.Contains(v, "stopped by you") || strings.Contains(v, "context canceled") {
		t.Errorf("stopped view:\n%s", v)
	}
	var drafts []cases.Draft
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		drafts, _ = store.Drafts(context.Background(), m.check.ID)
		if len(drafts) < 2 {
			continue
		}
		if last := drafts[len(drafts)-1].Text; strings.HasPrefix(last, strings.TrimSpace(partial)) && last != prev {
			return
		}
	}
	t.Errorf("the half-written correction %q is not kept as a version: %+v", partial, drafts)
}

// A burst of keys in one message is each key: "jj" moves twice, and
// "kkd" deletes the query two rows up.
func TestKeyBurstsAreSplit(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.sel = stageIndex(pipeline.StageSources)
	press(t, m, "jj")
	if s := m.currentSource(); s == nil || s.URL != englishWorld.pages[2].URL {
		t.Errorf("jj on sources: cursor on %v", s)
	}
	m.sel = stageIndex(pipeline.StageQueries)
	press(t, m, "G")
	last := m.check.Queries[len(m.check.Queries)-1].Text
	target := m.check.Queries[len(m.check.Queries)-3].Text
	press(t, m, "kkd")
	if hasQuery(m.check.Queries, target) || !hasQuery(m.check.Queries, last) {
		t.Errorf("kkd deleted the wrong query: %+v", m.check.Queries)
	}
}

// With NO_COLOR (no styles at all, as these tests render) every list still
// shows which row is selected.
func TestCursorShowsWithoutColour(t *testing.T) {
	r := newRunner(t)
	opts := testOptions(r)
	opts.Post.Images, opts.Post.AltTexts = []string{bridgeImage}, bridgeAltText
	m := New(context.Background(), opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(t, m, "ctrl+s")
	rows := map[pipeline.Stage]string{
		pipeline.StageImages:   "▸ " + bridgeImage,
		pipeline.StageQueries:  "▸ [x] Baltimore bridge collapse video",
		pipeline.StageSearch:   "▸  1 reuters.com",
		pipeline.StageSources:  "▸ Reuters",
		pipeline.StageEvidence: "▸ [x] refutes",
	}
	for s, want := range rows {
		m.sel = stageIndex(s)
		if v := m.View(); !strings.Contains(v, want) {
			t.Errorf("%s: no %q on the selected row:\n%s", s, want, v)
		}
	}
}

// "Why this source" scrolls with j/k instead of jumping to another source.
func TestWhyThisSourceScrolls(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.sel = stageIndex(pipeline.StageSources)
	press(t, m, "enter")
	before := m.View()
	press(t, m, "j", "j")
	if m.currentSource().URL != englishWorld.pages[0].URL {
		t.Fatalf("j in the why view moved to %s", m.currentSource().URL)
	}
	if after := m.View(); after == before || !strings.Contains(after, "lines 3–") {
		t.Errorf("the why view did not scroll:\n%s", after)
	}
}

// After a rerun re-sorts the sources the cursor stays on its publisher,
// so the next d drops that one.
func TestCursorFollowsItsSource(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.sel = stageIndex(pipeline.StageSources)
	press(t, m, "j", "j") // BBC
	snap := cloneCheck(m.check)
	s := snap.Sources
	s[0], s[2] = s[2], s[0] // the rerun ranks BBC first
	m.onEvent(pipeline.Event{Kind: pipeline.EventItem, Stage: pipeline.StageSources, Check: snap})
	press(t, m, "d")
	for _, src := range m.check.Sources {
		if src.Dropped != (src.Domain == "bbc.com") {
			t.Errorf("after the re-sort d dropped %s", src.Domain)
		}
	}
	m.filter[pipeline.StageSources] = "high"
	if c := m.currentSource(); c == nil || c.Tier != pipeline.TierHigh {
		t.Errorf("the cursor is on a row the filter hides: %+v", c)
	}
}

// A long reason the check cannot start is shown whole in compose.
func TestLongComposeErrorShownWhole(t *testing.T) {
	m := newTestModel(t, 80, 24, newRunner(t))
	m.opts.ReadPost = func(context.Context, pipeline.Post) (pipeline.Post, error) {
		return pipeline.Post{}, os.ErrDeadlineExceeded
	}
	m.compose.err = "reading the post at https://x.com/truthbomb/status/1765001 failed: the platform answered 403 Forbidden after three tries, which usually means the post is private or deleted — paste the post's text instead"
	v := m.View()
	flat := strings.Join(strings.Fields(v), " ")
	if !strings.Contains(flat, "usually means the post is private or deleted — paste the post's text instead") {
		t.Errorf("compose error cut:\n%s", v)
	}
}

// Replies served from the cache are not shown as tokens used.
func TestCachedRepliesSaySo(t *testing.T) {
	m, _ := finished(t, 120, 40)
	m.check.Usage.CachedCalls = 2
	m.check.Usage.LLMCalls = 3
	if v := m.View(); !strings.Contains(v, "2 of 3 replies from the cache (free)") {
		t.Errorf("cached replies not told apart:\n%s", v)
	}
}

// Prompt tokens the server read from its prompt cache count in the
// footer's tokens and are said apart (they are billed at a lower rate).
func TestCachedPromptTokensInTheFooter(t *testing.T) {
	m, _ := finished(t, 160, 40)
	m.check.Usage.CachedCalls = 0
	m.check.Usage.PromptTokens, m.check.Usage.CachedPromptTokens, m.check.Usage.CompletionTokens = 952, 2048, 100
	if v := m.View(); !strings.Contains(v, "3,100 tokens (2,048 prompt cached)") {
		t.Errorf("cached prompt tokens not in the footer:\n%s", v)
	}
}

// Dates against the cutoff: "1 day", and hours under a day.
func TestDateAgainstCutoff(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.check.Cutoff = time.Date(2024, 3, 5, 9, 12, 0, 0, time.UTC)
	for pub, want := range map[time.Time]string{
		time.Date(2024, 3, 4, 9, 0, 0, 0, time.UTC):   "1 day before",
		time.Date(2024, 3, 4, 21, 12, 0, 0, time.UTC): "12 hours before",
		time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC):   "4 days before",
		time.Date(2024, 3, 5, 9, 12, 0, 0, time.UTC):  "not before the cutoff",
	} {
		if got := m.dateVsCutoff(pub); !strings.Contains(got, want) {
			t.Errorf("%v: %q, want %q", pub, got, want)
		}
	}
}

// A page that states only its year shows the year, in the list and in
// "why this source", and is never said to be before or after the cutoff.
func TestYearOnlyDateShownAsTheYear(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.check.Cutoff = time.Date(2008, 6, 1, 0, 0, 0, 0, time.UTC)
	s := pipeline.Source{URL: "https://harbourlanebakery.example/about", PublishedPartial: sources.PartialDate{Year: 2008}}
	if got := m.publishedWords(s); !strings.HasPrefix(got, "2008 only") || strings.Contains(got, "before") || strings.Contains(got, "2008-01-01") {
		t.Errorf("why-this-source date: %q", got)
	}
	for _, c := range m.sourceColumns(160) {
		if c.title == "published" {
			if got := c.value(s); got != "2008" {
				t.Errorf("published column: %q, want 2008", got)
			}
			s.PublishedPartial = sources.PartialDate{Year: 2020, Month: time.March}
			if got := c.value(s); got != "2020-03" {
				t.Errorf("published column: %q, want 2020-03", got)
			}
			return
		}
	}
	t.Error("no published column")
}

// Text appended by $EDITOR starts a line of its own.
func TestEditorAppendsOnANewLine(t *testing.T) {
	m, _ := finished(t, 80, 24)
	script := filepath.Join(t.TempDir(), "append-editor")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'Added by the editor.' >> \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m.opts.Editor = script
	ready := writeEditorFile(m.check.Correction.Text)().(editorReadyMsg)
	before := m.check.Correction.Text
	// tea.ExecProcess needs a program; run the command it would run.
	if err := editorCmd(m.opts.Editor, ready.path).Run(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(ready.path)
	m.onEditorDone(editorDoneMsg{text: string(b)})
	if want := before + "\nAdded by the editor."; m.check.Correction.Text != want {
		t.Errorf("after the editor: %q, want %q", m.check.Correction.Text, want)
	}
}

// The quit question in compose speaks of the post, not a correction.
func TestQuitQuestionInCompose(t *testing.T) {
	m := newTestModel(t, 80, 24, newRunner(t))
	press(t, m, "x")
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlC})
	if v := m.View(); !strings.Contains(v, "post you are composing") || strings.Contains(v, "correction") {
		t.Errorf("quit dialog in compose:\n%s", v)
	}
}

// The no-source text is not announced as a correction ready.
func TestNoSourceIsNotACorrectionReady(t *testing.T) {
	m, _ := finished(t, 80, 24)
	c := cloneCheck(m.check)
	c.Correction = pipeline.Correction{Text: pipeline.NoSourceText}
	m.running = true
	m.onRunDone(runDoneMsg{gen: m.gen, check: c})
	if strings.Contains(m.status, "correction ready") || !strings.Contains(m.status, "no credible source") {
		t.Errorf("status %q", m.status)
	}
}

// At 80 columns the stage list is glyphs, `\` hides it, the footer names
// the pane's keys and "? more", a prompt's footer names its own keys, and under 60×16 the app says
// the terminal is too small.
func TestNarrowLayout(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.sel = stageIndex(pipeline.StageSources)
	v := m.View()
	if !strings.Contains(v, "▸✓4 │") || !strings.Contains(v, "P paste its text") || !strings.Contains(v, "? more") {
		t.Errorf("80 columns:\n%s", v)
	}
	if !strings.Contains(v, "│ ↳ https://www.reuters.com/world/fact-check-bridge-video-2024-03-02/ —") {
		t.Errorf("no detail line with the full URL and reason:\n%s", v)
	}
	press(t, m, "\\")
	if v := m.View(); strings.Contains(v, "▸✓4") {
		t.Errorf("\\ did not hide the stage list:\n%s", v)
	}
	press(t, m, "/")
	if v := m.View(); !strings.Contains(v, "enter save • esc cancel") {
		t.Errorf("prompt footer:\n%s", v)
	}
	press(t, m, "high", "enter")
	if v := m.View(); !strings.Contains(v, "3/5 match “high”") || strings.Contains(v, "New York Times") {
		t.Errorf("filter:\n%s", v)
	}
	m.Update(tea.WindowSizeMsg{Width: 59, Height: 20})
	if v := m.View(); !strings.Contains(v, "too small") {
		t.Errorf("59 columns:\n%s", v)
	}
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	for _, l := range strings.Split(m.View(), "\n") {
		if w := len([]rune(l)); w > stageListWidth+3+readWidth+1 {
			t.Errorf("a %d-column line at 200 columns: %q", w, l)
		}
	}
}

// Page titles and quotes cannot reach the terminal with their escape
// sequences: no window title (OSC 0) and no clipboard write (OSC 52).
func TestPageTextCannotEscape(t *testing.T) {
	m, _ := finished(t, 160, 48)
	osc0 := "\x1b]0;pwned\x07"
	osc52 := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte("rm -rf ~")) + "\x07"
	c1 := "\u009d0;c1 title\u009c"
	m.check.Sources[0].Title = "Fact check" + osc0 + osc52 + c1
	m.check.Sources[0].Reason = "quoted" + osc52
	m.check.Evidence[0].Quote = "A video" + osc0 + " was filmed in 2019."
	m.check.Post.Text = "BREAKING" + osc52
	m.sel = stageIndex(pipeline.StageSources)
	views := []string{m.View()}
	press(t, m, "enter")
	views = append(views, m.View())
	press(t, m, "esc")
	m.sel = stageIndex(pipeline.StageEvidence)
	views = append(views, m.View())
	for _, v := range views {
		for _, bad := range []string{"\x1b]", "\x07", "\u009d", "\u009c"} {
			if strings.Contains(v, bad) {
				t.Errorf("a control sequence reached the view (%q):\n%q", bad, v)
			}
		}
	}
	// The whole sequence goes (sources/sanitize), payload included; the
	// title's own words stay.
	if !strings.Contains(views[1], "Fact check") || strings.Contains(views[1], "pwned") {
		t.Errorf("the title is not shown, or the sequence's payload is:\n%s", views[1])
	}
	if got := safe("a\tb\nc\x1b[31md\x7f\u0085e"); got != "a\tb\ncde" {
		t.Errorf("safe = %q", got)
	}
}

// A one-line edit in progress (a query being reworded) is in the draft as
// it is typed, and reopening the case opens it again with the text typed.
func TestPromptEditSurvivesAKill(t *testing.T) {
	m, _ := caseModel(t, newRunner(t), 80, 24)
	press(t, m, "ctrl+s", "2", "e")
	old := m.check.Queries[0].Text
	press(t, m, " 2024")
	d := m.draftSnapshot()
	if d.Prompt == nil || d.Prompt.Value != old+" 2024" || d.Prompt.Key != old {
		t.Fatalf("the draft lacks the edit in progress: %+v", d.Prompt)
	}

	opts := testOptions(newRunner(t))
	opts.Case = cloneCheck(m.check)
	m2 := New(context.Background(), opts)
	m2.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m2.Update(draftFoundMsg{&d})
	flat := strings.Join(strings.Fields(strings.ReplaceAll(m2.View(), "│", "")), " ")
	if !strings.Contains(flat, "an edit (query: “"+old+" 2024”)") {
		t.Errorf("restore offer:\n%s", m2.View())
	}
	press(t, m2, "r")
	if m2.overlay != overlayPrompt || m2.prompt.input.Value() != old+" 2024" {
		t.Fatalf("the edit did not reopen: overlay %v, %q", m2.overlay, m2.prompt.input.Value())
	}
	press(t, m2, "enter")
	if q := m2.check.Queries[0]; q.Text != old+" 2024" || q.Origin != pipeline.OriginUser {
		t.Errorf("restored edit gave %+v", q)
	}
}

// A run stopped before it wrote the correction again leaves the last
// correction marked stale, not waiting as if none were there.
func TestStopBeforeTheCorrectionMarksItStale(t *testing.T) {
	m, _ := finished(t, 80, 24)
	c := cloneCheck(m.check)
	for i := range c.Stages {
		switch c.Stages[i].Stage {
		case pipeline.StageEvidence:
			c.Stages[i].State, c.Stages[i].Error = pipeline.StateFailed, "evidence: context canceled"
		case pipeline.StageCorrection:
			c.Stages[i].State = pipeline.StateWaiting
		}
	}
	m.running, m.stopped = true, true
	m.onRunDone(runDoneMsg{gen: m.gen, check: c})
	if st := m.stage(pipeline.StageCorrection).State; st != pipeline.StateStale {
		t.Errorf("correction is %s after a stop in evidence", st)
	}
	if info := m.stage(pipeline.StageEvidence); info.Error != "stopped" {
		t.Errorf("evidence: %+v", info)
	}
}

// A page the relevance gate kept out with nothing in common with the post
// shows its score, 0.00, not the "—" of a page never scored.
func TestZeroRelevanceIsShown(t *testing.T) {
	m, _ := finished(t, 160, 48)
	m.sel = stageIndex(pipeline.StageSources)
	s := &m.check.Sources[2]
	s.Status, s.Relevance, s.Reason = pipeline.StatusIrrelevant, 0, "shares 0% of the post's key words"
	m.setCursor(pipeline.StageSources, 2)
	var row string
	for _, l := range strings.Split(m.View(), "\n") {
		if strings.Contains(l, "irrelevant") && strings.Contains(l, firstNonEmpty(s.Publisher, s.Domain)) {
			row = l
		}
	}
	if !strings.Contains(row, "0.00") {
		t.Errorf("the kept-out page's row %q does not show its relevance 0.00", row)
	}
}

// A post composed and not checked is never lost: esc from the form keeps
// it (n goes back to it, not to an empty form), and quitting from the
// check screen asks first, naming it; answering no keeps it.
func TestComposedPostKept(t *testing.T) {
	m, _ := caseModel(t, newRunner(t), 80, 24)
	m.opts.DraftDir = t.TempDir()
	press(t, m, "ctrl+s")
	press(t, m, "n")
	press(t, m, "The mayor banned cars downtown")
	press(t, m, "esc")
	if m.screen != screenCheck || !strings.Contains(m.status, "n goes back to it") {
		t.Fatalf("esc: screen %v, status %q", m.screen, m.status)
	}
	press(t, m, "n")
	if m.screen != screenCompose || m.compose.text.Value() != "The mayor banned cars downtown" {
		t.Fatalf("n after esc: screen %v with %q, want the post typed", m.screen, m.compose.text.Value())
	}
	press(t, m, "esc")
	press(t, m, "q")
	if v := m.View(); m.overlay != overlayQuit || !strings.Contains(v, "post you were composing") {
		t.Fatalf("q with a post not checked: overlay %v\n%s", m.overlay, v)
	}
	press(t, m, "esc") // not quitting
	press(t, m, "n")
	if m.compose.text.Value() != "The mayor banned cars downtown" {
		t.Errorf("after declining to quit the post is %q", m.compose.text.Value())
	}
	// Checked, it is the case's: n opens an empty form again.
	press(t, m, "ctrl+s")
	press(t, m, "n")
	if m.compose.text.Value() != "" {
		t.Errorf("n after the post was checked: %q", m.compose.text.Value())
	}
}

// Undoing a newsroom-wide drop in one check says the overrides file still
// drops the publisher everywhere else, and names the file, rather than
// "restored" as if the newsroom's choice were undone.
func TestRestoreSaysTheNewsroomFileStillDecides(t *testing.T) {
	file := filepath.Join(t.TempDir(), "overrides.toml")
	r := newRunner(t)
	opts := testOptions(r)
	opts.Remember = func(domain string, boost bool) error {
		return ratings.SetOverride(file, domain, ratings.Override{Boost: boost, Drop: !boost})
	}
	opts.NewsroomChoice = func(domain string) (string, string) {
		if o, ok, err := ratings.OverrideOf(file, domain); err == nil && ok && o.Drop {
			return "drop", file
		}
		return "", ""
	}
	m := New(t.Context(), opts)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 35})
	press(t, m, "ctrl+s", "4")
	dom := m.currentSource().Domain
	press(t, m, "D")
	if _, ok, _ := ratings.OverrideOf(file, dom); ok || !strings.Contains(m.status, "D again to drop "+dom+" for every check in the newsroom") {
		t.Fatalf("one D wrote a newsroom-wide rule (%v) or did not ask: %q", ok, m.status)
	}
	press(t, m, "D")
	if o, ok, err := ratings.OverrideOf(file, dom); err != nil || !ok || !o.Drop {
		t.Fatalf("D did not write the newsroom's drop of %s: %+v %v %v", dom, o, ok, err)
	}
	press(t, m, "u")
	if !strings.Contains(m.status, "restored "+dom+" for this check; the newsroom's overrides file still drops it") || !strings.Contains(m.status, file) {
		t.Errorf("status after u: %q", m.status)
	}
}

// "Why this source" shows each quote in its page — the paragraph before
// it and the quote marked in its own — and marks a quote the model gave
// that is not on the page, rather than listing it as if it were.
func TestWhyShowsTheQuoteInItsPage(t *testing.T) {
	m, _ := finished(t, 120, 60)
	press(t, m, "4")
	s := m.currentSource()
	var quote string
	for _, e := range m.check.Evidence {
		if e.SourceURL == s.URL && e.Verified {
			quote = e.Quote
			break
		}
	}
	if quote == "" {
		t.Fatalf("the first source %s has no verified quote", s.URL)
	}
	m.check.Evidence = append(m.check.Evidence, pipeline.Evidence{SourceURL: s.URL, Quote: "The bridge was never there.",
		Kind: pipeline.KindRefutes, Reason: "not found on the page"})
	press(t, m, "enter")
	v := ansi.Strip(m.View())
	flat := strings.Join(strings.Fields(v), " ")
	if !strings.Contains(flat, "In the page") || !strings.Contains(flat, "»"+strings.Join(strings.Fields(quote)[:4], " ")) {
		t.Errorf("the quote is not shown in its page:\n%s", v)
	}
	if !strings.Contains(flat, "✗ not on this page: refutes: “The bridge was never there.”") {
		t.Errorf("the quote not on the page is not marked:\n%s", v)
	}
}

// The whole post is one key away from every pane: p shows all of it, not
// the header's first words.
func TestWholePostOneKeyAway(t *testing.T) {
	m, _ := finished(t, 80, 24)
	long := m.check.Post.Text
	for _, pane := range []string{"1", "4", "6"} {
		press(t, m, pane, "p")
		if m.overlay != overlayPost {
			t.Fatalf("p on pane %s: overlay %v", pane, m.overlay)
		}
		flat := strings.Join(strings.Fields(ansi.Strip(m.View())), " ")
		words := strings.Fields(long)
		if len(long) < 80 || !strings.Contains(flat, strings.Join(words[:6], " ")) || !strings.Contains(flat, strings.Join(words[len(words)-6:], " ")) ||
			!strings.Contains(flat, "posted ") {
			t.Errorf("pane %s: the post is not shown whole:\n%s", pane, m.View())
		}
		press(t, m, "esc")
	}
	// Its timeline: the post among the dates of the pages read.
	press(t, m, "p")
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "Timeline") || !strings.Contains(v, "▶ the post") || !strings.Contains(v, "Reuters — ") {
		t.Errorf("no timeline of the post and its sources:\n%s", v)
	}
}

// / filters as the journalist types, enter keeps the filter and esc
// clears it, as in k9s and lazygit.
func TestFilterAsYouType(t *testing.T) {
	m, _ := finished(t, 120, 35)
	press(t, m, "4", "/", "r", "e", "u", "t")
	if m.overlay != overlayPrompt || m.filter[pipeline.StageSources] != "reut" || !strings.Contains(m.View(), "match “reut”") {
		t.Fatalf("typing a filter: overlay %v, filter %q\n%s", m.overlay, m.filter[pipeline.StageSources], m.View())
	}
	press(t, m, "esc")
	if m.filter[pipeline.StageSources] != "" || strings.Contains(m.View(), "match “") {
		t.Errorf("esc did not clear the filter: %q", m.filter[pipeline.StageSources])
	}
	press(t, m, "/", "b", "b", "c", "enter")
	if m.filter[pipeline.StageSources] != "bbc" || !strings.Contains(m.View(), "match “bbc”") {
		t.Errorf("enter did not keep the filter: %q", m.filter[pipeline.StageSources])
	}
}

// A quote the model filed under Reuters but found on AP's page is marked
// with where it is, and m moves it there.
func TestMoveQuoteInTheApp(t *testing.T) {
	m, _ := finished(t, 120, 40)
	reuters := englishWorld.pages[0].URL
	const apSentence = "The footage circulating this week first appeared online in 2019 and shows the aftermath in Genoa."
	m.check.Evidence = append(m.check.Evidence, pipeline.Evidence{SourceURL: reuters, Quote: apSentence, Kind: pipeline.KindRefutes,
		Reason: "not found on the page"})
	i := len(m.check.Evidence) - 1
	if on := m.check.QuoteFoundOn(i); len(on) != 1 {
		t.Fatalf("AP's sentence is found on %v", on)
	}
	press(t, m, "5")
	for m.cur(pipeline.StageEvidence) != i {
		before := m.cur(pipeline.StageEvidence)
		press(t, m, "j")
		if m.cur(pipeline.StageEvidence) == before {
			t.Fatalf("the cursor cannot reach the quote (at %d)", before)
		}
	}
	if v := m.View(); !strings.Contains(v, "it is on apnews.com: m moves it there") {
		t.Errorf("the quote is not marked with the page it is on:\n%s", v)
	}
	press(t, m, "m")
	if e := m.check.Evidence[i]; !strings.Contains(e.SourceURL, "apnews.com") || !e.Verified || !strings.Contains(m.status, "moved the quote to apnews.com") {
		t.Errorf("after m: %+v, status %q", e, m.status)
	}
}

// After a rerun the sources pane marks the rows the run changed (±) or
// added (+); a first run marks none.
func TestRowsChangedByTheLastRunMarked(t *testing.T) {
	m, _ := finished(t, 120, 40)
	press(t, m, "4")
	if v := m.View(); strings.Contains(v, "changed by the last run") {
		t.Fatalf("a first run marks rows:\n%s", v)
	}
	press(t, m, "d", "r")
	if m.running {
		t.Fatal("the rerun did not finish")
	}
	press(t, m, "4")
	v := m.View()
	if !strings.Contains(v, "± changed by the last run") || !strings.Contains(v, "±") {
		t.Errorf("no row marked after the rerun:\n%s", v)
	}
}
