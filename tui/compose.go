package tui

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/lang"
)

// Compose fields, in tab order; fieldSubmit is the "Check" button.
const (
	fieldText = iota
	fieldAuthor
	fieldHandle
	fieldPosted
	fieldImages
	fieldURL
	fieldLanguage
	fieldCutoff
	fieldSubmit
	fieldCount
)

var fieldLabels = [...]string{"Post", "Author", "Handle", "Posted", "Images", "Post URL", "Language", "Cutoff"}

// composeModel is the form for the post under check.
type composeModel struct {
	text   textarea.Model
	inputs [fieldCutoff + 1]textinput.Model // index 0 unused: the text is a textarea
	focus  int
	err    string
	// altTexts are the descriptions the post's author gave its images, as
	// the post came (a case, a post read by URL): no field shows them, and
	// each goes to the engine with its image while the image is listed.
	altTexts map[string]string
}

func newCompose(st Styles, p pipeline.Post, cutoff time.Time) composeModel {
	c := composeModel{altTexts: maps.Clone(p.AltTexts)}
	c.text = textarea.New()
	c.text.Placeholder = "Paste or type the post…"
	c.text.ShowLineNumbers = false
	c.text.CharLimit = 0
	c.text.SetValue(safe(p.Text)) // whole escape sequences out: the inputs drop only their control characters
	c.text.Prompt = "│ "
	c.text.FocusedStyle.CursorLine = lipgloss.NewStyle()
	placeholders := [...]string{"", "display name", "@handle", "YYYY-MM-DD HH:MM in UTC, or RFC 3339 with its zone",
		"image paths or URLs, separated by spaces", "https://…",
		"detected from the text; or a code or name: es, ar, hi, Spanish…", "none: every page up to now; or a time, or \"post\" for the posted time"}
	for i := fieldAuthor; i <= fieldCutoff; i++ {
		in := textinput.New()
		in.Prompt = ""
		in.Placeholder = placeholders[i]
		in.PlaceholderStyle = st.Dim
		c.inputs[i] = in
	}
	c.inputs[fieldAuthor].SetValue(safe(p.Author))
	c.inputs[fieldHandle].SetValue(safe(p.Handle))
	if !p.PostedAt.IsZero() {
		c.inputs[fieldPosted].SetValue(formatWhen(p.PostedAt))
	}
	c.inputs[fieldImages].SetValue(safe(strings.Join(p.Images, " ")))
	c.inputs[fieldURL].SetValue(safe(p.URL))
	c.inputs[fieldLanguage].SetValue(p.Language)
	switch {
	case cutoff.IsZero():
	case cutoff.Equal(p.PostedAt):
		c.inputs[fieldCutoff].SetValue(cutoffAtPost)
	default:
		c.inputs[fieldCutoff].SetValue(formatWhen(cutoff))
	}
	c.text.Focus()
	return c
}

func (c *composeModel) setFocus(i int) tea.Cmd {
	c.focus = (i + fieldCount) % fieldCount
	c.text.Blur()
	for j := fieldAuthor; j <= fieldCutoff; j++ {
		c.inputs[j].Blur()
	}
	switch {
	case c.focus == fieldText:
		return c.text.Focus()
	case c.focus <= fieldCutoff:
		return c.inputs[c.focus].Focus()
	}
	return nil
}

func (c *composeModel) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	switch {
	case c.focus == fieldText:
		c.text, cmd = c.text.Update(msg)
	case c.focus <= fieldCutoff:
		c.inputs[c.focus], cmd = c.inputs[c.focus].Update(msg)
	}
	return cmd
}

// post reads the form into a Check, or says which field is wrong.
func (c *composeModel) check(now time.Time) (*pipeline.Check, error) {
	p := pipeline.Post{
		Text:   strings.TrimSpace(c.text.Value()),
		Author: strings.TrimSpace(c.inputs[fieldAuthor].Value()),
		Handle: strings.TrimSpace(c.inputs[fieldHandle].Value()),
		URL:    strings.TrimSpace(c.inputs[fieldURL].Value()),
		Images: strings.Fields(c.inputs[fieldImages].Value()),
	}
	if l := strings.TrimSpace(c.inputs[fieldLanguage].Value()); l != "" {
		if p.Language = lang.Normalise(l); p.Language == "" {
			return nil, fmt.Errorf("language: %q is not a language: use a code such as es, ar or hi, or a name such as Spanish; leave it empty to detect it", l)
		}
	}
	if p.Text == "" && p.URL == "" {
		return nil, fmt.Errorf("type the post's text (or give its URL) before checking")
	}
	for _, src := range p.Images {
		if alt := c.altTexts[src]; alt != "" {
			if p.AltTexts == nil {
				p.AltTexts = map[string]string{}
			}
			p.AltTexts[src] = alt
		}
	}
	var err error
	if p.PostedAt, err = pipeline.ParseTime(c.inputs[fieldPosted].Value()); err != nil {
		return nil, fmt.Errorf("posted time: %w", err)
	}
	cutoff, err := c.cutoff(p)
	if err != nil {
		return nil, fmt.Errorf("cutoff: %w", err)
	}
	return &pipeline.Check{CreatedAt: now, Post: p, Cutoff: cutoff}, nil
}

