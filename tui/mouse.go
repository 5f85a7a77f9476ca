package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
)

// onMouse scrolls with the wheel and picks a stage with a click in the list.
func (m *Model) onMouse(msg tea.MouseMsg) tea.Cmd {
	if m.screen != screenCheck || m.overlay != overlayNone || m.editing {
		return nil
	}
	if msg.Action == tea.MouseActionPress && msg.Button == tea.MouseButtonLeft && msg.X < m.sidebarWidth() {
		if i := msg.Y - 1 - boolInt(m.hasBanner()); i >= 0 && i < len(pipeline.Stages) {
			m.moveStage(i)
		}
		return nil
	}
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		return m.onCheckKey(tea.KeyMsg{Type: tea.KeyUp})
	case tea.MouseButtonWheelDown:
		return m.onCheckKey(tea.KeyMsg{Type: tea.KeyDown})
	}
	return nil
}
