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
	d     setup.Detection
	post  string // the post given on the command line, checked once started
	st    Styles
	start bool
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
	var b strings.Builder
	b.WriteString(m.st.Title.Render("muse") + " " + m.st.Bold.Render("— set up") + "\n\n")
	if m.d.Model == "" {
		b.WriteString("No language model is configured. This is what muse looked for:\n\n")
	} else {
		b.WriteString("There is nothing to search yet, so a check would pay " + m.d.Model + " and find nothing.\n" +
			"This is what muse looked for:\n\n")
	}
	for _, f := range m.d.Findings {
		mark := m.st.Fail.Render("✗")
		if f.Found {
			mark = m.st.Ok.Render("✓")
		}
		b.WriteString("  " + mark + " " + m.st.Bold.Render(f.Name) + "  " + f.Detail + "\n")
		if !f.Found && f.Fix != "" {
			b.WriteString("      " + m.st.Dim.Render("→ "+f.Fix) + "\n")
		}
	}
	b.WriteString("\n")
	if !m.d.Search {
		b.WriteString(m.st.Warn.Render("Nothing to search yet: set a search provider above or import pages with `muse archive add`;\n"+
			"until then a check finds no sources.") + "\n\n")
	}
	b.WriteString("`muse config init` writes a commented config file with every setting; `muse doctor` checks them.\n\n")
	what := "start"
	if m.post != "" {
		what = "check the post"
	}
	b.WriteString("  " + m.st.Bold.Render("enter") + "  " + what + " in the extractive mode (--no-llm): sources and their\n" +
		"         most related paragraphs, without a model and without a verdict\n")
	b.WriteString("  " + m.st.Bold.Render("q") + "      quit\n")
	return b.String()
}
