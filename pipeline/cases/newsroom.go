package cases

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/musecheck/muse/sources/pgdb"
)

// A newsroom's identity and roles, on PostgreSQL: the checker is the
// database login, and what a login may do is the database's to enforce
// (row-level security and grants), not muse's. See roles.sql.

// Roles a login may be granted, least first.
var Roles = []string{"checker", "editor", "admin"}

// roleName is the PostgreSQL group role of one of Roles.
func roleName(role string) string { return "muse_" + role }

//go:embed roles.sql
var rolesSQL string

// hasRoles is SQL for "this database's newsroom has been set up":
// the roles are the cluster's, the policies this database's.
const hasRoles = `to_regrole('muse_checker') IS NOT NULL
	AND EXISTS (SELECT 1 FROM pg_policies WHERE tablename = 'cases' AND policyname = 'muse_read')`

// ErrNotYours is a checker's save or delete of a case that the newsroom's
// roles do not allow them.
var ErrNotYours = errors.New("not allowed by your newsroom role")

// InitNewsroom creates the newsroom's roles and rules in the database at
// url (every store's tables must exist: open each store first). It is run
// by the database's owner, and again after an upgrade that adds tables.
func InitNewsroom(ctx context.Context, url string) error {
	pool, err := pgdb.Open(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	// One newsroom set up at a time per cluster: the roles are the cluster's.
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('muse/newsroom'))"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, rolesSQL); err != nil {
		return fmt.Errorf("set up the newsroom's roles: %w (run it as the database's owner, with CREATEROLE)", err)
	}
	return tx.Commit(ctx)
}

// Grant gives login one of Roles in place of any other muse role it had.
// The login must exist (CREATE ROLE … LOGIN PASSWORD …).
func Grant(ctx context.Context, url, login, role string) error {
	if !slices.Contains(Roles, role) {
		return fmt.Errorf("grant: %q is not a role; the roles are %s", role, strings.Join(Roles, ", "))
	}
	return withLogin(ctx, url, login, func(tx pgx.Tx, ident string) error {
		for _, r := range Roles {
			if r != role {
				if _, err := tx.Exec(ctx, "REVOKE "+roleName(r)+" FROM "+ident); err != nil {
					return err
				}
			}
		}
		_, err := tx.Exec(ctx, "GRANT "+roleName(role)+" TO "+ident)
		return err
	})
}

// Revoke takes every muse role from login: it can no longer read or
// write the newsroom's cases.
func Revoke(ctx context.Context, url, login string) error {
	return withLogin(ctx, url, login, func(tx pgx.Tx, ident string) error {
		for _, r := range Roles {
			if _, err := tx.Exec(ctx, "REVOKE "+roleName(r)+" FROM "+ident); err != nil {
				return err
			}
		}
		return nil
	})
}

func withLogin(ctx context.Context, url, login string, f func(tx pgx.Tx, ident string) error) error {
	pool, err := pgdb.Open(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	var exists, ready bool
	if err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1 AND rolcanlogin), "+hasRoles,
		login).Scan(&exists, &ready); err != nil {
		return err
	}
	switch {
	case !ready:
		return errors.New("the newsroom has no roles yet: its database owner runs `muse newsroom init` first")
	case !exists:
		return fmt.Errorf("no login %q on this database's cluster: create it first (CREATE ROLE %s LOGIN PASSWORD '…')",
			login, pgx.Identifier{login}.Sanitize())
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := f(tx, pgx.Identifier{login}.Sanitize()); err != nil {
		return fmt.Errorf("%w (an admin of the newsroom, or the database's owner, grants roles)", err)
	}
	return tx.Commit(ctx)
}

// Member is a login with its muse role.
type Member struct {
	Login string `json:"login"`
	Role  string `json:"role"`
}

// Members lists the logins with a muse role, each with its highest one.
func Members(ctx context.Context, url string) ([]Member, error) {
	pool, err := pgdb.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	return members(ctx, pool)
}

func members(ctx context.Context, pool *pgxpool.Pool) ([]Member, error) {
	rows, err := pool.Query(ctx, `
SELECT m.rolname, g.rolname FROM pg_auth_members a
JOIN pg_roles g ON g.oid = a.roleid JOIN pg_roles m ON m.oid = a.member
WHERE g.rolname IN ('muse_checker', 'muse_editor', 'muse_admin') AND m.rolcanlogin
ORDER BY m.rolname`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Member
	for rows.Next() {
		var login, group string
		if err := rows.Scan(&login, &group); err != nil {
			return nil, err
		}
		role := strings.TrimPrefix(group, "muse_")
		if n := len(out); n > 0 && out[n-1].Login == login {
			if slices.Index(Roles, role) > slices.Index(Roles, out[n-1].Role) {
				out[n-1].Role = role
			}
			continue
		}
		out = append(out, Member{Login: login, Role: role})
	}
	return out, rows.Err()
}

// identity is who the store's login is in a newsroom with roles: the
// login, whether the newsroom has roles, and whether the login may change
// anyone's case. A superuser or the tables' owner is an editor (the
// database does not hold them to the policies).
func (s *Store) identity(ctx context.Context, asked string, given bool) error {
	var login string
	var ready bool
	err := s.pool.QueryRow(ctx, "SELECT session_user, "+hasRoles).Scan(&login, &ready)
	if err != nil || !ready {
		return err
	}
	if given && asked != "" && asked != login {
		return fmt.Errorf("MUSE_USER (user) is %q, but this newsroom knows you by your database login, %q: unset MUSE_USER", asked, login)
	}
	s.user, s.roles = login, true
	return s.pool.QueryRow(ctx, `SELECT pg_has_role(session_user, 'muse_editor', 'MEMBER')
	OR (SELECT rolsuper FROM pg_roles WHERE rolname = session_user)
	OR (SELECT tableowner FROM pg_tables WHERE tablename = 'cases' AND schemaname = current_schema()) = session_user`).Scan(&s.editor)
}

// mayChange says why the store's login may not change the case, when so.
func (s *Store) mayChange(ctx context.Context, db execer, id string) error {
	if !s.roles || s.editor {
		return nil
	}
	var owner string
	err := db.QueryRowContext(ctx, s.q("SELECT created_by FROM cases WHERE id = ?"), id).Scan(&owner)
	if err != nil || owner == s.user {
		return nil // not there yet (theirs to create), or theirs
	}
	return fmt.Errorf("%w: case %s was created by %s, and a checker changes only their own cases (an editor can: muse newsroom grant %s editor)",
		ErrNotYours, id, describeOwner(owner), s.user)
}

func describeOwner(owner string) string {
	if owner == "" {
		return "no one named (before the newsroom had roles)"
	}
	return owner
}
