package tui

import "github.com/charmbracelet/bubbles/key"

// keyMap is every key the app answers to. Which ones are in force depends on
// the room the journalist is in; helpKeys picks them for bubbles/help.
type keyMap struct {
	// everywhere
	Help, Quit, Stop key.Binding
	// compose
	NextField, PrevField, Submit key.Binding
	// check view
	NextStage, PrevStage, Up, Down, Enter, Back, New key.Binding
	// queries
	Toggle, Edit, Add, Delete, SearchAgain key.Binding
	// sources
	Drop, Boost, Restore, Open, RememberDrop, RememberBoost, EvidenceAgain key.Binding
	// images
	EditDescription, QueriesAgain key.Binding
	// evidence / correction
	WriteAgain, EditInline, EditExternal, Copy, Export key.Binding
	// inline editors and prompts
	Save, Cancel key.Binding
}

func newKeyMap() keyMap {
	b := func(help string, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return keyMap{
		Help: b("?", "all keys", "?"),
		Quit: b("q", "quit", "q"),
		Stop: b("esc/ctrl+c", "stop the run", "esc", "ctrl+c"),

		NextField: b("tab", "next field", "tab"),
		PrevField: b("shift+tab", "previous field", "shift+tab"),
		Submit:    b("ctrl+s", "start the check", "ctrl+s"),

		NextStage: b("tab/→", "next stage", "tab", "right", "l"),
		PrevStage: b("shift+tab/←", "previous stage", "shift+tab", "left", "h"),
		Up:        b("↑/k", "up", "up", "k"),
		Down:      b("↓/j", "down", "down", "j"),
		Enter:     b("enter", "why this source", "enter"),
		Back:      b("esc", "back", "esc"),
		New:       b("n", "new check", "n"),

		Toggle:      b("space", "toggle", " ", "space"),
		Edit:        b("e", "edit", "e"),
		Add:         b("a", "add", "a"),
		Delete:      b("d", "delete", "d", "delete"),
		SearchAgain: b("s", "search again", "s"),

		Drop:          b("d", "drop", "d"),
		Boost:         b("b", "boost", "b"),
		Restore:       b("u", "restore", "u"),
		Open:          b("o", "open in browser", "o"),
		RememberDrop:  b("D", "drop for the newsroom", "D"),
		RememberBoost: b("B", "boost for the newsroom", "B"),
		EvidenceAgain: b("r", "find evidence again", "r"),

		EditDescription: b("e", "edit description", "e"),
		QueriesAgain:    b("s", "queries again", "s"),

		WriteAgain:   b("w", "write again", "w"),
		EditInline:   b("e", "edit", "e"),
		EditExternal: b("E", "edit in $EDITOR", "E"),
		Copy:         b("y", "copy", "y", "c"),
		Export:       b("x", "export md/json/note/ClaimReview", "x"),

		Save:   b("ctrl+s/esc", "finish editing", "ctrl+s", "esc"),
		Cancel: b("esc", "cancel", "esc"),
	}
}

// helpKeys adapts a context's bindings to bubbles/help.KeyMap.
type helpKeys struct {
	short []keyBinding
	full  [][]keyBinding
}

type keyBinding = key.Binding

func (h helpKeys) ShortHelp() []key.Binding  { return h.short }
func (h helpKeys) FullHelp() [][]key.Binding { return h.full }

func newBinding(helpKey, desc string, keys ...string) key.Binding {
	if len(keys) == 0 {
		keys = []string{helpKey} // shown in help only
	}
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))
}