// cutoffAtPost, typed in the cutoff field, puts the cutoff at the posted
// time (pipeline.AsOfPost, the paper's protocol; --as-of-post).
const cutoffAtPost = "post"

// cutoff reads the cutoff field: empty is none, cutoffAtPost the posted
// time, anything else a time. A post still to be read from its URL has its
// time only once read (onPostFetched reads the form again then).
func (c *composeModel) cutoff(p pipeline.Post) (time.Time, error) {
	v := strings.TrimSpace(c.inputs[fieldCutoff].Value())
	if !strings.EqualFold(v, cutoffAtPost) {
		return pipeline.ParseTime(v)
	}
	if p.PostedAt.IsZero() && p.NeedsReading() {
		return time.Time{}, nil
	}
	t, err := pipeline.AsOfPost(p)
	if err != nil {
		return t, fmt.Errorf("%q: %w (type it under Posted)", v, err)
	}
	return t, nil
}

func formatWhen(t time.Time) string {
	if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02 15:04")
}

func (m *Model) onComposeKey(msg tea.KeyMsg) tea.Cmd {
	c := &m.compose
	k := m.keys
	switch {
	case key.Matches(msg, k.Submit):
		return m.submitCompose()
	case key.Matches(msg, k.Cases):
		return m.openCaseList()
	case key.Matches(msg, k.NextField):
		return c.setFocus(c.focus + 1)
	case key.Matches(msg, k.PrevField):
		return c.setFocus(c.focus - 1)
	case key.Matches(msg, k.Accept):
		if c.focus == fieldSubmit {
			return m.submitCompose()
		}
		if c.focus != fieldText {
			return c.setFocus(c.focus + 1)
		}
	case key.Matches(msg, k.Back):
		if m.check != nil && m.stageRan() {
			m.screen = screenCheck // back to the check that was open
			if m.composeUnsent() {
				return m.setStatus("the post you were composing is kept: n goes back to it")
			}
		}
		return nil
	case key.Matches(msg, k.Help) && c.focus == fieldSubmit:
		m.overlay, m.helpScroll = overlayHelp, 0
		return nil
	case key.Matches(msg, k.Quit) && c.focus == fieldSubmit:
		return m.quit()
	}
	before := c.text.Value() + strings.Join(c.values(), "\x00")
	cmd := c.update(msg)
	if after := c.text.Value() + strings.Join(c.values(), "\x00"); after != before {
		c.err = ""
		m.dirty = strings.TrimSpace(c.text.Value()) != ""
		m.composeDirty = true
		return tea.Batch(cmd, m.scheduleDraft())
	}
	return cmd
}

func (c *composeModel) values() []string {
	v := make([]string, 0, fieldCutoff)
	for i := fieldAuthor; i <= fieldCutoff; i++ {
		v = append(v, c.inputs[i].Value())
	}
	return v
}

// submitCompose starts a fresh check of the composed post.
func (m *Model) submitCompose() tea.Cmd {
	c, err := m.compose.check(m.now())
	if err != nil {
		m.compose.err = err.Error()
		return nil
	}
	if c.Post.NeedsReading() {
		if m.opts.ReadPost == nil {
			m.compose.err = "type the post's text: muse cannot read posts from their URL here"
			return nil
		}
		read, ctx, typed := m.opts.ReadPost, m.appCtx, c.Post
		m.compose.err = ""
		return tea.Batch(m.setStatus("reading the post at "+typed.URL+"…"), func() tea.Msg {
			p, err := read(ctx, typed)
			return postFetchedMsg{p, err}
		})
	}
	return m.startComposed(c)
}

