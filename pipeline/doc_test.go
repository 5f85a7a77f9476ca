package pipeline

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/musecheck/muse"

// layer names the part of muse a package belongs to, for the import rules
// in doc.go.
func layer(pkg string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	switch {
	case rel == "":
		return "main"
	case rel == "cli":
		return "cli"
	case rel == "tui" || strings.HasPrefix(rel, "tui/"):
		return "tui"
	case rel == "pipeline/testworld":
		return "testworld"
	case strings.HasPrefix(rel, "pipeline/"):
		return "pipeline/<dir>"
	case rel == "pipeline":
		return "pipeline"
	case rel == "prompts" || strings.HasPrefix(rel, "prompts/"):
		return "prompts"
	case rel == "sources" || strings.HasPrefix(rel, "sources/"):
		return "sources"
	}
	return "unknown"
}

// allowed says which layers each layer may import (besides itself).
var allowed = map[string][]string{
	"main":           {"cli"},
	"cli":            {"tui", "pipeline/<dir>", "pipeline", "prompts", "sources"},
	"tui":            {"pipeline/<dir>", "pipeline", "prompts", "sources"},
	"pipeline/<dir>": {"pipeline", "prompts", "sources"},
	"testworld":      {"pipeline/<dir>", "pipeline", "prompts", "sources"},
	"pipeline":       {"prompts", "sources"},
	"prompts":        {"sources"},
	"sources":        {},
}

// TestImportRules checks every package's imports (not its tests') against
// the rules in doc.go, through `go list`, so the layout cannot rot.
func TestImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		from := layer(p.ImportPath)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			to := layer(imp)
			switch {
			case to == "testworld":
				t.Errorf("%s imports %s: the test world is for tests only", p.ImportPath, imp)
			case from == "pipeline/<dir>" && to == "pipeline/<dir>" && strings.HasPrefix(imp, module+"/pipeline/"):
				// folders under pipeline/ may use one another (batch records cases)
			case to == from:
			case !slices.Contains(allowed[from], to):
				t.Errorf("%s (%s) imports %s (%s): imports must point down (see pipeline/doc.go)", p.ImportPath, from, imp, to)
			}
		}
	}
	if n < 10 {
		t.Fatalf("go list found %d packages; expected the whole module", n)
	}
}
