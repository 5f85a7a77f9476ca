package sqlitedb

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"regexp"

	"github.com/pressly/goose/v3"
)

var componentName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,40}$`)

// Migrate applies the migrations in fsys (goose SQL files, 00001_name.sql
// with -- +goose Up / Down sections) that component has not applied to db
// yet, recording them in its own table muse_<component>_migrations — the
// same files and tables as sources/pgdb on PostgreSQL. Two processes that
// start together may race for the first migration; the loser sees the
// winner's version once the busy lock is released, so Migrate tries again
// once before giving up.
func Migrate(ctx context.Context, db *sql.DB, component string, fsys fs.FS) error {
	if !componentName.MatchString(component) {
		return fmt.Errorf("migrate: bad component name %q", component)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys,
		goose.WithTableName("muse_"+component+"_migrations"),
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("migrate %s: %w", component, err)
	}
	if _, err = p.Up(ctx); err != nil {
		if _, err = p.Up(ctx); err != nil {
			return fmt.Errorf("migrate %s: %w", component, err)
		}
	}
	return nil
}
