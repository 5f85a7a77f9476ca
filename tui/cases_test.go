package tui

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/export"
)

func openStore(t *testing.T) *cases.Store {
	t.Helper()
	st, err := cases.OpenOptions(context.Background(), cases.Options{Path: filepath.Join(t.TempDir(), "cases.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// storedCase polls the store until its only case satisfies ok: saves run in
// the background, after the events that caused them.
func storedCase(t *testing.T, st *cases.Store, ok func(c *pipeline.Check) bool) *pipeline.Check {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last *pipeline.Check
	for time.Now().Before(deadline) {
		list, err := st.List(context.Background(), cases.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 1 {
			t.Fatalf("one check made %d cases", len(list))
		}
		if len(list) == 1 {
			c, err := st.Get(context.Background(), list[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			last = c
			if ok(c) {
				return c
			}
		}
		time.Sleep(30 * time.Millisecond)
	}
	t.Fatalf("the store never held the expected case; last saved: %+v", last)
	return nil
}

// bridgeImage is the post's image, with the alt text its author gave it.
const bridgeImage = "https://pbs.twimg.com/media/GHxBridge1.jpg"

var bridgeAltText = map[string]string{bridgeImage: "Bridge collapse in Baltimore this morning"}

// TestCaseFlow: a check with an image is kept as a case while it runs; the
// journalist rewrites the image's description and makes the queries
// again, edits the correction, exports every format; the process is then
// killed, and `muse cases open` brings it all back without running
// anything.
func TestCaseFlow(t *testing.T) {
	store := openStore(t)
	exportDir := t.TempDir()
	r := newRunner(t)
	opts := testOptions(r)
	opts.Post.Images, opts.Post.AltTexts = []string{bridgeImage}, bridgeAltText
	opts.Cases = store
	opts.ExportDir = exportDir
	opts.Start = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tm := teatest.NewTestModel(t, New(ctx, opts), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "correction ready")

	// Images: every part with where it came from; rewrite the description.
	tm.Type("1")
	waitFor(t, tm, "(vision model, OCR, alt text)")
	tm.Type("e")
	waitFor(t, tm, "Describe the image:")
	tm.Send(keyMsg(tea.KeyCtrlU))
	const desc = "Aerial photo of the Morandi bridge in Genoa after its 2018 collapse"
	tm.Type(desc)
	tm.Send(keyMsg(tea.KeyEnter))
	waitFor(t, tm, "description saved")
	tm.Type("s")
	waitFor(t, tm, "correction ready")

	tm.Type("6")
	tm.Type("e")
	waitFor(t, tm, "finish editing")
	tm.Send(keyMsg(tea.KeyCtrlE))
	tm.Type(" Edited by the desk.")
	tm.Send(keyMsg(tea.KeyEsc))
	waitFor(t, tm, "edit saved")
	// The support map is judged in the background once typing pauses,
	// and the case saved with the judgement; the exports below are of the
	// check with it.
	storedCase(t, store, func(c *pipeline.Check) bool {
		sm := c.SupportMap()
		return strings.HasSuffix(c.Correction.Text, "Edited by the desk.") && len(sm) == 3 && sm[1].Status == pipeline.SupportSupported
	})

	for _, f := range []struct{ key, format string }{{"m", "md"}, {"j", "json"}, {"n", "note"}, {"p", "pack"}} {
		tm.Type("x")
		waitFor(t, tm, "Export the check as")
		tm.Type(f.key)
		waitFor(t, tm, "Export "+f.format+" to:")
		tm.Send(keyMsg(tea.KeyEnter))
		waitFor(t, tm, "exported "+f.format)
	}
	tm.Type("x")
	waitFor(t, tm, "Export the check as")
	tm.Type("c")
	waitFor(t, tm, "reviewing organisation")
	tm.Type("Desk Check")
	tm.Send(keyMsg(tea.KeyEnter))
	waitFor(t, tm, "URL where the review is published")
	tm.Type("https://desk.example/checks/bridge")
	tm.Send(keyMsg(tea.KeyEnter))
	waitFor(t, tm, "The claim reviewed, in one sentence:")
	tm.Send(keyMsg(tea.KeyEnter)) // the post's first sentence, as offered
	waitFor(t, tm, "Verdict")
	tm.Send(keyMsg(tea.KeyCtrlU)) // the check's verdict is offered; the checker types their own
	tm.Type("false")
	tm.Send(keyMsg(tea.KeyEnter))
	waitFor(t, tm, "Export claimreview to:")
	tm.Send(keyMsg(tea.KeyEnter))
	waitFor(t, tm, "exported claimreview")
	// The same export again: the file exists, and is kept unless the
	// person says to replace it.
	tm.Type("x")
	waitFor(t, tm, "Export the check as")
	tm.Type("m")
	waitFor(t, tm, "Export md to:")
	tm.Send(keyMsg(tea.KeyEnter))
	waitFor(t, tm, "exists; replace it? (y/n)")
	tm.Send(keyMsg(tea.KeyEnter))
	waitFor(t, tm, "not exported:")

	// Killed: no quit, no last save; what the store holds is what the
	// saves made as the journalist worked.
	saved := storedCase(t, store, func(c *pipeline.Check) bool {
		return strings.HasSuffix(c.Correction.Text, "Edited by the desk.") && len(c.Images) == 1 && c.Images[0].Edited
	})
	cancel()
	_ = tm.Quit()

	froms, seen := r.runs()
	if want := []pipeline.Stage{pipeline.StageImages, pipeline.StageQueries}; !equalStages(froms, want) {
		t.Fatalf("runs started from %v, want %v", froms, want)
	}
	if im := seen[1].Images[0]; !im.Edited || im.Description != desc || im.Origin != pipeline.OriginUser {
		t.Errorf("the rerun from queries did not get the person's description: %+v", im)
	}
	if !hasQuery(saved.Queries, "Aerial photo of the Morandi bridge in Genoa") {
		t.Errorf("no query from the edited description: %+v", saved.Queries)
	}
	if !saved.Correction.Edited || saved.ID == "" {
		t.Errorf("saved case: edited %v, ID %q", saved.Correction.Edited, saved.ID)
	}
	if by := saved.Usage.ByStage; by["queries"].PromptTokens != 1200 || by["correction"].CompletionTokens != 160 {
		t.Errorf("usage per stage over two runs: %+v", by)
	}

	drafts, err := store.Drafts(context.Background(), saved.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(drafts) < 2 || drafts[0].Edited || !drafts[len(drafts)-1].Edited || drafts[len(drafts)-1].Text != saved.Correction.Text {
		t.Errorf("drafts: want the model's then the person's, got %+v", drafts)
	}

	// Every export is package export's rendering of the check as it stood.
	rev := export.Reviewer{Name: "Desk Check", ReviewURL: "https://desk.example/checks/bridge", Published: fixedNow,
		Claim: firstSentence(saved.Post.Text)}
	rating, _ := export.ParseRating("false")
	for format, ext := range map[string]string{"md": ".md", "json": ".json", "note": ".note.txt", "claimreview": ".claimreview.json"} {
		got, err := os.ReadFile(filepath.Join(exportDir, "muse-"+saved.ID+ext))
		if err != nil {
			t.Errorf("%s export: %v", format, err)
			continue
		}
		o := export.Options{Format: format, Reviewer: rev, Rating: rating}
		if format == "json" {
			o.Versions = cases.Versions(drafts) // the case's JSON carries the correction's versions
		}
		want, err := export.Render(saved, o)
		if err != nil {
			t.Fatalf("render %s: %v", format, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s export differs from export.Render:\n%s\n---\n%s", format, got, want)
		}
	}

	// The evidence pack: a zip whose manifest names each member's SHA-256.
	zr, err := zip.OpenReader(filepath.Join(exportDir, "muse-"+saved.ID+".pack.zip"))
	if err != nil {
		t.Fatalf("pack: %v", err)
	}
	defer zr.Close()
	members := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		members[f.Name] = b
	}
	var man export.Manifest
	if err := json.Unmarshal(members[export.PackManifest], &man); err != nil || len(man.Files) < 2 {
		t.Fatalf("pack manifest: %v %+v", err, man)
	}
	for _, f := range man.Files {
		if sum := sha256.Sum256(members[f.Path]); hex.EncodeToString(sum[:]) != f.SHA256 {
			t.Errorf("pack member %s: SHA-256 differs from the manifest's", f.Path)
		}
	}
	if !bytes.Contains(members[export.PackCorrection], []byte("Edited by the desk.")) {
		t.Errorf("the pack's correction is not the case's:\n%s", members[export.PackCorrection])
	}

	// muse cases open ID: the case, where it was left, and nothing runs.
	r2 := newRunner(t)
	opts2 := testOptions(r2)
	opts2.Cases = store
	opts2.Case = saved
	tm2 := teatest.NewTestModel(t, New(context.Background(), opts2), teatest.WithInitialTermSize(80, 24))
	waitFor(t, tm2, "Edited by the") // wrapped at 80 columns
	tm2.Type("1")
	waitFor(t, tm2, "(written by you)")
	tm2.Type("q")
	tm2.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	m2 := tm2.FinalModel(t).(*Model)
	if froms, _ := r2.runs(); len(froms) != 0 {
		t.Errorf("opening a case ran the engine from %v", froms)
	}
	if m2.check.ID != saved.ID || m2.stage(pipeline.StageCorrection).State != pipeline.StateDone {
		t.Errorf("reopened case %q, correction stage %s", m2.check.ID, m2.stage(pipeline.StageCorrection).State)
	}
}

func hasQuery(qs []pipeline.Query, text string) bool {
	for _, q := range qs {
		if q.Text == text {
			return true
		}
	}
	return false
}

// TestCaseOpensOnCorrection: the reopened case shows the correction pane,
// the person's edit and the stale marks as they were.
func TestCaseOpensOnCorrection(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.sel = stageIndex(pipeline.StageEvidence)
	press(t, m, "space") // leaves a quote out: the correction is stale
	m.check.Correction.Text += " Edited."
	m.check.Correction.Edited = true
	c := cloneCheck(m.check)

	opts := testOptions(newRunner(t))
	opts.Case = c
	o := New(context.Background(), opts)
	o.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if o.screen != screenCheck || o.selected() != pipeline.StageCorrection {
		t.Fatalf("opened on screen %v, stage %s", o.screen, o.selected())
	}
	if o.stage(pipeline.StageCorrection).State != pipeline.StateStale {
		t.Errorf("correction is %s, want stale as it was left", o.stage(pipeline.StageCorrection).State)
	}
	v := o.View()
	for _, want := range []string{"Edited.", "edited by you", "~6", "out of date after your edit"} {
		if !strings.Contains(v, want) {
			t.Errorf("reopened view lacks %q:\n%s", want, v)
		}
	}
}

// TestKilledRunReopens: a run killed while the correction streams leaves
// a case with everything up to the last event, and it reopens as stopped.
func TestKilledRunReopens(t *testing.T) {
	store := openStore(t)
	r := newRunner(t)
	r.web.HoldStreams(1) // the model sends the first word of the correction, then hangs
	opts := testOptions(r)
	opts.Cases = store
	opts.Start = true
	opts.AsOfPost = true // a cutoff, to see it kept
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tm := teatest.NewTestModel(t, New(ctx, opts), teatest.WithInitialTermSize(80, 24))
	saved := storedCase(t, store, func(c *pipeline.Check) bool {
		for _, s := range c.Stages {
			if s.Stage == pipeline.StageCorrection && s.State == pipeline.StateRunning {
				return len(c.Evidence) > 0
			}
		}
		return false
	})
	cancel() // the kill
	_ = tm.Quit()

	if len(saved.Sources) != len(englishWorld.pages) || !saved.Cutoff.Equal(testPost.PostedAt) || saved.Post.Text != testPost.Text {
		t.Errorf("case saved mid-run lost work: %d sources, cutoff %v", len(saved.Sources), saved.Cutoff)
	}
	opts2 := testOptions(newRunner(t))
	opts2.Case = saved
	m := New(context.Background(), opts2)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if st := m.stage(pipeline.StageCorrection); st.State != pipeline.StateFailed || st.Error != "stopped" {
		t.Errorf("the killed stage reopens as %s (%s), want stopped", st.State, st.Error)
	}
	if m.stage(pipeline.StageEvidence).State != pipeline.StateDone || m.selected() != pipeline.StageCorrection {
		t.Errorf("evidence %s, selected %s", m.stage(pipeline.StageEvidence).State, m.selected())
	}
	if !strings.Contains(m.View(), "stopped") {
		t.Errorf("no sign the run was stopped:\n%s", m.View())
	}
}

// failingStore fails every save, as a full disk would.
type failingStore struct{ saves int }

func (f *failingStore) Save(context.Context, *pipeline.Check) error {
	f.saves++
	return os.ErrPermission
}
func (f *failingStore) SaveDraft(context.Context, string, string, bool) error { return nil }
func (f *failingStore) Drafts(context.Context, string) ([]cases.Draft, error) { return nil, nil }

// TestCaseSaveFailureIsShownOnce: a store that cannot save says so in the
// status bar, once, and the check goes on.
func TestCaseSaveFailureIsShownOnce(t *testing.T) {
	fs := &failingStore{}
	opts := testOptions(newRunner(t))
	opts.Cases = fs
	m := New(context.Background(), opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(t, m, "ctrl+s")
	if m.running || !strings.Contains(m.check.Correction.Text, "This post is misleading") {
		t.Fatal("the check did not finish despite the store failing")
	}
	if fs.saves == 0 || !strings.Contains(m.caseErr, "permission denied") {
		t.Errorf("saves %d, error %q", fs.saves, m.caseErr)
	}
}

// TestImagesPane: each part of what is known of an image, with its
// origin, and the person's edit marks later stages stale.
func TestImagesPane(t *testing.T) {
	r := newRunner(t)
	opts := testOptions(r)
	opts.Post.Images, opts.Post.AltTexts = []string{bridgeImage}, bridgeAltText
	m := New(context.Background(), opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(t, m, "ctrl+s", "1")
	v := m.View()
	for _, want := range []string{"description (vision model, OCR, alt text)", "alt text (given with the post)", "A photo of a collapsed road bridge",
		"text in the image (OCR)", "BREAKING: BALTIMORE BRIDGE DOWN", "e edit description"} {
		if !strings.Contains(v, want) {
			t.Errorf("images pane lacks %q:\n%s", want, v)
		}
	}
	if err := m.check.DescribeImage(bridgeImage, "A hand-written description"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.View(), "(written by you)") || m.stage(pipeline.StageQueries).State != pipeline.StateStale {
		t.Errorf("edited description:\n%s", m.View())
	}
}

// TestExportRefusalShown: when an export refuses (a note that cites no
// link), the reason is in the status bar at 80 columns, ahead of the cost.
func TestExportRefusalShown(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.check.Correction.Text = "This post is misleading: the video is from Genoa in 2018."
	m.check.Correction.URLs = nil
	dir := t.TempDir()
	msg := exportCheck(cloneCheck(m.check), export.Options{Format: "note"}, filepath.Join(dir, "n.txt"), renderExport)()
	m.Update(msg)
	v := m.View()
	if !strings.Contains(v, "export note failed: write note: a note must cite") {
		t.Errorf("the refusal's reason is not shown:\n%s", v)
	}
	if _, err := os.Stat(filepath.Join(dir, "n.txt")); !os.IsNotExist(err) {
		t.Errorf("a refused note was written (err %v)", err)
	}
}

// TestUsageLive: a usage event (the engine sends one after every model
// call, kind "usage", Item the Usage so far) updates the cost per stage
// before the stage finishes.
func TestUsageLive(t *testing.T) {
	m, _ := finished(t, 120, 40) // the per-stage block is in the full stage list
	snap := cloneCheck(m.check)
	snap.Usage.ByStage = map[string]pipeline.StageUsage{"queries": {LLMCalls: 1, PromptTokens: 12000, CompletionTokens: 345, CostUSD: 1.5}}
	m.onEvent(pipeline.Event{Kind: "usage", Stage: pipeline.StageQueries, Item: snap.Usage, Check: snap})
	if v := m.View(); !strings.Contains(v, "queries     12k  $1.50") {
		t.Errorf("live usage not shown:\n%s", v)
	}
}

// TestCaseKeepsEvidencePages: a check run in the app keeps, under its case,
// the page behind each source it quoted (text and, when the engine still
// has it, the HTML as served), and no page it left out.
func TestCaseKeepsEvidencePages(t *testing.T) {
	store := openStore(t)
	used := englishWorld.pages[:2] // the two the model quotes
	served := []byte("<html><body><p>" + used[0].Refutes[0] + "</p></body></html>")
	opts := testOptions(newRunner(t))
	opts.Cases = store
	opts.Start = true
	opts.Pages = func(u string) ([]byte, bool) {
		if u == used[0].URL {
			return served, true
		}
		return nil, false // the engine no longer holds the other page
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tm := teatest.NewTestModel(t, New(ctx, opts), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "correction ready")
	saved := storedCase(t, store, func(c *pipeline.Check) bool { return c.Correction.Text != "" })

	var snaps []cases.Snapshot
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var err error
		if snaps, err = store.Snapshots(context.Background(), saved.ID); err != nil {
			t.Fatal(err)
		}
		if len(snaps) >= len(used) {
			break
		}
		time.Sleep(30 * time.Millisecond)
	}
	cancel()
	_ = tm.Quit()

	byURL := map[string]cases.Snapshot{}
	for _, s := range snaps {
		byURL[s.URL] = s
	}
	if len(snaps) != len(used) {
		t.Errorf("%d snapshots, want one per quoted source (%d): %v", len(snaps), len(used), byURL)
	}
	for _, src := range used {
		s, ok := byURL[src.URL]
		if !ok {
			t.Errorf("no snapshot of %s", src.URL)
			continue
		}
		if want := strings.Join(englishWorld.paragraphs(src), "\n\n"); s.Text != want {
			t.Errorf("snapshot text of %s = %q, want %q", src.URL, s.Text, want)
		}
	}
	if got := byURL[used[0].URL].RawHTML; !bytes.Equal(got, served) {
		t.Errorf("snapshot HTML of %s = %q, want the page as served", used[0].URL, got)
	}
	if got := byURL[used[1].URL].RawHTML; len(got) != 0 {
		t.Errorf("snapshot of a page the engine no longer held has HTML %q", got)
	}
	one, err := store.Snapshot(context.Background(), saved.ID, used[1].URL)
	if err != nil || one.URL != used[1].URL {
		t.Errorf("Snapshot(%s) = %+v, %v", used[1].URL, one, err)
	}
}

// A note that cites no page is refused before a file name is asked for,
// with the reason.
func TestNoteRefusedBeforeAskingWhere(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.check.Correction.Text = "This post is misleading: the video is from Genoa in 2018."
	m.check.Correction.URLs = nil
	press(t, m, "x", "n")
	if m.overlay == overlayPrompt || !strings.Contains(m.status, "note not exported: ") || !strings.Contains(m.status, "a note must cite") {
		t.Errorf("overlay %v, status %q: want the refusal, no file name asked", m.overlay, m.status)
	}
}

// The ClaimReview answers (organisation and review page, not the verdict)
// are offered again in the next session.
func TestReviewerRemembered(t *testing.T) {
	file := filepath.Join(t.TempDir(), "data", "reviewer.json")
	m, _ := finished(t, 100, 30)
	m.opts.ReviewerFile = file
	press(t, m, "x", "c")
	press(t, m, "Desk Check", "enter", "https://desk.example/checks/bridge", "enter")
	if first := firstSentence(m.check.Post.Text); m.prompt.input.Value() != first || first == strings.TrimSpace(m.check.Post.Text) {
		t.Errorf("the claim offered is %q, want the post's first sentence %q", m.prompt.input.Value(), first)
	}
	press(t, m, "enter", "false", "enter")
	if m.overlay != overlayPrompt || !strings.Contains(m.prompt.title, "Export claimreview to:") {
		t.Fatalf("the ClaimReview questions did not lead to the file name: %q (status %q)", m.prompt.title, m.status)
	}
	press(t, m, "esc")
	opts := testOptions(newRunner(t))
	opts.ReviewerFile = file
	m2 := New(t.Context(), opts)
	m2.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	press(t, m2, "ctrl+s", "x", "c")
	if got := m2.prompt.input.Value(); got != "Desk Check" {
		t.Errorf("next session's organisation %q, want the one given before", got)
	}
	press(t, m2, "enter")
	if got := m2.prompt.input.Value(); got != "https://desk.example/checks/bridge" {
		t.Errorf("next session's review page %q", got)
	}
}
