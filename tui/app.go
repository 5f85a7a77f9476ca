// Package tui is muse's terminal app: compose a post, watch every stage of
// the check live, steer it (queries, sources, quotes), then edit, copy and
// export the correction. One root Model holds the shared state and switches
// on a screen enum; engine events arrive as messages, and all I/O (engine,
// clipboard, browser, editor, drafts, exports) runs in tea.Cmds.
package tui

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/notewriter"
)

// Options configure the app. Zero values are safe: no drafts, no newsroom
// overrides, the system clipboard and browser, the real clock.
type Options struct {
	// Runner runs the pipeline stages (the engine). Required to check.
	Runner Runner
	// Post prefills the compose view; Cutoff too (zero: none, every page
	// up to now counts). AsOfPost puts the cutoff at the posted time (the
	// paper's protocol), once the post's time is known.
	Post     pipeline.Post
	Cutoff   time.Time
	AsOfPost bool
	// Start begins the check at once (muse TEXT|URL) instead of composing.
	Start bool
	// Model names the language model in the status bar.
	Model string
	// DraftDir is where drafts are saved as they change and found again
	// after a crash ($XDG_DATA_HOME/muse/drafts). Empty: no drafts.
	DraftDir string
	// Remember stores a drop or boost for the newsroom (the overrides
	// file). Nil: only this check's drops and boosts are possible.
	Remember func(domain string, boost bool) error
	// NewsroomChoice says what the newsroom's overrides file decides of
	// domain ("drop", "boost" or "") and names the file, so that undoing
	// a drop or boost in one check does not claim to undo the newsroom's.
	NewsroomChoice func(domain string) (choice, file string)
	// Clipboard copies text; nil uses OSC 52 on Output plus the native
	// clipboard when there is one.
	Clipboard func(text string) error
	// OpenURL opens a page in the browser; nil runs xdg-open (open on macOS).
	OpenURL func(url string) error
	// Editor is the command for editing in an external editor ($VISUAL,
	// $EDITOR); empty means vi.
	Editor string
	// ExportDir is where exports go by default (the current directory).
	ExportDir string
	// Output is the terminal (for OSC 52); nil is os.Stdout.
	Output io.Writer
	// Tmux says the app runs in tmux, so the copy status can say how
	// tmux passes a plain OSC 52 on (set -g set-clipboard on).
	Tmux bool
	// Styles; the zero value is replaced with NewStyles from the terminal.
	Styles *Styles
	// Now is the clock; nil is time.Now. Tests fix it.
	Now func() time.Time
	// NewCheck makes the record for a composed post (the engine's); nil
	// is pipeline.NewCheckAt at the app's clock.
	NewCheck func(p pipeline.Post, cutoff time.Time) *pipeline.Check
	// ReadPost reads a post given by its URL without its text, with what was typed
	// laid over it (the engine's ReadPost); nil: the text is needed.
	ReadPost func(ctx context.Context, typed pipeline.Post) (pipeline.Post, error)
	// Notice is shown in the status bar when the app opens.
	Notice string
	// Mouse turns on wheel scrolling (it stops the terminal's own text
	// selection, so it is off unless asked for).
	Mouse bool
	// Cases keeps every check as a case while it runs (a *cases.Store).
	// Nil: checks are kept only as crash drafts. A store that can also
	// SaveSnapshot (cases.SnapshotStore, as *cases.Store can) keeps the
	// page behind each source the check rests on as well.
	Cases CaseStore
	// CaseList is where the case list (ctrl+o) reads the saved cases and
	// a case's last recheck; nil: Cases, when it can. Set without Cases
	// (a store that can be read, not written), cases open read-only.
	CaseList CaseReader
	// Pages returns the bytes of a page the engine read, as served
	// (pipeline.Engine.RawPage), for those snapshots; nil stores each
	// page's extracted text only.
	Pages func(u string) ([]byte, bool)
	// Headers returns the HTTP response headers of a page the engine read
	// (pipeline.Engine.PageHeader), for those snapshots; nil keeps none.
	Headers func(u string) (http.Header, bool)
	// Case reopens a saved case (`muse cases open ID`) in the check view
	// where it was left, without running anything.
	Case *pipeline.Check
	// Reviewer prefills the questions the ClaimReview export asks (the
	// reviewing organisation, its page); the verdict is always asked.
	Reviewer export.Reviewer
	// ReviewerFile keeps the ClaimReview answers (organisation and pages,
	// never the verdict) for the next session; "" keeps them for this one.
	ReviewerFile string
	// Secrets are redacted from every export (the configuration's keys).
	Secrets []string
	// Notes sends the note to X's AI Note Writer API (X in the
	// Correction pane); nil: the app says which keys it needs.
	Notes NoteWriter
	// Setup, when set, opens the app on the first-run setup screen
	// (setup.go) listing what was looked for; enter goes on to the app.
	Setup *setup.Detection
}

