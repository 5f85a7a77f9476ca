package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// keyMap is every key the app answers to. Handlers match keys with
// key.Matches against these bindings, and the footer, the `?` help and the
// README's key table are all generated from them (keyGroups), so none of
// them can disagree with what a key does.
type keyMap struct {
	// everywhere
	Help, Quit, Stop, Copy, CopyURL, Export, New, Log, Post, Verdict, Claims key.Binding
	// compose
	NextField, PrevField, Submit key.Binding
	// check view
	NextStage, PrevStage, Jump, Up, Down, Top, Bottom, PageUp, PageDown key.Binding
	Enter, Back, Filter, Sidebar, Zoom, Language                        key.Binding
	// queries
	Toggle, Edit, Add, Delete, SearchAgain key.Binding
	// sources
	Drop, Boost, Restore, Open, PasteText, RememberDrop, RememberBoost, EvidenceAgain key.Binding
	// images
	EditDescription, QueriesAgain key.Binding
	// evidence / correction
	Include, MoveQuote, WriteAgain, EditInline, EditExternal, Versions, NoteChoice, NoteSend key.Binding
	// inline editor, prompts, version list
	Save, Accept, Cancel, Mark, Diff, RestoreVersion, Close key.Binding
	// dialogs: a draft found after a crash, quitting with unsaved work
	RestoreDraft, DiscardDraft, KeepDraft, QuitAnyway key.Binding
	// the whole post (p): what it points at
	ContextItem key.Binding
	// the saved cases (ctrl+o), and a recheck's revision draft
	Cases, OpenCase, AcceptRevision, ReviseVersion, AcceptEdited key.Binding
}

