package cases

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Change is a case saved or deleted by another Store (another checker, or
// another muse of the same one).
type Change struct {
	ID      string
	Version int64 // the version the save made; 0 for a deletion
	By      string
	At      time.Time
	Deleted bool
}

func (c Change) String() string {
	if c.Deleted {
		return fmt.Sprintf("case %s was deleted by %s at %s", c.ID, cmp.Or(c.By, "someone"), clock(c.At))
	}
	return fmt.Sprintf("case %s was changed by %s at %s (version %d)", c.ID, cmp.Or(c.By, "someone"), clock(c.At), c.Version)
}

// notifyChannel is the PostgreSQL channel a save or delete notifies.
const notifyChannel = "muse_cases"

// payload is a Change as notified, with the token of the Store that made
// it so that its own watch skips it.
type payload struct {
	ID      string `json:"id"`
	Version int64  `json:"version"`
	By      string `json:"by"`
	At      int64  `json:"at"` // Unix milliseconds
	Deleted bool   `json:"deleted,omitempty"`
	Writer  string `json:"writer"`
}

// maxNotifyBy is the most of a checker's name a notification carries.
const maxNotifyBy = 1024

// notify tells PostgreSQL listeners about a change when tx commits (NOTIFY
// is transactional); SQLite watchers poll instead.
func (s *Store) notify(ctx context.Context, tx execer, c Change) error {
	if !s.postgres {
		return nil
	}
	// PostgreSQL refuses a payload of 8000 bytes or more, and with it the
	// save: the name is cut to fit (the case and its trail keep it whole).
	by := c.By
	if len(by) > maxNotifyBy {
		by = strings.ToValidUTF8(by[:maxNotifyBy], "")
	}
	b, err := json.Marshal(payload{ID: c.ID, Version: c.Version, By: by, At: c.At.UnixMilli(), Deleted: c.Deleted, Writer: s.writer})
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_notify($1, $2)", notifyChannel, string(b)); err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	return nil
}

// Watch reports the cases that other Stores save or delete from now on
// until ctx ends, when the channel closes. On PostgreSQL it LISTENs on a
// connection of its own (pgx's WaitForNotification), reconnecting after a
// lost connection; on SQLite it reads every two seconds the cases saved
// since its last look and the deletions the audit trail has gained, in the
// order they happened.
func (s *Store) Watch(ctx context.Context) (<-chan Change, error) {
	out := make(chan Change, 16)
	if s.postgres {
		conn, err := s.listen(ctx)
		if err != nil {
			return nil, err
		}
		go s.watchPostgres(ctx, conn, out)
		return out, nil
	}
	var seq int64 // the trail's last entry: deletions after it are reported
	if err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), 0) FROM audit").Scan(&seq); err != nil {
		return nil, fmt.Errorf("watch cases %s: %w", s.path, err)
	}
	go s.watchSQLite(ctx, s.now().UnixMilli(), seq, out)
	return out, nil
}

func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("watch cases %s: %w", s.path, err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("watch cases %s: %w", s.path, err)
	}
	return conn, nil
}

func (s *Store) watchPostgres(ctx context.Context, conn *pgx.Conn, out chan<- Change) {
	defer close(out)
	defer func() {
		if conn != nil {
			conn.Close(context.WithoutCancel(ctx))
		}
	}()
	for {
		if conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.poll):
			}
			conn, _ = s.listen(ctx)
			continue
		}
		n, err := conn.WaitForNotification(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil { // the connection is lost: listen again on a new one
			conn.Close(context.WithoutCancel(ctx))
			conn = nil
			continue
		}
		var p payload
		if json.Unmarshal([]byte(n.Payload), &p) != nil || p.Writer == s.writer {
			continue
		}
		select {
		case out <- Change{ID: p.ID, Version: p.Version, By: p.By, At: time.UnixMilli(p.At), Deleted: p.Deleted}:
		case <-ctx.Done():
			return
		}
	}
}

func (s *Store) watchSQLite(ctx context.Context, since, afterSeq int64, out chan<- Change) {
	defer close(out)
	seen := map[string]int64{} // versions reported, for saves in the millisecond read twice
	t := time.NewTicker(s.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		changes, last, err := s.changedSince(ctx, since)
		if err != nil {
			continue // a busy or vanished file: look again next time
		}
		deletions, lastSeq, err := s.deletedAfter(ctx, afterSeq)
		if err != nil {
			continue
		}
		since, afterSeq = max(since, last), lastSeq
		changes = append(changes, deletions...)
		slices.SortStableFunc(changes, func(a, b Change) int { return a.At.Compare(b.At) })
		for _, c := range changes {
			if c.Deleted {
				delete(seen, c.ID) // a case made again under its ID is news
			} else if seen[c.ID] >= c.Version {
				continue
			} else {
				seen[c.ID] = c.Version
			}
			select {
			case out <- c:
			case <-ctx.Done():
				return
			}
		}
	}
}

// changedSince is every case other Stores saved at or after since (Unix
// milliseconds), with the newest updated_at read.
func (s *Store) changedSince(ctx context.Context, since int64) ([]Change, int64, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, version, updated_by, updated_at FROM cases
WHERE updated_at >= ? AND writer <> ? ORDER BY updated_at`), since, s.writer)
	if err != nil {
		return nil, since, err
	}
	defer rows.Close()
	var out []Change
	last := since
	for rows.Next() {
		var c Change
		var at int64
		if err := rows.Scan(&c.ID, &c.Version, &c.By, &at); err != nil {
			return nil, since, err
		}
		c.At, last = time.UnixMilli(at), max(last, at)
		out = append(out, c)
	}
	return out, last, rows.Err()
}

// deletedAfter is every deletion the audit trail has gained after the
// entry afterSeq, but this Store's own, with the last entry read.
func (s *Store) deletedAfter(ctx context.Context, afterSeq int64) ([]Change, int64, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT seq, case_id, actor, at FROM audit WHERE seq > ? AND action = ? ORDER BY seq",
		afterSeq, ActionDeleted)
	if err != nil {
		return nil, afterSeq, err
	}
	defer rows.Close()
	var out []Change
	last := afterSeq
	for rows.Next() {
		var seq, at int64
		c := Change{Deleted: true}
		if err := rows.Scan(&seq, &c.ID, &c.By, &at); err != nil {
			return nil, afterSeq, err
		}
		last, c.At = seq, time.UnixMilli(at)
		s.mu.Lock()
		own := s.deleted[seq]
		s.mu.Unlock()
		if !own {
			out = append(out, c)
		}
	}
	return out, last, rows.Err()
}