type screen int

const (
	screenCompose screen = iota
	screenCheck
)

type overlay int

const (
	overlayNone overlay = iota
	overlayHelp
	overlayQuit
	overlayRestore
	overlayPrompt
	overlayExport
	overlayLog
	overlayPost
	overlayVersions
	overlayCases
)

// Model is the root model of the app.
type Model struct {
	opts   Options
	st     Styles
	keys   keyMap
	spin   spinner.Model
	now    func() time.Time
	appCtx context.Context
	width  int
	height int

	screen  screen
	overlay overlay
	compose composeModel
	// ledger is X's admission ledger as last read (sending a note).
	ledger *notewriter.Ledger

	// check is the engine's record: the snapshot the latest event
	// carried, the record Run handed back, or a saved case; the person's
	// edits change it between runs.
	check         *pipeline.Check
	stream        string               // the correction's token deltas since its stage started
	before        *pipeline.Correction // the correction before this run, kept if it is stopped
	sel           int                  // selected stage, index into pipeline.Stages
	userMoved     bool
	cursor        map[pipeline.Stage]int // index of the selected item of each list
	cursorKey     map[pipeline.Stage]string
	filter        map[pipeline.Stage]string // `/`: words each list's rows must match
	why           bool                      // the "why this source" detail is open
	whyScroll     int                       // its scroll
	helpScroll    int                       // scroll of the help screen and the message log
	zoom          bool                      // the pane takes the whole screen
	sidebarHidden bool
	log           []string // every status message of this run of the app, for L
	versions      versionsState
	scroll        int // correction pane scroll

	gen      int
	running  bool
	cancel   context.CancelFunc
	runFrom  pipeline.Stage
	runStart time.Time
	lastRun  time.Duration
	runErr   string
	stopped  bool

	editing bool // correction inline editor open
	editor  textarea.Model
	// support is the support map's judging (support.go).
	support struct {
		seq  int    // the text's changes, for the debounce
		busy bool   // a judgement of the latest text is under way
		err  string // why the latest judgement failed
	}
	prompt  promptState
	restore *draftFile

	status        string
	statusSeq     int
	statusFailure bool // the status says why something failed
	dirty         bool // something typed has not been copied or exported
	// composeDirty: the compose form holds text typed (or restored) since
	// its last check started; it is kept when the journalist leaves the
	// form, and quitting asks first.
	composeDirty bool
	// confirmRemember is the newsroom-wide drop or boost asked for by the
	// last key ("D example.com"): the same key again writes it.
	confirmRemember string
	// lastRunSources are the sources, by sources.Key, as they were when
	// the latest run started (nil for a first run): rows new or changed
	// since are marked.
	lastRunSources map[string]string
	draftID        string // this run of the app's: names the draft of a post being composed
	draftSeq       int
	draftSince     time.Time // when the oldest change not yet in the draft was made
	gate           *draftGate
	rendered       struct{ key, out string }

	saver       *caseSaver
	snaps       *cases.Snapshotter // nil: the store keeps no pages
	caseSeq     int
	caseSaving  bool // a save of the case is in flight
	casePending bool // the check changed since that save began
	caseErr     string
	reviewer    export.Reviewer   // the last ClaimReview answers, asked again prefilled
	claimFor    map[string]string // the claim each case's ClaimReview reviews, by case ID
	verdict     string

	caseList  caseListState
	recheck   *cases.CaseRecheck // the last recheck of the case shown (nil: none, or not read)
	accepting bool               // the recheck's revision draft is being accepted
	// revising: the inline editor holds the checker's revision of a case
	// whose cited pages changed (v, e), which ctrl+s accepts; revision is
	// that text while its acceptance is under way.
	revising bool
	revision string
	helpBack overlay // where closing the help goes back to (the case list)
}

