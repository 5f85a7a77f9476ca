package ratings

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// mbfcFile is the MBFC browser extension's combined.json (version 5): the
// publishers, domain aliases and code tables. Only what muse uses is decoded.
type mbfcFile struct {
	Version int               `json:"version"`
	Date    string            `json:"date"`
	Aliases map[string]string `json:"aliases"`
	Sources []mbfcSource      `json:"sources"`
}

type mbfcSource struct {
	Domain    string `json:"domain"`
	Name      string `json:"name"`
	Bias      string `json:"bias"`
	Reporting string `json:"reporting"`
}

// ratingsFile is a loaded ratings file.
type ratingsFile struct {
	path string
	date string // YYYY-MM-DD: the export date inside the file, else its modification time
	t    *table
}

// loadRatingsFile reads a ratings file, telling MBFC's combined.json from a
// CSV by its first non-blank byte.
func loadRatingsFile(path string) (*ratingsFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read ratings file: %w", err)
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("ratings file %s is empty", path)
	}
	if trimmed[0] == '{' {
		rf, err := parseMBFC(trimmed)
		if err != nil {
			return nil, fmt.Errorf("ratings file %s: %w", path, err)
		}
		rf.path = path
		return rf, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read ratings file: %w", err)
	}
	date := fi.ModTime().UTC().Format(time.DateOnly)
	t, err := parseCSV(trimmed, fmt.Sprintf("ratings file %s %s", filepath.Base(path), date))
	if err != nil {
		return nil, fmt.Errorf("ratings file %s: %w", path, err)
	}
	return &ratingsFile{path: path, date: date, t: t}, nil
}

// parseMBFC decodes and validates combined.json. Every source needs a
// domain and a known bias; a known reporting value or none (MBFC leaves it
// out for satire).
func parseMBFC(data []byte) (*ratingsFile, error) {
	var f mbfcFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not an MBFC combined.json: %w", jsonErr(err))
	}
	if f.Sources == nil {
		return nil, errors.New(`not an MBFC combined.json: no "sources" list`)
	}
	date := f.Date
	if t, err := time.Parse(time.RFC3339, f.Date); err == nil {
		date = t.UTC().Format(time.DateOnly)
	} else if len(date) > 10 {
		date = date[:10]
	}
	t := newTable(strings.TrimSpace("mbfc combined.json " + date))
	for i, s := range f.Sources {
		fact, err := NormalizeFactuality(s.Reporting)
		if err == nil && fact == "" && s.Bias == "" {
			err = errors.New("no reporting and no bias")
		}
		var bias string
		if err == nil {
			bias, err = NormalizeBias(s.Bias)
		}
		if err == nil {
			err = t.add(s.Domain, entry{publisher: s.Name, factuality: fact, bias: bias, tier: TierFor(fact, bias)})
		}
		if err != nil {
			return nil, fmt.Errorf("sources[%d] (%q): %w", i, s.Domain, err)
		}
	}
	for from, to := range f.Aliases {
		fh, _, err1 := splitKey(from)
		th, _, err2 := splitKey(to)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("aliases[%q]: %w", from, err)
		}
		t.aliases[fh] = th
	}
	return &ratingsFile{date: date, t: t}, nil
}

// jsonErr adds the byte offset to a JSON syntax error, which otherwise
// does not say where the file is broken.
func jsonErr(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%w (at byte %d)", err, se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("file ends early: %w", err)
	}
	return err
}

// parseCSV reads "domain,factuality,bias[,publisher]" rows. A first row
// naming its columns may reorder them and use MBFC's names ("reporting" for
// factuality, "name" for publisher), so mbfc_domains.csv-style exports load
// too. Blank lines and lines starting with '#' are skipped.
func parseCSV(data []byte, origin string) (*table, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	cols := map[string]int{"domain": 0, "factuality": 1, "bias": 2, "publisher": 3}
	t := newTable(origin)
	first := true
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not a CSV of domain,factuality,bias: %w", err)
		}
		line, _ := r.FieldPos(0)
		if first {
			first = false
			if h, ok := csvHeader(rec); ok {
				cols = h
				continue
			}
		}
		if err := addCSVRow(t, rec, cols); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
	}
	if t.len() == 0 {
		return nil, errors.New("no ratings in CSV (want rows of domain,factuality,bias)")
	}
	return t, nil
}

func csvHeader(rec []string) (map[string]int, bool) {
	names := map[string]string{"domain": "domain", "factuality": "factuality", "reporting": "factuality",
		"bias": "bias", "publisher": "publisher", "name": "publisher"}
	cols := map[string]int{}
	for i, f := range rec {
		if n, ok := names[strings.ToLower(strings.TrimSpace(f))]; ok {
			if _, dup := cols[n]; !dup {
				cols[n] = i
			}
		}
	}
	_, d := cols["domain"]
	_, f := cols["factuality"]
	_, b := cols["bias"]
	return cols, d && f && b
}

func addCSVRow(t *table, rec []string, cols map[string]int) error {
	field := func(name string) string {
		if i, ok := cols[name]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	if len(rec) < 3 {
		return fmt.Errorf("want domain,factuality,bias, got %d field(s)", len(rec))
	}
	fact, err := NormalizeFactuality(field("factuality"))
	if err != nil {
		return err
	}
	bias, err := NormalizeBias(field("bias"))
	if err != nil {
		return err
	}
	if fact == "" && bias == "" {
		return fmt.Errorf("domain %q has neither factuality nor bias", field("domain"))
	}
	return t.add(field("domain"), entry{publisher: field("publisher"), factuality: fact, bias: bias, tier: TierFor(fact, bias)})
}
