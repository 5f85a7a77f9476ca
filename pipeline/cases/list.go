package cases

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/musecheck/muse/pipeline"
)

// Summary is one line of the case list.
type Summary struct {
	ID             string    `json:"id"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	PostExcerpt    string    `json:"post_excerpt"`
	PostURL        string    `json:"post_url,omitempty"`
	CorrectionLine string    `json:"correction_line"` // first line of the correction; empty before one is written
	SourcesUsed    int       `json:"sources_used"`
	CostUSD        float64   `json:"cost_usd"`
	Events         int       `json:"events"`
}

// ListOptions filters and pages the case list. The zero value lists every
// case, newest first.
type ListOptions struct {
	// Limit caps the number of cases; 0 means no cap.
	Limit int
	// Offset skips that many cases (newest first) before listing.
	Offset int
	// Since and Before bound CreatedAt; zero means unbounded.
	Since, Before time.Time
	// Contains keeps cases whose post excerpt or correction line contains
	// it (case-insensitive for ASCII).
	Contains string
}

// List returns case summaries, newest first.
func (s *Store) List(ctx context.Context, o ListOptions) ([]Summary, error) {
	q := `SELECT id, created_at, updated_at, post_excerpt, post_url, correction_line, sources_used, cost_usd, events
FROM cases WHERE 1=1`
	var args []any
	if !o.Since.IsZero() {
		q += " AND created_at >= ?"
		args = append(args, o.Since.UnixMilli())
	}
	if !o.Before.IsZero() {
		q += " AND created_at < ?"
		args = append(args, o.Before.UnixMilli())
	}
	if o.Contains != "" {
		esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(o.Contains)
		q += ` AND (post_excerpt LIKE ? ESCAPE '\' OR correction_line LIKE ? ESCAPE '\')`
		args = append(args, "%"+esc+"%", "%"+esc+"%")
	}
	q += " ORDER BY created_at DESC, id DESC"
	if o.Limit > 0 || o.Offset > 0 {
		lim := o.Limit
		if lim <= 0 {
			lim = -1
		}
		q += " LIMIT ? OFFSET ?"
		args = append(args, lim, max(o.Offset, 0))
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list cases: %w", err)
	}
	defer rows.Close()
	var out []Summary
	for rows.Next() {
		var sm Summary
		var created, updated int64
		if err := rows.Scan(&sm.ID, &created, &updated, &sm.PostExcerpt, &sm.PostURL, &sm.CorrectionLine,
			&sm.SourcesUsed, &sm.CostUSD, &sm.Events); err != nil {
			return nil, fmt.Errorf("list cases: %w", err)
		}
		sm.CreatedAt, sm.UpdatedAt = time.UnixMilli(created), time.UnixMilli(updated)
		out = append(out, sm)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list cases: %w", err)
	}
	return out, nil
}

// Summarize computes a Check's list line, as Save indexes it.
func Summarize(c *pipeline.Check) Summary {
	sm := summarize(c)
	sm.ID, sm.CreatedAt = c.ID, c.CreatedAt
	return sm
}

func summarize(c *pipeline.Check) Summary {
	sm := Summary{
		PostExcerpt:    excerpt(c.Post.Text, 100),
		PostURL:        c.Post.URL,
		CorrectionLine: excerpt(firstLine(c.Correction.Text), 160),
		CostUSD:        c.Usage.CostUSD,
		Events:         len(c.Events),
	}
	if sm.PostExcerpt == "" {
		sm.PostExcerpt = c.Post.URL
	}
	for _, src := range c.Sources {
		if src.Status == pipeline.StatusUsed || src.Status == pipeline.StatusBoosted {
			sm.SourcesUsed++
		}
	}
	return sm
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

// excerpt collapses whitespace and cuts at a word boundary within n runes.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// WriteTable prints summaries for a terminal: ID, date, sources used,
// cost, post excerpt and the correction's first line.
func WriteTable(w io.Writer, list []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tDATE\tSOURCES\tCOST\tPOST\tCORRECTION")
	for _, sm := range list {
		corr := sm.CorrectionLine
		if corr == "" {
			corr = "(no correction yet)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t$%.4f\t%s\t%s\n", sm.ID, sm.CreatedAt.Local().Format("2006-01-02 15:04"),
			sm.SourcesUsed, sm.CostUSD, excerpt(sm.PostExcerpt, 50), excerpt(corr, 70))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write case list: %w", err)
	}
	return nil
}
