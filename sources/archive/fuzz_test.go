package archive

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources"
)

// FuzzImportJSONL feeds arbitrary bytes to Import as a .jsonl file. It must
// never panic, must report every refused line on a line of its own, and
// every line it accepts must be found again by its URL holding what the
// accepted lines under that URL said (a later line's non-empty fields win,
// as Add documents).
func FuzzImportJSONL(f *testing.F) {
	for _, seed := range []string{
		`{"url":"https://a.example/1","title":"One","text":"first record","published":"2020-02-03","publisher":"A"}`,
		"{\"url\":\"https://a.example/1\",\"title\":\"One\"}\n{\"url\":\"http://A.example/1/?utm_source=x\",\"text\":\"later text\",\"published\":\"2021-05-06T07:08:09Z\"}\n",
		`{"url":"https://a.example/2","title":"Two","text":"second","published":"2020-02-03T10:00:00.123456789+02:00"}`,
		`{"url":"https://a.example/3","title":"T","published":"0001-01-01"}`,
		"not json\n\n   \n{\"url\":",
		`{"url":["https://a.example/"],"title":1}`,
		`{"url":"https://a.example/4","title":"` + strings.Repeat("huge title ", 2000) + `","text":"` + strings.Repeat("x", 50000) + `"}`,
		"{\"url\":\"https://a.example/5\",\"title\":\"bad \xff\xfe utf-8\",\"text\":\"\xc3\x28\"}",
		"\xef\xbb\xbf{\"url\":\"https://a.example/6\",\"title\":\"BOM first\"}",
		`{"url":"https://a.example/7","title":"Bad date","published":"yesterday"}`,
		`{"url":"https://a.example/8","title":"Bad date","published":"2020-13-45"}`,
		`{"url":"https://a.example/9","title":"far date","published":"9999-12-31T23:59:59-23:59"}`,
		`{"url":"javascript:alert(1)","title":"not http"}`,
		`{"url":"file:///etc/passwd","title":"not http"}`,
		`{"url":"/relative/path","title":"not http"}`,
		`{"url":"https://a.example/10","title":"   ","text":"\t\n"}`,
		"{\"url\":\"https://a.example/11\\nmuse: archive add\",\"title\":\"\"}",
		`{"url":"https://a.example/12","title":"nul \u0000 inside","text":"a\u0000b"}`,
		`{"url":"https://a.example/13","title":"dup key","title":"second dup","extra":{"x":[1,2]}}`,
		"{\"url\":\"https://a.example/14\",\"title\":\"crlf\"}\r\n{\"url\":\"https://a.example/15\",\"text\":\"x\"}\r\n",
	} {
		f.Add([]byte(seed))
	}
	// One store for all inputs, emptied before each: opening a new SQLite
	// file per input would spend most of the fuzzing time on schema setup.
	ctx := context.Background()
	dir := f.TempDir()
	s, err := Open(ctx, filepath.Join(dir, "archive.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	path := filepath.Join(dir, "in.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM docs`); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var errs bytes.Buffer
		res := s.Import(ctx, []string{path}, ImportOptions{Errors: &errs})

		if got := strings.Count(errs.String(), "\n"); got != res.Failed {
			t.Fatalf("Failed = %d but %d error lines:\n%s", res.Failed, got, errs.String())
		}
		failed := map[int]bool{}
		re := regexp.MustCompile(`(?m)^muse: archive add ` + regexp.QuoteMeta(path) + `:(\d+): `)
		for _, m := range re.FindAllStringSubmatch(errs.String(), -1) {
			n, _ := strconv.Atoi(m[1])
			failed[n] = true
		}

		// The lines as Import reads them; the fuzzer's inputs stay far
		// below the 64 MiB line limit.
		type want struct {
			orig, title, text, publisher string
			published                    int64
			dated                        bool
		}
		wants := map[string]*want{}
		var accepted []record
		nonBlank := 0
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 64<<20)
		for line := 1; sc.Scan(); line++ {
			b := strings.TrimSpace(sc.Text())
			if b == "" {
				continue
			}
			nonBlank++
			if failed[line] {
				continue
			}
			var r record
			if err := json.Unmarshal([]byte(b), &r); err != nil {
				t.Fatalf("line %d accepted but is not JSON: %v", line, err)
			}
			key, err := sources.Canonical(r.URL)
			if err != nil {
				t.Fatalf("line %d accepted with URL %q: %v", line, r.URL, err)
			}
			pub, err := parseDate(r.Published)
			if err != nil {
				t.Fatalf("line %d accepted with bad date: %v", line, err)
			}
			w := wants[key]
			if w == nil {
				w = &want{orig: strings.TrimSpace(r.URL)}
				wants[key] = w
			}
			for _, f := range []struct {
				dst *string
				v   string
			}{
				{&w.title, r.Title}, {&w.text, r.Text}, {&w.publisher, r.Publisher},
			} {
				if v := strings.TrimSpace(f.v); v != "" {
					*f.dst = v
				}
			}
			if !pub.Truncate(time.Second).IsZero() {
				w.published, w.dated = pub.Unix(), true
			}
			accepted = append(accepted, r)
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("test reader: %v", err)
		}
		if res.Added != len(accepted) || res.Added+res.Failed != nonBlank {
			t.Fatalf("Import = %+v; %d non-blank lines, %d accepted\n%s", res, nonBlank, len(accepted), errs.String())
		}

		for _, r := range accepted {
			d, err := s.Get(ctx, r.URL)
			if err != nil {
				t.Fatalf("accepted %q not found: %v", r.URL, err)
			}
			key, _ := sources.Canonical(r.URL)
			w := wants[key]
			if d.URL != w.orig || d.Title != w.title || d.Text != w.text || d.Publisher != w.publisher {
				t.Fatalf("Get(%q) = url %q title %q text %.80q publisher %q; want %q %q %.80q %q",
					r.URL, d.URL, d.Title, d.Text, d.Publisher, w.orig, w.title, w.text, w.publisher)
			}
			if w.dated != !d.Published.IsZero() || (w.dated && d.Published.Unix() != w.published) {
				t.Fatalf("Get(%q).Published = %v; want unix %d (dated %v)", r.URL, d.Published, w.published, w.dated)
			}
		}
		if n, err := s.Count(ctx); err != nil || n != len(wants) {
			t.Fatalf("Count = %d, %v; want %d distinct URLs", n, err, len(wants))
		}
	})
}
