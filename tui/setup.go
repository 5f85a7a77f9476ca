package tui

import (
	"context"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline/setup"
)

// setupModel is the first-run screen: muse found no model to use, so it
// lists what it looked for (setup.Detect), what to set, and offers to go on
// in the extractive mode, which needs nothing. It is its own small program,
// run before the app.
type setupModel struct {
	d      setup.Detection
	post   string // the post given on the command line, checked once started
	st     Styles
	start  bool
	width  int
	height int
	terse  bool // leave out the per-item advice, so the screen fits
}

func newSetupModel(opts Options) setupModel {
	st := NewStyles(true, false)
	if opts.Styles != nil {
		st = *opts.Styles
	}
	return setupModel{d: *opts.Setup, post: firstNonEmpty(opts.Post.Text, opts.Post.URL), st: st}
}

// runSetup shows the setup screen; start is true when the person chose to
// go on (enter), false when they quit (q, esc, ctrl+c).
func runSetup(ctx context.Context, opts Options) (start bool, err error) {
	p := tea.NewProgram(newSetupModel(opts), tea.WithAltScreen(), tea.WithContext(ctx))
	final, err := p.Run()
	if m, ok := final.(setupModel); ok {
		start = m.start
	}
	return start, err
}

func (m setupModel) Init() tea.Cmd { return nil }

func (m setupModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		m.width, m.height = ws.Width, ws.Height
	}
	if k, ok := msg.(tea.KeyMsg); ok {
		switch k.String() {
		case "enter":
			m.start = true
			return m, tea.Quit
		case "q", "esc", "ctrl+c":
			return m, tea.Quit
		}
	}
	return m, nil
}

func (m setupModel) View() string {
	v := m.view()
	if m.height > 0 && strings.Count(v, "\n") >= m.height && !m.terse {
		m.terse = true // too tall for the terminal: advice in one line instead
		v = m.view()
	}
	return v
}

func (m setupModel) view() string {
	var b strings.Builder
	b.WriteString(m.st.Title.Render("muse") + " " + m.st.Bold.Render("— set up") + "\n")
	if m.d.Model == "" {
		b.WriteString("No language model is configured. This is what muse looked for:\n\n")
	} else {
		b.WriteString("There is nothing to search yet, so a check would pay " + m.d.Model + " and find nothing.\n" +
			"This is what muse looked for:\n\n")
	}
	var unset []string // search providers not configured: one line for all, so the screen fits 80×24
	var tools []string // programs found: one line for all, likewise
	for _, f := range m.d.Findings {
		if f.Search && !f.Found {
			unset = append(unset, f.Name)
			continue
		}
		if f.Tool && f.Found {
			tools = append(tools, f.Name)
			continue
		}
		mark := m.st.Fail.Render("✗")
		if f.Found {
			mark = m.st.Ok.Render("✓")
		}
		b.WriteString(m.wrap("  "+mark+" "+m.st.Bold.Render(f.Name)+"  "+f.Detail, 4) + "\n")
		if !f.Found && f.Fix != "" && !m.terse {
			b.WriteString(m.wrap("      "+m.st.Dim.Render("→ "+f.Fix), 8) + "\n")
		}
	}
	if len(tools) > 0 {
		b.WriteString(m.wrap("  "+m.st.Ok.Render("✓")+" "+m.st.Bold.Render(strings.Join(tools, ", "))+"  installed", 4) + "\n")
	}
	if len(unset) > 0 {
		b.WriteString(m.wrap("  "+m.st.Fail.Render("✗")+" "+m.st.Bold.Render("search")+"  none set of "+strings.Join(unset, ", "), 4) + "\n")
		b.WriteString(m.wrap("      "+m.st.Dim.Render("→ set one (`muse doctor` says what each needs), e.g. SEARXNG_URL or BRAVE_API_KEY"), 8) + "\n")
	}
	if m.terse {
		b.WriteString(m.wrap("  "+m.st.Dim.Render("→ `muse doctor` says what to set for each; the README's Configure section too"), 4) + "\n")
	}
	b.WriteString("\n")
	if !m.d.Search {
		b.WriteString(m.wrap(m.st.Warn.Render("Nothing to search yet: a check finds no sources until a provider is set or pages are imported."), 0) + "\n")
	}
	b.WriteString(m.wrap("`muse config init` writes a commented config file with every setting.", 0) + "\n\n")
	what := "start"
	if m.post != "" {
		what = "check the post"
	}
	b.WriteString(m.wrap("  "+m.st.Bold.Render("enter")+"  "+what+" in the extractive mode (--no-llm): sources and quotes, no verdict", 9) + "\n")
	b.WriteString("  " + m.st.Bold.Render("q") + "      quit\n")
	return b.String()
}

// wrap fits a line of the setup screen to the terminal's width, keeping
// its own indentation and indenting the lines it adds by indent.
func (m setupModel) wrap(s string, indent int) string {
	if m.width <= 0 {
		return s
	}
	body := strings.TrimLeft(s, " ")
	lead := len(s) - len(body)
	lines := strings.Split(wrap(body, m.width-max(lead, indent)), "\n")
	lines[0] = strings.Repeat(" ", lead) + lines[0]
	for i := 1; i < len(lines); i++ {
		lines[i] = strings.Repeat(" ", indent) + lines[i]
	}
	return strings.Join(lines, "\n")
}
