package notewriter

import (
	"fmt"
	"strings"
)

// AdmissionWindow is how many of the writer's latest test-mode notes X's
// admission reads.
const AdmissionWindow = 50

// Bar is one of X's four admission criteria, read on the window.
type Bar struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	Of    int    `json:"of"`
	// AtLeast: Count/Of must reach Percent; else it must not pass it.
	AtLeast bool `json:"at_least"`
	Percent int  `json:"percent"`
	OK      bool `json:"ok"`
}

func (b Bar) String() string {
	op := "≤"
	if b.AtLeast {
		op = "≥"
	}
	pct := "—"
	if b.Of > 0 {
		pct = fmt.Sprintf("%d%%", b.Count*100/b.Of)
	}
	mark := "✗"
	if b.OK {
		mark = "✓"
	}
	return fmt.Sprintf("%-17s %2d/%-2d %4s  bar %s%d%%  %s", b.Name, b.Count, b.Of, pct, op, b.Percent, mark)
}

// Ledger is the writer's standing against X's admission bar: over its
// last AdmissionWindow test-mode notes, at least 30% high on ClaimOpinion
// and at most 30% low, at least 95% high on UrlValidity and at least 98%
// high on HarassmentAbuse (twitter/communitynotes
// documentation/api/overview.md). A note X has not scored yet counts as
// high on nothing and low on nothing.
type Ledger struct {
	Notes   []WrittenNote `json:"notes"`   // the window, newest first
	Written int           `json:"written"` // notes in the window
	Pending int           `json:"pending"` // of them, not scored yet
	Bars    []Bar         `json:"bars"`
	// Meets: a full window meets all four bars.
	Meets bool `json:"meets"`
	// More is how many more notes, each high on all three evaluators,
	// the writer needs for the window to meet the bar (0 when it does).
	More int `json:"more"`
}

// bars reads the four criteria on a window.
func bars(window []WrittenNote) []Bar {
	n := len(window)
	count := func(typ, bucket string) int {
		k := 0
		for _, w := range window {
			if w.Scores[typ] == bucket {
				k++
			}
		}
		return k
	}
	mk := func(name string, c int, atLeast bool, pct int) Bar {
		ok := n > 0 && (atLeast && c*100 >= pct*n || !atLeast && c*100 <= pct*n)
		return Bar{Name: name, Count: c, Of: n, AtLeast: atLeast, Percent: pct, OK: ok}
	}
	return []Bar{
		mk("ClaimOpinion high", count(ScoreClaimOpinion, "high"), true, 30),
		mk("ClaimOpinion low", count(ScoreClaimOpinion, "low"), false, 30),
		mk("URL valid", count(ScoreURLValidity, "high"), true, 95),
		mk("harassment pass", count(ScoreHarassmentAbuse, "high"), true, 98),
	}
}

func allOK(bs []Bar) bool {
	for _, b := range bs {
		if !b.OK {
			return false
		}
	}
	return true
}

// NewLedger reads the ledger from the writer's test-mode notes, newest
// first (NotesWritten's order).
func NewLedger(notes []WrittenNote) Ledger {
	window := notes[:min(len(notes), AdmissionWindow)]
	l := Ledger{Notes: window, Written: len(window), Bars: bars(window)}
	for _, w := range window {
		if len(w.Scores) == 0 {
			l.Pending++
		}
	}
	l.Meets = len(window) == AdmissionWindow && allOK(l.Bars)
	perfect := WrittenNote{Scores: map[string]string{ScoreClaimOpinion: "high", ScoreURLValidity: "high", ScoreHarassmentAbuse: "high"}}
	for k := 0; k <= AdmissionWindow; k++ {
		w := make([]WrittenNote, 0, AdmissionWindow)
		for range k {
			w = append(w, perfect)
		}
		w = append(w, window[:min(len(window), AdmissionWindow-k)]...)
		if len(w) == AdmissionWindow && allOK(bars(w)) {
			l.More = k
			break
		}
	}
	return l
}

// Summary says in one line how far the writer is from admission.
func (l Ledger) Summary() string {
	if l.Meets {
		return fmt.Sprintf("the last %d test-mode notes meet X's admission bar", AdmissionWindow)
	}
	var failing []string
	for _, b := range l.Bars {
		if !b.OK && b.Of > 0 {
			failing = append(failing, b.Name)
		}
	}
	s := fmt.Sprintf("%d of %d test-mode notes written", l.Written, AdmissionWindow)
	if len(failing) > 0 {
		s += ", below the bar on " + strings.Join(failing, ", ")
	}
	if l.Pending > 0 {
		s += fmt.Sprintf(", %d not scored yet", l.Pending)
	}
	note := "notes"
	if l.More == 1 {
		note = "note"
	}
	return s + fmt.Sprintf("; %d more %s, each high on all three evaluators, would meet it", l.More, note)
}