// promptState is a one-line question at the bottom of the screen (edit a
// query, name an export file).
type promptState struct {
	title string
	input textinput.Model
	done  func(m *Model, value string) tea.Cmd
	edit  *draftPrompt // set for an edit of the check, kept in the draft
	// live, when set, follows the value as it is typed (a filter), and
	// esc calls it with "" (the filter cleared).
	live func(m *Model, value string)
}

// New builds the app model. ctx ends when the app ends; runs are children of it.
func New(ctx context.Context, opts Options) *Model {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	st := NewStyles(true, false)
	if opts.Styles != nil {
		st = *opts.Styles
	}
	m := &Model{
		opts:      opts,
		st:        st,
		keys:      newKeyMap(),
		spin:      spinner.New(spinner.WithSpinner(spinner.Line)),
		now:       now,
		appCtx:    ctx,
		width:     80,
		height:    24,
		cursor:    map[pipeline.Stage]int{},
		cursorKey: map[pipeline.Stage]string{},
		filter:    map[pipeline.Stage]string{},
	}
	m.draftID = now().UTC().Format("20060102-150405")
	m.compose = newCompose(st, opts.Post, opts.Cutoff)
	if opts.AsOfPost {
		m.compose.inputs[fieldCutoff].SetValue(cutoffAtPost)
	}
	m.editor = textarea.New()
	m.saver = &caseSaver{}
	m.gate = &draftGate{}
	if ss, ok := opts.Cases.(cases.SnapshotStore); ok {
		m.snaps = &cases.Snapshotter{Store: ss, Pages: opts.Pages, Headers: opts.Headers}
	}
	m.reviewer, m.claimFor = opts.Reviewer, map[string]string{}
	if m.reviewer.Name == "" && opts.ReviewerFile != "" {
		m.reviewer = loadReviewer(opts.ReviewerFile)
	}
	if opts.Case != nil {
		m.openCase(opts.Case)
	}
	return m
}

// Run opens the app on the terminal and returns when the journalist quits.
func Run(ctx context.Context, opts Options) error {
	out := termenv.NewOutput(os.Stdout)
	if opts.Styles == nil {
		colour := out.EnvColorProfile() != termenv.Ascii
		st := NewStyles(out.HasDarkBackground(), colour)
		opts.Styles = &st
	}
	lipgloss.SetColorProfile(out.EnvColorProfile())
	if opts.Output == nil {
		opts.Output = os.Stdout
	}
	if opts.Editor == "" {
		opts.Editor = firstNonEmpty(os.Getenv("VISUAL"), os.Getenv("EDITOR"), "vi")
	}
	opts.Tmux = opts.Tmux || os.Getenv("TMUX") != ""
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opts.Setup != nil {
		if start, err := runSetup(ctx, opts); err != nil || !start {
			return err
		}
	}
	popts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx)}
	if opts.Mouse {
		popts = append(popts, tea.WithMouseCellMotion())
	}
	p := tea.NewProgram(New(ctx, opts), popts...)
	final, err := p.Run()
	if m, ok := final.(*Model); ok {
		if m.runErr != "" && err == nil {
			// The reason stays on screen in the app; repeat it where it
			// survives the alternate screen.
			fmt.Fprintln(os.Stderr, "muse: last run:", m.runErr)
		}
		if m.saving() && m.saver.anySaved() {
			fmt.Fprintf(os.Stderr, "muse: saved as case %s; reopen it with: muse cases open %s\n", m.check.ID, m.check.ID)
		}
	}
	if err != nil && ctx.Err() != nil {
		return nil // interrupted by a signal: drafts are on disk
	}
	return err
}

// Init starts the check at once when asked to and looks for a draft left by
// a crash.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{textarea.Blink}
	switch {
	case m.opts.Notice != "":
		cmds = append(cmds, m.setStatus(m.opts.Notice))
	case m.opts.Case != nil:
		cmds = append(cmds, m.setStatus("case "+m.opts.Case.ID+" as it was left; nothing was run"))
	}
	switch {
	case m.opts.DraftDir != "" && m.opts.Case != nil:
		cmds = append(cmds, findCaseDraft(m.opts.DraftDir, m.opts.Case))
	case m.opts.DraftDir != "":
		cmds = append(cmds, findDraft(m.opts.DraftDir, m.draftID))
	}
	if m.opts.Start {
		cmds = append(cmds, m.submitCompose())
	}
	cmds = append(cmds, m.watchCases())
	if m.opts.Case != nil {
		cmds = append(cmds, m.loadRecheck())
	}
	return tea.Batch(cmds...)
}