func newKeyMap() keyMap {
	b := func(help string, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return keyMap{
		Help:    b("?", "all keys", "?"),
		Quit:    b("q", "quit (ctrl+c in compose)", "q"),
		Stop:    b("esc/ctrl+c", "stop the run, keep what was found", "esc", "ctrl+c"),
		Copy:    b("y/c", "copy the correction", "y", "c"),
		CopyURL: b("Y", "copy the selected page's URL", "Y"),
		Export:  b("x", "export md/json/note/ClaimReview", "x"),
		New:     b("n", "new check (compose)", "n"),
		Log:     b("L", "message log", "L"),
		Post:    b("p", "the whole post", "p"),
		Verdict: b("V", "set the verdict, or claim N's as \"N: verdict\" (empty: the evidence's)", "V"),
		Claims:  b("C", "edit the post's claims (| between them), then find evidence again", "C"),

		NextField: b("tab", "next field", "tab"),
		PrevField: b("shift+tab", "previous field", "shift+tab"),
		Submit:    b("ctrl+s", "start the check", "ctrl+s"),

		NextStage: b("tab/→/l", "next stage", "tab", "right", "l"),
		PrevStage: b("S-tab/←/h", "previous stage", "shift+tab", "left", "h"),
		Jump:      b("1…6", "jump to a stage", "1", "2", "3", "4", "5", "6"),
		Up:        b("↑/k", "up", "up", "k"),
		Down:      b("↓/j", "down", "down", "j"),
		Top:       b("g/home", "first", "g", "home"),
		Bottom:    b("G/end", "last", "G", "end"),
		PageUp:    b("pgup", "page up", "pgup"),
		PageDown:  b("pgdown", "page down", "pgdown"),
		Enter:     b("enter", "why this source", "enter"),
		Back:      b("esc", "back", "esc"),
		Filter:    b("/", "filter the list", "/"),
		Sidebar:   b("\\", "hide/show the stage list", "\\"),
		Zoom:      b("z", "zoom the pane", "z"),
		Language:  b("t", "post language", "t"),

		Toggle:      b("space", "tick/untick", " ", "space"),
		Edit:        b("e", "edit", "e", "enter"),
		Add:         b("a", "add", "a"),
		Delete:      b("d", "delete", "d", "delete"),
		SearchAgain: b("s", "search again", "s"),

		Drop:          b("d", "drop (this check)", "d"),
		Boost:         b("b", "boost (this check)", "b"),
		Restore:       b("u", "restore", "u"),
		Open:          b("o", "open in browser", "o"),
		PasteText:     b("P", "paste its text", "P"),
		RememberDrop:  b("D", "drop for the newsroom", "D"),
		RememberBoost: b("B", "boost for the newsroom", "B"),
		EvidenceAgain: b("r", "find evidence again", "r"),

		EditDescription: b("e", "edit description", "e", "enter"),
		QueriesAgain:    b("s", "queries again, then search", "s"),

		Include:      b("space", "include/leave out", " ", "space"),
		MoveQuote:    b("m", "move a quote to the page it is on", "m"),
		WriteAgain:   b("w", "write again", "w"),
		EditInline:   b("e", "edit inline", "e", "enter"),
		EditExternal: b("E", "edit in $EDITOR", "E"),
		Versions:     b("v", "versions: list, diff, restore", "v"),
		NoteChoice:   b("T", "the note's classification and tags (empty: the evidence's)", "T"),
		NoteSend:     b("X", "send the note to X (test mode, after yes)", "X"),

		Save:           b("ctrl+s/esc", "finish editing", "ctrl+s", "esc"),
		Accept:         b("enter", "save", "enter"),
		Cancel:         b("esc", "cancel", "esc", "ctrl+c"),
		Mark:           b("space", "mark one to compare with", " ", "space"),
		Diff:           b("d", "words that differ from the marked one", "d"),
		RestoreVersion: b("r/enter", "restore the selected version", "r", "enter"),
		Close:          b("esc", "close", "esc", "q"),

		RestoreDraft: b("r/enter", "restore the draft found", "r", "enter"),
		DiscardDraft: b("d", "discard it", "d"),
		KeepDraft:    b("esc", "keep it for later", "esc", "q"),
		QuitAnyway:   b("y", "quit anyway (any other key stays)", "y", "Y"),

		ContextItem: b("1…9", "leave out or bring back that context item", "1", "2", "3", "4", "5", "6", "7", "8", "9"),

		Cases:          b("ctrl+o", "the saved cases, changed first", "ctrl+o"),
		OpenCase:       b("enter", "open the case", "enter"),
		AcceptRevision: b("a", "accept the recheck's revision draft", "a"),
		ReviseVersion:  b("e", "edit it as your revision, to accept", "e"),
		AcceptEdited:   b("ctrl+s", "accept your revision (esc: not accepted)", "ctrl+s"),
	}
}

// keyGroup is one heading of the help screen and of the README's table.
type keyGroup struct {
	title string
	keys  []key.Binding
}

// keyGroups is every binding by where it works, in the order the help
// screen and the README list them.
func (k keyMap) keyGroups() []keyGroup {
	return []keyGroup{
		{"everywhere", []key.Binding{k.Help, k.Stop, k.Quit, k.Copy, k.CopyURL, k.Export, k.New, k.Log, k.Post, k.Verdict, k.Claims}},
		{"compose", []key.Binding{k.NextField, k.PrevField, k.Submit}},
		{"stages", []key.Binding{k.NextStage, k.PrevStage, k.Jump, k.Up, k.Down, k.Top, k.Bottom, k.Filter, k.Sidebar, k.Zoom, k.Language}},
		{"images", []key.Binding{k.EditDescription, k.QueriesAgain, k.Open}},
		{"queries", []key.Binding{k.Toggle, k.Edit, k.Add, k.Delete, k.SearchAgain}},
		{"sources", []key.Binding{k.Enter, k.Drop, k.Boost, k.Restore, k.RememberDrop, k.RememberBoost, k.Open, k.PasteText, k.SearchAgain, k.EvidenceAgain}},
		{"evidence", []key.Binding{k.Include, k.MoveQuote, k.Open, k.WriteAgain}},
		{"correction", []key.Binding{k.EditInline, k.EditExternal, k.Save, k.WriteAgain, k.Versions, k.NoteChoice, k.NoteSend}},
		{"versions", []key.Binding{k.Mark, k.Diff, k.RestoreVersion, k.AcceptRevision, k.ReviseVersion, k.Close}},
		{"revising", []key.Binding{k.AcceptEdited}},
		{"prompts", []key.Binding{k.Accept, k.Cancel}},
		{"dialogs", []key.Binding{k.RestoreDraft, k.DiscardDraft, k.KeepDraft, k.QuitAnyway}},
		{"the whole post", []key.Binding{k.ContextItem, k.QueriesAgain}},
		{"saved cases", []key.Binding{k.Cases, k.OpenCase, k.Filter, k.Back}},
	}
}

// keyTable is the README's key table, generated from keyGroups
// (TestREADMEKeyTable checks the README holds it).
func keyTable(k keyMap) string {
	var b strings.Builder
	b.WriteString("| where | key | does |\n|---|---|---|\n")
	for _, g := range k.keyGroups() {
		where := g.title + " "
		for _, kb := range g.keys {
			h := kb.Help()
			b.WriteString("| " + where + "| `" + strings.ReplaceAll(h.Key, "|", "\\|") + "` | " + h.Desc + " |\n")
			where = ""
		}
	}
	return b.String()
}

// helpKeys are the footer's key hints where the journalist is: the
// pane's (short, cut first when the width runs out) and those that always
// hold there.
type helpKeys struct {
	short  []key.Binding
	always []key.Binding
}

// hints is "r/enter restore the draft found · d discard it": a dialog's
// keys, from their bindings.
func (m *Model) hints(keys ...key.Binding) string {
	parts := make([]string, len(keys))
	for i, kb := range keys {
		parts[i] = kb.Help().Key + " " + kb.Help().Desc
	}
	return strings.Join(parts, " · ")
}

// splitBurst turns a burst of typed runes that arrived as one message
// (fast typing, SSH) into one message per key, so "jjjj" moves four times
// and "kkd" deletes the query two rows up. A paste stays whole.
func splitBurst(msg tea.KeyMsg) []tea.KeyMsg {
	if msg.Type != tea.KeyRunes || len(msg.Runes) < 2 || msg.Paste {
		return []tea.KeyMsg{msg}
	}
	out := make([]tea.KeyMsg, 0, len(msg.Runes))
	for _, r := range msg.Runes {
		out = append(out, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
	}
	return out
}