// startComposed starts a fresh check of c, the composed post's bare Check.
func (m *Model) startComposed(c *pipeline.Check) tea.Cmd {
	// The engine's new Check: its ID, set before the run so every save of
	// it lands in one case, and its cutoff as typed (none when empty).
	if m.opts.NewCheck != nil {
		c = m.opts.NewCheck(c.Post, c.Cutoff)
	} else {
		c = pipeline.NewCheckAt(c.Post, c.Cutoff, m.now())
	}
	var drop tea.Cmd
	if m.opts.Cases != nil {
		// The post is in the case now, not in the compose draft.
		drop = removeDraft(m.gate, false, m.opts.DraftDir, m.draftID)
	}
	m.check = c
	m.screen = screenCheck
	m.composeDirty = false // the post is the check's now
	m.sel = 0
	m.cursor, m.cursorKey, m.filter = map[pipeline.Stage]int{}, map[pipeline.Stage]string{}, map[pipeline.Stage]string{}
	m.runErr, m.lastRun, m.why = "", 0, false
	return tea.Batch(drop, m.startRun(pipeline.StageImages), m.scheduleDraft())
}

func (m *Model) composeView() string {
	c := &m.compose
	if m.tooSmall() {
		return m.tooSmallView()
	}
	w := min(max(m.width, 40), readWidth)
	labelW := 10
	fieldW := max(w-labelW-3, 20)
	c.text.SetWidth(fieldW)
	errLines := 0
	if c.err != "" {
		errLines = lineCount(wrap("✗ "+c.err, min(w, readWidth)))
	}
	c.text.SetHeight(max(min(m.height-15-errLines, 10), 2))
	for i := fieldAuthor; i <= fieldCutoff; i++ {
		c.inputs[i].Width = fieldW - 1
	}
	label := func(i int) string {
		s := m.st.Label
		mark := "  "
		if c.focus == i {
			s = m.st.Focused
			mark = "▸ "
		}
		return mark + s.Render(fmt.Sprintf("%-*s", labelW-2, fieldLabels[i]))
	}
	var b strings.Builder
	b.WriteString(m.st.Title.Render("muse") + m.st.Dim.Render(" · new check: the post to correct") + "\n")
	// Why the check cannot start comes first, whole: under the form it
	// was cut to two lines over the model's name.
	if c.err != "" {
		b.WriteString(m.st.Fail.Render(wrap("✗ "+safe(c.err), min(w, readWidth))))
	}
	b.WriteString("\n")
	b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top, label(fieldText), " ", c.text.View()) + "\n")
	for i := fieldAuthor; i <= fieldCutoff; i++ {
		b.WriteString(label(i) + " " + c.inputs[i].View() + "\n")
	}
	b.WriteString("\n")
	btn := "[ Check ▶ ]"
	if c.focus == fieldSubmit {
		btn = m.st.Cursor.Render(btn)
	}
	b.WriteString(strings.Repeat(" ", labelW+1) + btn + m.st.Dim.Render("  ctrl+s from any field") + "\n")
	body := b.String()
	foot := m.footer(m.composeHelp())
	return fill(body, m.height-lipgloss.Height(foot)) + foot
}

func (m *Model) composeHelp() helpKeys {
	k := m.keys
	quit := key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))
	return helpKeys{always: []key.Binding{k.Submit, k.NextField, k.PrevField, k.Cases, quit}}
}

type postFetchedMsg struct {
	post pipeline.Post
	err  error
}

// onPostFetched fills the form from a post read from its URL, keeping
// what the journalist typed, and starts the check.
func (m *Model) onPostFetched(msg postFetchedMsg) tea.Cmd {
	if msg.err != nil {
		m.screen = screenCompose
		m.compose.err = msg.err.Error() + " — paste the post's text instead"
		return nil
	}
	// The form shows the post as read (the draft keeps it, with the alt
	// texts); the check starts from the post itself, with what the form
	// cannot hold (the platform, the author's description).
	c := &m.compose
	p := msg.post
	c.altTexts = maps.Clone(p.AltTexts)
	c.text.SetValue(safe(p.Text)) // whole escape sequences out: the inputs drop only their control characters
	c.inputs[fieldAuthor].SetValue(safe(p.Author))
	c.inputs[fieldHandle].SetValue(safe(p.Handle))
	c.inputs[fieldLanguage].SetValue(p.Language)
	c.inputs[fieldImages].SetValue(safe(strings.Join(p.Images, " ")))
	if !p.PostedAt.IsZero() {
		c.inputs[fieldPosted].SetValue(formatWhen(p.PostedAt))
	}
	composed, err := c.check(m.now())
	if err != nil {
		c.err = err.Error()
		return nil
	}
	composed.Post = p
	if composed.Cutoff, err = c.cutoff(p); err != nil { // "post": the post's time as read, to the second
		c.err = "cutoff: " + err.Error()
		return nil
	}
	return m.startComposed(composed)
}