// Update routes a message to the room it belongs to.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		// Past the stage list and a readable pane, more columns are margin.
		m.width, m.height = min(msg.Width, stageListWidth+3+readWidth), msg.Height
		m.layout()
		return m, nil
	case spinner.TickMsg:
		if !m.running {
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	case engineEventMsg:
		next := waitRun(msg.ch) // an old run is drained too, so its engine can finish
		if msg.gen != m.gen {
			return m, next
		}
		return m, tea.Batch(m.onEvent(msg.ev), next)
	case caseSavedMsg:
		return m, m.onCaseSaved(msg)
	case caseChangedMsg:
		return m, m.onCaseChanged(msg)
	case runDoneMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		return m, m.onRunDone(msg)
	case statusClearMsg:
		if msg.seq == m.statusSeq {
			m.status = ""
		}
		return m, nil
	case noteEvaluatedMsg:
		return m, m.onNoteEvaluated(msg)
	case noteSubmittedMsg:
		return m, m.onNoteSubmitted(msg)
	case resultMsg:
		return m, m.onResult(msg)
	case draftTickMsg:
		return m, m.onDraftTick(msg)
	case supportTickMsg:
		return m, m.onSupportTick(msg)
	case supportResultMsg:
		return m, m.onSupportResult(msg)
	case draftFoundMsg:
		if !m.running && m.overlay == overlayNone {
			m.restore = msg.draft
			m.overlay = overlayRestore
		}
		return m, nil
	case versionsMsg:
		return m, m.onVersions(msg)
	case caseListMsg:
		return m, m.onCaseList(msg)
	case caseListTickMsg:
		return m, m.onCaseListTick(msg)
	case caseOpenedMsg:
		return m, m.onCaseOpened(msg)
	case recheckMsg:
		return m, m.onRecheck(msg)
	case revisionAcceptedMsg:
		return m, m.onRevisionAccepted(msg)
	case postFetchedMsg:
		return m, m.onPostFetched(msg)
	case editorReadyMsg:
		return m, m.openEditor(msg)
	case editorDoneMsg:
		return m, m.onEditorDone(msg)
	case tea.MouseMsg:
		return m, m.onMouse(msg)
	case tea.KeyMsg:
		var cmds []tea.Cmd
		for _, k := range splitBurst(msg) {
			cmds = append(cmds, m.onKey(k))
		}
		return m, tea.Batch(cmds...)
	}
	return m, m.updateFocused(msg)
}

// updateFocused passes other messages (cursor blink) to the widget in use.
func (m *Model) updateFocused(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	switch {
	case m.overlay == overlayPrompt:
		m.prompt.input, cmd = m.prompt.input.Update(msg)
	case m.editing:
		m.editor, cmd = m.editor.Update(msg)
	case m.screen == screenCompose:
		cmd = m.compose.update(msg)
	}
	return cmd
}

func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	if !key.Matches(msg, m.keys.RememberDrop, m.keys.RememberBoost) {
		m.confirmRemember = "" // a newsroom-wide rule is confirmed by the same key at once
	}
	switch m.overlay {
	case overlayPost:
		return m.onPostKey(msg)
	case overlayHelp, overlayLog:
		m.onScrollKey(msg)
		return nil
	case overlayQuit:
		if key.Matches(msg, m.keys.QuitAnyway) {
			return m.quitNow()
		}
		m.overlay = overlayNone
		return nil
	case overlayRestore:
		return m.onRestoreKey(msg)
	case overlayPrompt:
		return m.onPromptKey(msg)
	case overlayExport:
		return m.onExportKey(msg)
	case overlayVersions:
		return m.onVersionsKey(msg)
	case overlayCases:
		return m.onCaseListKey(msg)
	}
	if key.Matches(msg, m.keys.Stop) && m.running && (msg.String() == "ctrl+c" || !m.editing) {
		m.stopRun()
		return nil
	}
	if msg.String() == "ctrl+c" {
		return m.quit()
	}
	if m.screen == screenCompose {
		return m.onComposeKey(msg)
	}
	return m.onCheckKey(msg)
}

