package sources

import (
	"io"
	"slices"
	"strings"
)

// Redacted is what a secret is replaced with.
const Redacted = "[redacted]"

// Redactor replaces every known secret (the API keys of the configuration,
// the password of a URL's userinfo, the credentials a request carried) with
// Redacted. It is the one redaction muse has: the case store, the response
// cache, exports, batch results and everything printed on stdout and stderr
// go through it. The zero value and nil redact nothing. Safe for
// concurrent use.
type Redactor struct{ r *strings.Replacer }

// minSecret is the shortest string taken for a secret: shorter ones are too
// common to be keys, and replacing them would mangle text.
const minSecret = 6

// NewRedactor redacts secrets; blank ones and those under 6 bytes are
// ignored. Longer secrets are replaced first, so that a key inside another
// is not left half-replaced.
func NewRedactor(secrets ...string) *Redactor {
	var keep []string
	for _, s := range secrets {
		if s = strings.TrimSpace(s); len(s) >= minSecret && !slices.Contains(keep, s) {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return &Redactor{}
	}
	slices.SortStableFunc(keep, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(keep))
	for _, s := range keep {
		pairs = append(pairs, s, Redacted)
	}
	return &Redactor{strings.NewReplacer(pairs...)}
}

// String is s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// Bytes is b with every secret replaced (b itself when there is none).
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || r.r == nil {
		return b
	}
	return []byte(r.r.Replace(string(b)))
}

// Writer redacts each Write to w. A secret split across two writes is not
// caught: muse writes a line, a rendering or a JSON value at a time.
func (r *Redactor) Writer(w io.Writer) io.Writer {
	if r == nil || r.r == nil {
		return w
	}
	return redactingWriter{r, w}
}

type redactingWriter struct {
	r *Redactor
	w io.Writer
}

func (rw redactingWriter) Write(p []byte) (int, error) {
	if _, err := rw.r.r.WriteString(rw.w, string(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
