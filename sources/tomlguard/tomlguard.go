// Package tomlguard bounds a TOML file before it is parsed: its size, and
// how deeply its arrays and inline tables nest. The TOML decoder muse uses
// takes time and memory that grow with the square of the nesting (78 KiB
// of nested inline tables took 4 GB and a minute), and configuration and
// the newsroom's shared overrides file are read on every check.
package tomlguard

import (
	"fmt"
	"io"
	"os"
)

// MaxDepth is the deepest nesting of arrays and inline tables allowed;
// muse's files nest two or three levels.
const MaxDepth = 16

// ReadFile reads path, refusing a file over max bytes without reading it
// all, and checks its nesting (Check).
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("the file is over %d KiB, more than muse reads; it is not a file muse wrote", max>>10)
	}
	return b, Check(b)
}

// Check refuses TOML whose arrays and inline tables nest deeper than
// MaxDepth, counting brackets and braces outside strings and comments. It
// does not otherwise judge the TOML: the decoder does.
func Check(b []byte) error {
	depth, line := 0, 1
	lineStart := true // at the start of a line, "[" opens a table header
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\n':
			line++
			lineStart = true
			continue
		case c == ' ' || c == '\t' || c == '\r':
			continue
		case c == '#':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			i--
			continue
		case c == '"' || c == '\'':
			end, n := skipString(b, i)
			line += n
			i = end
		case lineStart && depth == 0 && c == '[':
			// A table header: "[a]" or "[[a]]", up to its line's end.
			for i < len(b) && b[i] != '\n' {
				i++
			}
			i--
		case c == '[' || c == '{':
			depth++
			if depth > MaxDepth {
				return fmt.Errorf("line %d: arrays or inline tables nested more than %d deep; muse's settings nest two or three", line, MaxDepth)
			}
		case c == ']' || c == '}':
			if depth > 0 {
				depth--
			}
		}
		lineStart = false
	}
	return nil
}

// skipString returns the index of the last byte of the string starting at
// b[i] (basic, literal, or either multi-line form) and how many line
// breaks it holds. An unterminated string runs to the end.
func skipString(b []byte, i int) (end, lines int) {
	q := b[i]
	if i+2 < len(b) && b[i+1] == q && b[i+2] == q { // """ or '''
		for j := i + 3; j < len(b); j++ {
			switch {
			case b[j] == '\n':
				lines++
			case q == '"' && b[j] == '\\':
				j++
			case b[j] == q && j+2 < len(b) && b[j+1] == q && b[j+2] == q:
				for j+3 < len(b) && b[j+3] == q { // up to two quotes may close it
					j++
				}
				return j + 2, lines
			}
		}
		return len(b) - 1, lines
	}
	for j := i + 1; j < len(b); j++ {
		switch {
		case b[j] == '\n':
			return j - 1, lines // a single-line string ends at its line
		case q == '"' && b[j] == '\\':
			j++
		case b[j] == q:
			return j, lines
		}
	}
	return len(b) - 1, lines
}
