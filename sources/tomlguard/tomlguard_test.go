package tomlguard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

func TestCheck(t *testing.T) {
	ok := []string{
		"model = \"gpt\"\n[search]\nproviders = [\"searxng\", \"brave\"]\n",
		"[domains.\"example.com\"]\ntier = \"high\"\n[[a.b]]\nx = { y = [1, [2, [3]]] }\n",
		"s = \"[[[[[[[[[[[[[[[[[[[[\" # [[[[[[[[[[[[[[[[[[[[[[[[[\nt = '''{{{{{{{{{{{{{{{{{{{{{{'''\n",
		"u = \"\"\"a \\\" [[[[[[[[[[[[[[[[[[[[\nb\"\"\"\n",
	}
	for _, s := range ok {
		if err := Check([]byte(s)); err != nil {
			t.Errorf("Check(%q) = %v", s, err)
		}
		var v map[string]any
		if _, err := toml.Decode(s, &v); err != nil {
			t.Errorf("fixture %q is not TOML: %v", s, err)
		}
	}
	deep := "x = " + strings.Repeat("{a=", 17) + "1" + strings.Repeat("}", 17) + "\n"
	if err := Check([]byte(deep)); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("17 nested inline tables: %v", err)
	}
	if err := Check([]byte("x = " + strings.Repeat("[", 20) + strings.Repeat("]", 20))); err == nil {
		t.Error("20 nested arrays passed")
	}
}

// The file the decoder chokes on is refused at once: 78 KiB of nested
// inline tables, which took the decoder minutes and gigabytes.
func TestReadFileRefusesBlowUpFast(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.toml")
	n := 78 << 10 / 4
	os.WriteFile(p, []byte("x = "+strings.Repeat("{a=", n)+"1"+strings.Repeat("}", n)+"\n"), 0o600)
	start := time.Now()
	if _, err := ReadFile(p, 1<<20); err == nil {
		t.Fatal("nested inline tables passed")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing took %v", d)
	}
	big := filepath.Join(dir, "big.toml")
	os.WriteFile(big, []byte(strings.Repeat("# comment\n", 200<<10)), 0o600)
	if _, err := ReadFile(big, 1<<20); err == nil || !strings.Contains(err.Error(), "over 1024 KiB") {
		t.Errorf("2 MB file: %v", err)
	}
}
