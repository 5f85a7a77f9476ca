package cases

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/llm"
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
	// The model calls, those answered by the response cache and those
	// whose server reported no usage (their cost is unknown, not 0).
	LLMCalls        int    `json:"llm_calls"`
	CachedCalls     int    `json:"cached_calls"`
	UnreportedCalls int    `json:"unreported_calls,omitempty"`
	Events          int    `json:"events"`
	CreatedBy       string `json:"created_by"` // the checker who made the case ("" before checkers were recorded)
	UpdatedBy       string `json:"updated_by"` // the checker who saved it last
	Version         int64  `json:"version"`    // moves on with every save
	// EvidenceChanged is how many of the case's cited pages the last
	// recheck found changed (gone, the quoted passage edited, a correction
	// notice added…) with no revision accepted since; such cases are
	// listed first. RecheckedAt is when that recheck ran (zero: never).
	EvidenceChanged int       `json:"evidence_changed,omitempty"`
	RecheckedAt     time.Time `json:"rechecked_at,omitzero"`
	// EvidenceUnread is how many of its cited pages that recheck could not
	// read (a timeout, a 503): what they say now is not known.
	EvidenceUnread int `json:"evidence_unread,omitempty"`
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
	// By keeps the cases this checker made or saved last (`--mine`,
	// `--by NAME`).
	By string
}

// List returns case summaries: those whose evidence changed
// (EvidenceChanged) first, then newest first.
func (s *Store) List(ctx context.Context, o ListOptions) ([]Summary, error) {
	q := `SELECT id, created_at, updated_at, post_excerpt, post_url, correction_line, sources_used, cost_usd, llm_calls, cached_calls,
	unreported_calls, events, created_by, updated_by, version,
	(SELECT COUNT(*) FROM rechecks r WHERE r.case_id = cases.id AND r.reasons <> '[]' AND NOT r.acknowledged),
	(SELECT COALESCE(MAX(r.checked_at), 0) FROM rechecks r WHERE r.case_id = cases.id),
	(SELECT COUNT(*) FROM rechecks r WHERE r.case_id = cases.id AND r.error <> '')
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
		like := "LIKE" // ASCII case-insensitive on SQLite
		if s.postgres {
			like = "ILIKE"
		}
		q += ` AND (post_excerpt ` + like + ` ? ESCAPE '\' OR correction_line ` + like + ` ? ESCAPE '\')`
		args = append(args, "%"+esc+"%", "%"+esc+"%")
	}
	if o.By != "" {
		q += " AND (created_by = ? OR updated_by = ?)"
		args = append(args, o.By, o.By)
	}
	q += ` ORDER BY EXISTS (SELECT 1 FROM rechecks r WHERE r.case_id = cases.id AND r.reasons <> '[]' AND NOT r.acknowledged) DESC,
	created_at DESC, id DESC`
	switch {
	case o.Limit > 0:
		q += " LIMIT ?"
		args = append(args, o.Limit)
	case o.Offset > 0 && !s.postgres:
		q += " LIMIT -1" // SQLite takes an OFFSET only after a LIMIT
	}
	if o.Offset > 0 {
		q += " OFFSET ?"
		args = append(args, o.Offset)
	}
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	if err != nil {
		return nil, fmt.Errorf("list cases: %w", err)
	}
	defer rows.Close()
	var out []Summary
	for rows.Next() {
		var sm Summary
		var created, updated, rechecked int64
		if err := rows.Scan(&sm.ID, &created, &updated, &sm.PostExcerpt, &sm.PostURL, &sm.CorrectionLine,
			&sm.SourcesUsed, &sm.CostUSD, &sm.LLMCalls, &sm.CachedCalls, &sm.UnreportedCalls, &sm.Events, &sm.CreatedBy, &sm.UpdatedBy, &sm.Version,
			&sm.EvidenceChanged, &rechecked, &sm.EvidenceUnread); err != nil {
			return nil, fmt.Errorf("list cases: %w", err)
		}
		sm.CreatedAt, sm.UpdatedAt = time.UnixMilli(created), time.UnixMilli(updated)
		if rechecked > 0 {
			sm.RecheckedAt = time.UnixMilli(rechecked)
		}
		out = append(out, sm)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list cases: %w", err)
	}
	return out, nil
}

