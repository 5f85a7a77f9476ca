package tui

import "github.com/charmbracelet/lipgloss"

// Styles holds every look the app uses, built once from the terminal's
// background so that views never decide colours themselves.
type Styles struct {
	Title      lipgloss.Style
	Dim        lipgloss.Style
	Bold       lipgloss.Style
	Cursor     lipgloss.Style // the selected row
	Ok         lipgloss.Style
	Fail       lipgloss.Style
	Warn       lipgloss.Style
	Stale      lipgloss.Style
	Running    lipgloss.Style
	Label      lipgloss.Style
	Focused    lipgloss.Style // label of the focused compose field
	StatusBar  lipgloss.Style
	StatusMsg  lipgloss.Style
	Refutes    lipgloss.Style
	Supports   lipgloss.Style
	Context    lipgloss.Style
	Divider    lipgloss.Style
	Box        lipgloss.Style // overlays: help, confirm, restore
	Glamour    string         // glamour style name for the rendered correction
	hasColours bool
}

// NewStyles picks colours for a dark or light background; with colour off
// (NO_COLOR, a dumb terminal, tests) it keeps only bold and reverse, which
// read on any background.
func NewStyles(dark, colour bool) Styles {
	pick := func(light, darkC string) lipgloss.TerminalColor {
		if !colour {
			return lipgloss.NoColor{}
		}
		if dark {
			return lipgloss.Color(darkC)
		}
		return lipgloss.Color(light)
	}
	s := Styles{hasColours: colour}
	s.Title = lipgloss.NewStyle().Bold(true).Foreground(pick("#5A3FC0", "#B8A6FF"))
	s.Dim = lipgloss.NewStyle().Foreground(pick("#6B6B6B", "#8A8A8A"))
	s.Bold = lipgloss.NewStyle().Bold(true)
	s.Cursor = lipgloss.NewStyle().Reverse(true)
	s.Ok = lipgloss.NewStyle().Foreground(pick("#1E7B34", "#6BD68A"))
	s.Fail = lipgloss.NewStyle().Foreground(pick("#B3261E", "#FF7A72"))
	s.Warn = lipgloss.NewStyle().Foreground(pick("#8A5A00", "#F2C14E"))
	s.Stale = lipgloss.NewStyle().Foreground(pick("#8A5A00", "#D9A441")).Italic(colour)
	s.Running = lipgloss.NewStyle().Foreground(pick("#0B5CAD", "#7CC4FF"))
	s.Label = lipgloss.NewStyle().Foreground(pick("#444444", "#BBBBBB"))
	s.Focused = lipgloss.NewStyle().Bold(true).Foreground(pick("#5A3FC0", "#B8A6FF"))
	s.StatusBar = lipgloss.NewStyle().Foreground(pick("#333333", "#CCCCCC"))
	s.StatusMsg = lipgloss.NewStyle().Bold(true).Foreground(pick("#1E7B34", "#6BD68A"))
	s.Refutes = lipgloss.NewStyle().Bold(true).Foreground(pick("#B3261E", "#FF9A92"))
	s.Context = lipgloss.NewStyle().Foreground(pick("#0B5CAD", "#7CC4FF"))
	s.Supports = lipgloss.NewStyle().Bold(true).Foreground(pick("#1E7B34", "#7EE08F"))
	s.Divider = lipgloss.NewStyle().Foreground(pick("#BBBBBB", "#444444"))
	s.Box = lipgloss.NewStyle().Border(lipgloss.NormalBorder()).Padding(0, 1)
	switch {
	case !colour:
		s.Glamour = "notty"
	case dark:
		s.Glamour = "dark"
	default:
		s.Glamour = "light"
	}
	if !colour {
		s.Box = s.Box.BorderForeground(lipgloss.NoColor{})
	}
	return s
}
