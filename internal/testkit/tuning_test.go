package testkit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestTuningCommand(t *testing.T) {
	want := "MUSE_TUNING=1 go test ./internal/testkit -run '^TestTuningCommand$'"
	if got := TuningCommand(t); got != want {
		t.Errorf("TuningCommand = %q, want %q", got, want)
	}
	t.Run("sub", func(t *testing.T) {
		if got := TuningCommand(t); got != want {
			t.Errorf("in a subtest, TuningCommand = %q, want %q", got, want)
		}
	})
}

func TestTuningSkipsUnlessAskedFor(t *testing.T) {
	for _, c := range []struct {
		env  string
		skip bool
	}{{"", true}, {"0", true}, {"yes", true}, {"1", false}} {
		var sub *testing.T
		ran := false
		t.Run("env="+c.env, func(t *testing.T) {
			sub = t
			t.Setenv(TuningEnv, c.env)
			Tuning(t)
			ran = true
		})
		if sub.Skipped() != c.skip || ran == c.skip {
			t.Errorf("%s=%q: skipped %v, ran on %v; want skipped %v", TuningEnv, c.env, sub.Skipped(), ran, c.skip)
		}
	}
}

// TestCIRunsEveryTuningTest: the tuning step of .ci/run names exactly the
// tests that call Tuning, each in its package, so that none is skipped in
// both of CI's runs and none runs twice.
func TestCIRunsEveryTuningTest(t *testing.T) {
	root := moduleRoot(t)
	script, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	pattern, pkgs := tuningStep(t, string(script))
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.Fatalf(".ci/run's tuning -run pattern %q: %v", pattern, err)
	}
	tuning, all := testFuncs(t, root)
	for _, tf := range tuning {
		if !slices.Contains(pkgs, tf.pkg) || !re.MatchString(tf.name) {
			t.Errorf("%s in %s calls testkit.Tuning but .ci/run's tuning step does not run it", tf.name, tf.pkg)
		}
	}
	for _, tf := range all {
		if slices.Contains(pkgs, tf.pkg) && re.MatchString(tf.name) && !slices.Contains(tuning, tf) {
			t.Errorf(".ci/run's tuning step runs %s in %s a second time: it does not call testkit.Tuning", tf.name, tf.pkg)
		}
	}
	for _, p := range pkgs {
		if !slices.ContainsFunc(tuning, func(tf testFunc) bool { return tf.pkg == p }) {
			t.Errorf(".ci/run's tuning step names %s, which has no tuning test", p)
		}
	}
	if len(tuning) == 0 {
		t.Error("no test calls testkit.Tuning")
	}
}

func moduleRoot(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the test's directory")
		}
	}
}

// tuningStep reads the -run pattern and the packages of the go test
// command that .ci/run runs with MUSE_TUNING=1.
func tuningStep(t *testing.T, script string) (pattern string, pkgs []string) {
	script = strings.ReplaceAll(script, "\\\n", " ")
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, TuningEnv+"=1 go test ") {
			continue
		}
		m := regexp.MustCompile(`-run '([^']+)'`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf(".ci/run's tuning step has no -run '…': %s", line)
		}
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "./") {
				pkgs = append(pkgs, filepath.ToSlash(filepath.Clean(f)))
			}
		}
		return m[1], pkgs
	}
	t.Fatalf(".ci/run has no line starting %q", TuningEnv+"=1 go test ")
	return "", nil
}

type testFunc struct{ pkg, name string }

// testFuncs lists the module's top-level Test functions, and of them those
// that call testkit.Tuning.
func testFuncs(t *testing.T, root string) (tuning, all []testFunc) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(filepath.Clean(rel))
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
				continue
			}
			tf := testFunc{pkg, fn.Name.Name}
			all = append(all, tf)
			if callsTuning(fn.Body) {
				tuning = append(tuning, tf)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tuning, all
}

func callsTuning(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		if fn, ok := call.Fun.(*ast.SelectorExpr); ok {
			if x, ok := fn.X.(*ast.Ident); ok && x.Name == "testkit" && fn.Sel.Name == "Tuning" {
				found = true
			}
		}
		return !found
	})
	return found
}
