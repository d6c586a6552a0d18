package store

import (
	"context"
	"database/sql"
	"fmt"
)

// The schema. Each entry of migrations is applied once, in order, in its
// own transaction that also sets PRAGMA user_version to the entry's
// 1-based index; user_version is thus the number of migrations applied.
// Never edit an applied entry: append a new one.
//
// requests — one row per delegation request (one bout of a lot):
//
//	id            "d" + time-sortable base-32 id (see newID)
//	session_id    the Claude Code session that asked
//	project       the project directory
//	request       the wire.Request, JSON
//	state         a wire state: en_file, en_cours or a terminal one
//	answer        the final wire.Answer, JSON; NULL exactly while not terminal
//	reason        why the state was set (besoin_claude/perdue reason, …)
//	attempts      number of tries recorded so far
//	created_at, updated_at               Unix ms
//	progress_at, progress_step           last sign of life, for the watchdog
//
// tries — one row per try of an engine on a request, key (request_id, n):
//
//	engine, model, input_tokens, output_tokens, cost_usd, duration_ms,
//	ok            1 when the try's output passed its controls
//	controls      JSON array of wire.Control
//	error_kind, error_text               why the try failed, if it did
//	started_at, ended_at                 Unix ms
//
// outputs — the write-once record of an output file, one per request:
//
//	request_id (primary key), path,
//	sha256        hex SHA-256 of the content to write
//	base_sha256   hex SHA-256 of the file before the write, '' if absent
//	bytes         size written, set by MarkOutputWritten
//	claimed_at    when the write was claimed (Unix ms)
//	written_at    when it was confirmed written; NULL while only claimed
var migrations = []string{
	// 1: initial schema.
	`
CREATE TABLE requests (
	id            TEXT    PRIMARY KEY,
	session_id    TEXT    NOT NULL,
	project       TEXT    NOT NULL,
	request       TEXT    NOT NULL,
	state         TEXT    NOT NULL CHECK (state IN ('en_file','en_cours','valide','termine','echec_controle','besoin_claude','annule','perdue')),
	answer        TEXT,
	reason        TEXT    NOT NULL DEFAULT '',
	attempts      INTEGER NOT NULL DEFAULT 0,
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL,
	progress_at   INTEGER NOT NULL,
	progress_step TEXT    NOT NULL DEFAULT '',
	CHECK ((state IN ('en_file','en_cours')) = (answer IS NULL))
) STRICT;
CREATE INDEX requests_state ON requests (state, created_at);

CREATE TABLE tries (
	request_id    TEXT    NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
	n             INTEGER NOT NULL CHECK (n > 0),
	engine        TEXT    NOT NULL,
	model         TEXT    NOT NULL,
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	cost_usd      REAL    NOT NULL DEFAULT 0,
	duration_ms   INTEGER NOT NULL DEFAULT 0,
	ok            INTEGER NOT NULL DEFAULT 0 CHECK (ok IN (0, 1)),
	controls      TEXT    NOT NULL DEFAULT '[]',
	error_kind    TEXT    NOT NULL DEFAULT '',
	error_text    TEXT    NOT NULL DEFAULT '',
	started_at    INTEGER NOT NULL,
	ended_at      INTEGER NOT NULL,
	PRIMARY KEY (request_id, n)
) STRICT;
CREATE INDEX tries_spend ON tries (engine, started_at);
CREATE INDEX tries_model ON tries (engine, model);

CREATE TABLE outputs (
	request_id    TEXT    PRIMARY KEY REFERENCES requests (id) ON DELETE CASCADE,
	path          TEXT    NOT NULL,
	sha256        TEXT    NOT NULL,
	base_sha256   TEXT    NOT NULL DEFAULT '',
	bytes         INTEGER NOT NULL DEFAULT 0,
	claimed_at    INTEGER NOT NULL,
	written_at    INTEGER
) STRICT;
`,
}

// SchemaVersion returns the schema version this code writes and reads.
func SchemaVersion() int { return len(migrations) }

// migrate brings the database at path up to SchemaVersion. Each step runs
// in an IMMEDIATE transaction that re-reads user_version first, so two
// processes opening the same new file never apply a step twice.
func migrate(ctx context.Context, db *sql.DB, path string) error {
	return migrateTo(ctx, db, path, migrations)
}

func migrateTo(ctx context.Context, db *sql.DB, path string, steps []string) error {
	for {
		done, err := migrateStep(ctx, db, path, steps)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// migrateStep applies the next pending step, reporting done when there is
// none.
func migrateStep(ctx context.Context, db *sql.DB, path string, steps []string) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: migrate %s: begin: %w", path, err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, fmt.Errorf("store: migrate %s: read schema version: %w", path, err)
	}
	switch {
	case v > len(steps):
		return false, fmt.Errorf("%w: %s has schema version %d, this miam knows up to version %d; upgrade miam or move the file aside",
			ErrNewerSchema, path, v, len(steps))
	case v == len(steps):
		return true, nil
	}
	if _, err := tx.ExecContext(ctx, steps[v]); err != nil {
		return false, fmt.Errorf("store: migrate %s to version %d: %w", path, v+1, err)
	}
	// PRAGMA takes no bound parameters; v+1 is an int we computed.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
		return false, fmt.Errorf("store: migrate %s: set schema version %d: %w", path, v+1, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: migrate %s to version %d: commit: %w", path, v+1, err)
	}
	return false, nil
}
