package store

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func userVersion(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func rawDB(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db := sql.OpenDB(connector{dsn: filepath.Join(dir, FileName)})
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenMigratesAndReopens(t *testing.T) {
	dir := t.TempDir()
	clk := newClock(t0)
	s := openAt(t, dir, clk)
	id, err := s.Create(ctx(t), "sess", "/p", sampleRequest())
	if err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := s.w.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	var fk int
	if err := s.r.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys on readers = %d, %v; want 1", fk, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for i := range 2 { // re-open twice: no migration re-applied, data kept
		s := openAt(t, dir, clk)
		if got := userVersion(t, s.w); got != SchemaVersion() {
			t.Errorf("reopen %d: user_version = %d, want %d", i, got, SchemaVersion())
		}
		if _, err := s.Get(ctx(t), id); err != nil {
			t.Errorf("reopen %d: %v", i, err)
		}
		s.Close()
	}
}

func TestMigrateSteps(t *testing.T) {
	steps := []string{
		`CREATE TABLE a (x INTEGER) STRICT;`,
		`ALTER TABLE a ADD COLUMN y TEXT NOT NULL DEFAULT 'v2';`,
		`CREATE TABLE b (z INTEGER) STRICT; INSERT INTO b VALUES (3);`,
	}
	tests := []struct {
		name  string
		from  int // steps applied before
		upTo  int // steps known by the code
		want  int
		errIs error
	}{
		{name: "from empty", from: 0, upTo: 3, want: 3},
		{name: "from version 1", from: 1, upTo: 3, want: 3},
		{name: "already current", from: 3, upTo: 3, want: 3},
		{name: "newer than code", from: 3, upTo: 2, want: 3, errIs: ErrNewerSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			db := rawDB(t, dir)
			path := filepath.Join(dir, FileName)
			if err := migrateTo(ctx(t), db, path, steps[:tt.from]); err != nil {
				t.Fatal(err)
			}
			err := migrateTo(ctx(t), db, path, steps[:tt.upTo])
			if !errors.Is(err, tt.errIs) {
				t.Fatalf("migrate: err = %v, want %v", err, tt.errIs)
			}
			if got := userVersion(t, db); got != tt.want {
				t.Errorf("user_version = %d, want %d", got, tt.want)
			}
			if tt.errIs == nil {
				var y string
				var z int
				if err := db.QueryRow(`SELECT (SELECT dflt_value FROM pragma_table_info('a') WHERE name = 'y'), (SELECT count(*) FROM b)`).Scan(&y, &z); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]any{"'v2'", 1}, []any{y, z}); diff != "" {
					t.Errorf("schema (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestMigrateFailedStepRollsBack(t *testing.T) {
	dir := t.TempDir()
	db := rawDB(t, dir)
	path := filepath.Join(dir, FileName)
	steps := []string{`CREATE TABLE a (x INTEGER);`, `CREATE TABLE b (y INTEGER); SELECT nope FROM nowhere;`}
	if err := migrateTo(ctx(t), db, path, steps); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("migrate: err = %v, want a failure naming version 2", err)
	}
	if got := userVersion(t, db); got != 1 {
		t.Errorf("user_version = %d, want 1", got)
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'b'`).Scan(&n)
	if n != 0 {
		t.Errorf("table b exists after a failed step")
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, newClock(t0))
	newer := SchemaVersion() + 7
	if _, err := s.w.Exec(fmt.Sprintf("PRAGMA user_version = %d", newer)); err != nil {
		t.Fatal(err)
	}
	s.Close()

	_, err := Open(dir, nil)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open: err = %v, want ErrNewerSchema", err)
	}
	for _, want := range []string{fmt.Sprintf("version %d", newer), fmt.Sprintf("version %d", SchemaVersion()), FileName} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}