// ListStamp is a token that changes whenever List may answer differently:
// a case saved, made or deleted, a recheck written, a revision accepted
// (the cases' count and the sum of their save times, read from the index
// on updated_at; the trail's last entry; the rechecks' count, times and
// acknowledgements). It reads no case's check, so a list kept open can
// ask for it every few seconds on a large store and read List only when
// it moved. Two saves of the same case within one millisecond are the
// change it can miss.
func (s *Store) ListStamp(ctx context.Context) (string, error) {
	var v [6]any
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM cases), (SELECT COALESCE(SUM(updated_at), 0) FROM cases),
	(SELECT COALESCE(MAX(seq), 0) FROM audit),
	(SELECT COUNT(*) FROM rechecks), (SELECT COALESCE(SUM(checked_at), 0) FROM rechecks),
	(SELECT COALESCE(SUM(CASE WHEN acknowledged THEN 1 ELSE 0 END), 0) FROM rechecks)`).Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5])
	if err != nil {
		return "", fmt.Errorf("list cases: %w", err)
	}
	return fmt.Sprintf("%v", v), nil
}

// Usage is the case's model calls and cost, as the list keeps them.
func (sm Summary) Usage() llm.Usage {
	return llm.Usage{LLMCalls: sm.LLMCalls, CachedCalls: sm.CachedCalls, UnreportedCalls: sm.UnreportedCalls, CostUSD: sm.CostUSD}
}

// Summarize computes a Check's list line, as Save indexes it.
func Summarize(c *pipeline.Check) Summary {
	sm := summarize(c)
	sm.ID, sm.CreatedAt = c.ID, c.CreatedAt
	return sm
}

func summarize(c *pipeline.Check) Summary {
	sm := Summary{
		PostExcerpt:     excerpt(c.Post.Text, 100),
		PostURL:         c.Post.URL,
		CorrectionLine:  excerpt(firstLine(c.Correction.Text), 160),
		CostUSD:         c.Usage.CostUSD,
		LLMCalls:        c.Usage.LLMCalls,
		CachedCalls:     c.Usage.CachedCalls,
		UnreportedCalls: c.Usage.UnreportedCalls,
		Events:          len(c.Events),
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

// EvidenceCell is the list's mark of what the last recheck found.
func (sm Summary) EvidenceCell() string {
	switch {
	case sm.EvidenceChanged > 0:
		return fmt.Sprintf("CHANGED %d", sm.EvidenceChanged)
	case sm.RecheckedAt.IsZero():
		return "-"
	case sm.EvidenceUnread > 0:
		// Not "ok": the pages not read may have changed.
		return fmt.Sprintf("unread %d", sm.EvidenceUnread)
	}
	return "ok"
}

// WriteTable prints summaries for a terminal: ID, what the last recheck of
// its cited pages found ("CHANGED 2" pages, "unread 1" page not read then,
// "ok", "-" never rechecked),
// date, who made it, sources used, cost, post excerpt and the
// correction's first line.
func WriteTable(w io.Writer, list []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEVIDENCE\tDATE\tBY\tSOURCES\tCOST\tPOST\tCORRECTION")
	for _, sm := range list {
		corr := sm.CorrectionLine
		if corr == "" {
			corr = "(no correction yet)"
		}
		by := sm.CreatedBy
		if sm.UpdatedBy != "" && sm.UpdatedBy != by {
			by += "→" + sm.UpdatedBy
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", sm.ID, sm.EvidenceCell(), sm.CreatedAt.Local().Format("2006-01-02 15:04"), cmp.Or(by, "-"),
			sm.SourcesUsed, sm.Usage().CostCell(), excerpt(sm.PostExcerpt, 50), excerpt(corr, 70))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write case list: %w", err)
	}
	return nil
}
