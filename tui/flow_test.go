package tui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/musecheck/muse/pipeline"
)

type clip struct {
	mu   sync.Mutex
	text []string
}

func (c *clip) copy(s string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.text = append(c.text, s)
	return nil
}

func (c *clip) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.text) == 0 {
		return ""
	}
	return c.text[len(c.text)-1]
}

func waitFor(t *testing.T, tm *teatest.TestModel, want string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(want)) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func keyMsg(t tea.KeyType) tea.KeyMsg { return tea.KeyMsg{Type: t} }

// TestMainFlow is the journalist's path through the app: compose → run →
// drop a source → search again → untick a quote → write again → edit → copy.
func TestMainFlow(t *testing.T) {
	r := newRunner(t)
	var c clip
	opts := testOptions(r)
	opts.Post = pipeline.Post{}
	opts.Clipboard = c.copy
	opts.DraftDir = t.TempDir()
	tm := teatest.NewTestModel(t, New(context.Background(), opts), teatest.WithInitialTermSize(120, 40))

	tm.Type("Video shows the Baltimore bridge collapsing this morning")
	tm.Send(keyMsg(tea.KeyTab))
	tm.Type("Daily Truth Bomb")
	tm.Send(keyMsg(tea.KeyTab))
	tm.Type("@truthbomb")
	tm.Send(keyMsg(tea.KeyTab))
	tm.Type("2024-03-05 09:12")
	tm.Send(keyMsg(tea.KeyCtrlS))
	waitFor(t, tm, "correction ready")

	tm.Type("4") // sources
	waitFor(t, tm, "why this source")
	tm.Type("d") // drop Reuters
	waitFor(t, tm, "dropped reuters.com")
	tm.Type("s")
	waitFor(t, tm, "correction ready")

	tm.Type("5") // evidence
	waitFor(t, tm, "write again")
	tm.Send(keyMsg(tea.KeySpace)) // untick the first quote (AP's refutation)
	waitFor(t, tm, "stale")
	tm.Type("w")
	waitFor(t, tm, "correction ready")

	tm.Type("e")
	waitFor(t, tm, "finish editing")
	tm.Send(keyMsg(tea.KeyCtrlE)) // end of line
	tm.Type(" Edited by the desk.")
	tm.Send(keyMsg(tea.KeyEsc))
	waitFor(t, tm, "edit saved")
	tm.Type("y")
	waitFor(t, tm, "copied the correction")
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	m := tm.FinalModel(t).(*Model)

	froms, seen := r.runs()
	if want := []pipeline.Stage{pipeline.StageImages, pipeline.StageSearch, pipeline.StageCorrection}; !equalStages(froms, want) {
		t.Fatalf("runs started from %v, want %v", froms, want)
	}
	if !seen[1].Sources[0].Dropped || seen[1].Sources[0].Domain != "reuters.com" {
		t.Errorf("search again did not carry the drop: %+v", seen[1].Sources[0])
	}
	if ev := seen[2].Evidence; len(ev) == 0 || ev[0].Included {
		t.Errorf("write again did not carry the unticked quote: %+v", ev)
	}
	got := c.last()
	if !strings.HasSuffix(got, "Edited by the desk.") {
		t.Errorf("copied %q, want the edited correction", got)
	}
	if strings.Contains(got, "filmed in 2019 in Genoa") || strings.Contains(got, "first appeared online") {
		t.Errorf("correction uses a dropped source or an unticked quote: %q", got)
	}
	if !m.check.Correction.Edited {
		t.Error("the edit is not marked as a person's")
	}
	if _, err := os.Stat(filepath.Join(opts.DraftDir, m.draftID+".json")); !os.IsNotExist(err) {
		t.Errorf("draft left behind after a clean quit (err %v)", err)
	}
}

func equalStages(a, b []pipeline.Stage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDraftSurvivesAKill: typing is saved; a new session offers it back.
func TestDraftSurvivesAKill(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(newRunner(t))
	opts.Post = pipeline.Post{}
	opts.DraftDir = dir
	tm := teatest.NewTestModel(t, New(context.Background(), opts), teatest.WithInitialTermSize(80, 24))
	tm.Type("The mayor banned cars downtown")
	deadline := time.Now().Add(5 * time.Second)
	var files []string
	for time.Now().Before(deadline) {
		files, _ = filepath.Glob(filepath.Join(dir, "*.json"))
		if len(files) == 1 {
			if b, _ := os.ReadFile(files[0]); bytes.Contains(b, []byte("banned cars downtown")) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(files) != 1 {
		t.Fatalf("draft not written: %v", files)
	}
	// Killed: the program never quits cleanly; a new session starts.
	opts2 := opts
	opts2.Now = func() time.Time { return fixedNow.Add(time.Hour) }
	tm2 := teatest.NewTestModel(t, New(context.Background(), opts2), teatest.WithInitialTermSize(80, 24))
	waitFor(t, tm2, "Unsaved draft found")
	tm2.Type("r")
	tm2.Send(keyMsg(tea.KeyCtrlC))
	waitFor(t, tm2, "Quit muse?") // restored text is unsaved work
	tm2.Type("y")
	tm2.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	m := tm2.FinalModel(t).(*Model)
	if got := m.compose.text.Value(); got != "The mayor banned cars downtown" {
		t.Errorf("restored text %q", got)
	}
	_ = tm.Quit()
}