// quit leaves at once unless something typed would be lost. A check kept
// as a case loses nothing: an edit in progress is saved into it, and the
// case one last time, on the way out.
func (m *Model) quit() tea.Cmd {
	inCase := m.saving() && m.screen == screenCheck
	if m.dirty && !inCase || m.composeUnsent() {
		m.overlay = overlayQuit
		return nil
	}
	return m.quitNow()
}

// composeUnsent reports whether the compose form holds a post typed and
// not yet checked.
func (m *Model) composeUnsent() bool {
	return m.composeDirty && strings.TrimSpace(m.compose.text.Value()) != ""
}

// quitNow quits: the case's edit in progress saved first when the check
// is kept as a case, the drafts removed.
func (m *Model) quitNow() tea.Cmd {
	inCase := m.saving() && m.screen == screenCheck
	if m.cancel != nil {
		m.cancel()
	}
	if !inCase {
		return tea.Sequence(removeDraft(m.gate, true, m.opts.DraftDir, m.draftID, m.draftKey()), tea.Quit)
	}
	if (m.revising || m.revision != "") && m.opts.DraftDir != "" {
		// A revision not yet accepted is not made the correction: it stays
		// in the case's draft, offered when the case opens again.
		keep := saveDraft(m.gate, m.opts.DraftDir, m.draftKey(), m.draftSnapshot(), m.now())
		return tea.Sequence(keep, m.saveCaseNow(), removeDraft(m.gate, true, m.opts.DraftDir, m.draftID), tea.Quit)
	}
	var saveEdit tea.Cmd
	if m.editing {
		m.editing = false
		saveEdit = m.storeCorrection(m.editor.Value())
	}
	return tea.Sequence(saveEdit, m.saveCaseNow(), removeDraft(m.gate, true, m.opts.DraftDir, m.draftID, m.draftKey()), tea.Quit)
}

// statusClearMsg clears a status message unless a newer one replaced it.
type statusClearMsg struct{ seq int }

// resultMsg is what a background command reports: a status line, or an error.
type resultMsg struct {
	what  string // "copy", "export", "open", "remember", "draft"
	text  string
	err   error
	saved bool // the correction is safe elsewhere (copied or exported)
}

func (m *Model) setStatus(s string) tea.Cmd {
	m.status = s
	if s != "" {
		m.log = append(m.log, m.now().Format("15:04:05")+" "+s)
	}
	m.statusFailure = false
	m.statusSeq++
	seq := m.statusSeq
	return tea.Tick(6*time.Second, func(time.Time) tea.Msg { return statusClearMsg{seq} })
}

// setFailure shows why something failed, given room before the rest.
func (m *Model) setFailure(s string) tea.Cmd {
	cmd := m.setStatus(s)
	m.statusFailure = true
	return cmd
}

func (m *Model) onResult(r resultMsg) tea.Cmd {
	if r.err != nil {
		return m.setFailure(fmt.Sprintf("%s failed: %v", r.what, r.err))
	}
	if r.saved {
		m.dirty = false
	}
	if r.text == "" {
		return nil
	}
	return m.setStatus(r.text)
}

// View draws the room the journalist is in, with an overlay on top, every
// line fitted to the terminal (fitFrame).
func (m *Model) View() string { return fitFrame(m.view(), m.width) }

func (m *Model) view() string {
	switch m.overlay {
	case overlayHelp:
		return m.helpView()
	case overlayLog:
		return m.logView()
	case overlayPost:
		return m.postView()
	case overlayQuit:
		return m.boxView("Quit muse?", m.quitQuestion())
	case overlayRestore:
		return m.restoreView()
	case overlayExport:
		return m.exportView()
	case overlayVersions:
		return m.versionsView()
	case overlayCases:
		return m.caseListView()
	}
	if m.screen == screenCompose {
		return m.composeView()
	}
	return m.checkView()
}

// quitQuestion says what quitting would lose, where the journalist is.
func (m *Model) quitQuestion() string {
	what := "The correction has changes you have not copied or exported."
	switch {
	case m.screen == screenCompose:
		what = "The post you are composing has not been checked yet."
	case m.composeUnsent():
		what = "The post you were composing has not been checked yet (n goes back to it)."
	}
	q := m.keys.QuitAnyway.Help()
	return what + "\nQuitting discards the saved draft.\n\n" + q.Key + " " + q.Desc
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
