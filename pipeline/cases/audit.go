package cases

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/musecheck/muse/pipeline"
)

// The actions of the audit trail.
const (
	ActionCreated  = "created"  // the case's first save
	ActionChanged  = "changed"  // a Store's first save of a case it did not create (reopened, say)
	ActionRan      = "ran"      // a check or a rerun of stages was started
	ActionEdited   = "edited"   // a person saved an edit of the correction
	ActionExported = "exported" // the case was exported (the format in the detail)
	ActionOpened   = "opened"   // the case was opened in the app (muse cases open)
	ActionDeleted  = "deleted"
	ActionConflict = "conflict" // a save based on a stale version; both versions kept
	ActionRevised  = "revised"  // a recheck's revision draft was accepted (muse cases recheck --accept, a in the app's versions)
)

// Entry is one line of a case's audit trail: who did what, when.
type Entry struct {
	Seq    int64     `json:"seq"`
	CaseID string    `json:"case_id"`
	Time   time.Time `json:"time"`
	User   string    `json:"user"`
	Action string    `json:"action"`
	Detail string    `json:"detail,omitempty"`
}

// execer is a transaction or the database.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) audit(ctx context.Context, db execer, id, action, detail string) error {
	_, err := s.auditEntry(ctx, db, id, action, detail)
	return err
}

// auditEntry adds the entry and returns the insert's result (on SQLite,
// its LastInsertId is the entry's seq).
func (s *Store) auditEntry(ctx context.Context, db execer, id, action, detail string) (sql.Result, error) {
	res, err := db.ExecContext(ctx, s.q("INSERT INTO audit (case_id, at, actor, action, detail) VALUES (?, ?, ?, ?, ?)"),
		id, s.now().UnixMilli(), s.user, action, s.clean(detail))
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return res, nil
}

// Audit adds an entry to the case's trail in this Store's user's name:
// callers record what the store cannot see for itself (a check run, an
// export).
func (s *Store) Audit(ctx context.Context, id, action, detail string) error {
	if id == "" || action == "" {
		return errors.New("audit: case ID and action are required")
	}
	if err := s.audit(ctx, s.db, id, action, detail); err != nil {
		return fmt.Errorf("case %s: %w", id, err)
	}
	return nil
}

// lastDeletion is who deleted the case last and when, from the trail.
func (s *Store) lastDeletion(ctx context.Context, db execer, id string) (string, time.Time) {
	var by string
	var at int64
	err := db.QueryRowContext(ctx, s.q("SELECT actor, at FROM audit WHERE case_id = ? AND action = ? ORDER BY seq DESC LIMIT 1"),
		id, ActionDeleted).Scan(&by, &at)
	if err != nil {
		return "", time.Time{}
	}
	return by, time.UnixMilli(at)
}

// Trail returns the case's audit trail, oldest first; it outlives the
// case, so a deleted case still says who deleted it.
func (s *Store) Trail(ctx context.Context, id string) ([]Entry, error) {
	rows, err := s.db.QueryContext(ctx, s.q("SELECT seq, case_id, at, actor, action, detail FROM audit WHERE case_id = ? ORDER BY seq"), id)
	if err != nil {
		return nil, fmt.Errorf("read the trail of case %s: %w", id, err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var at int64
		if err := rows.Scan(&e.Seq, &e.CaseID, &at, &e.User, &e.Action, &e.Detail); err != nil {
			return nil, fmt.Errorf("read the trail of case %s: %w", id, err)
		}
		e.Time = time.UnixMilli(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the trail of case %s: %w", id, err)
	}
	return out, nil
}

// WriteTrail prints a trail for a terminal: time, user, action, detail.
func WriteTrail(w io.Writer, trail []Entry) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tUSER\tACTION\tDETAIL")
	for _, e := range trail {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Time.Local().Format("2006-01-02 15:04:05"), cmp.Or(e.User, "someone"), e.Action, e.Detail)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write the trail: %w", err)
	}
	return nil
}

// Version is a state of a case that a conflicting save replaced, kept.
type Version struct {
	Version   int64     `json:"version"`
	UpdatedBy string    `json:"updated_by"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Versions lists the kept versions of the case, oldest first.
func (s *Store) Versions(ctx context.Context, id string) ([]Version, error) {
	rows, err := s.db.QueryContext(ctx, s.q("SELECT version, updated_by, updated_at FROM case_versions WHERE case_id = ? ORDER BY version"), id)
	if err != nil {
		return nil, fmt.Errorf("read the versions of case %s: %w", id, err)
	}
	defer rows.Close()
	var out []Version
	for rows.Next() {
		var v Version
		var at int64
		if err := rows.Scan(&v.Version, &v.UpdatedBy, &at); err != nil {
			return nil, fmt.Errorf("read the versions of case %s: %w", id, err)
		}
		v.UpdatedAt = time.UnixMilli(at)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the versions of case %s: %w", id, err)
	}
	return out, nil
}

// GetVersion returns the case's Check as it was at version v: a kept
// version, or the current one.
func (s *Store) GetVersion(ctx context.Context, id string, v int64) (*pipeline.Check, error) {
	var raw []byte
	err := s.db.QueryRowContext(ctx, s.q(`SELECT check_json FROM case_versions WHERE case_id = ? AND version = ?
UNION ALL SELECT check_json FROM cases WHERE id = ? AND version = ?`), id, v, id, v).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read version %d of case %s: %w", v, id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read version %d of case %s: %w", v, id, err)
	}
	c := &pipeline.Check{}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, fmt.Errorf("read version %d of case %s: decode check: %w", v, id, err)
	}
	return c, nil
}
