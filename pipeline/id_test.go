package pipeline

import (
	"regexp"
	"testing"
	"time"
)

var idForm = regexp.MustCompile(`^[0-9a-hjkmnp-tv-z]{16}$`)

func TestNewIDUnique(t *testing.T) {
	seen := map[string]bool{}
	now := time.Now()
	// 1000 IDs in one millisecond clash with odds of about 1 in 70,000.
	for range 1000 {
		id := NewIDAt(now)
		if seen[id] || !idForm.MatchString(id) {
			t.Fatalf("ID %s: a duplicate in the same millisecond, or not of the form", id)
		}
		seen[id] = true
	}
}

func TestIDsSortByTime(t *testing.T) {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	prev := ""
	for i := range 50 {
		id := NewIDAt(base.Add(time.Duration(i*i) * time.Millisecond))
		if id <= prev {
			t.Fatalf("ID %s made after %s sorts before it", id, prev)
		}
		prev = id
	}
}

func TestIDFor(t *testing.T) {
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := IDFor(at, []byte("job 7")), IDFor(at, []byte("job 8"))
	if a != IDFor(at, []byte("job 7")) || a == b || !idForm.MatchString(a) {
		t.Errorf("IDFor: %q, again %q, another seed %q", a, IDFor(at, []byte("job 7")), b)
	}
	if a[:9] != NewIDAt(at)[:9] {
		t.Errorf("IDFor %q does not start with the time, as NewIDAt's %q", a, NewIDAt(at))
	}
}

func TestNewCheckHasAnID(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	e := &Engine{opts: Options{Now: func() time.Time { return now }}}
	c := e.NewCheck(Post{Text: "x"}, time.Time{})
	if !idForm.MatchString(c.ID) || c.ID[:9] != NewIDAt(now)[:9] {
		t.Errorf("NewCheck ID %q, want NewID's form made at the engine's now", c.ID)
	}
}
