package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Output is the record of one request's output file.
type Output struct {
	RequestID string
	Path      string
	// SHA256 is the hex SHA-256 of the content to write; BaseSHA256 that of
	// the file before the write, "" when it did not exist.
	SHA256     string
	BaseSHA256 string
	Bytes      int64
	ClaimedAt  time.Time
	// WrittenAt is zero while the output is claimed but not confirmed.
	WrittenAt time.Time
}

// Written reports whether the write was confirmed.
func (o Output) Written() bool { return !o.WrittenAt.IsZero() }

// ClaimOutput is step 1 of the output protocol, which guarantees that a
// request's output lands in the work tree at most once, across crashes:
//
//  1. ClaimOutput(id, path, sha, base) in one transaction, with sha the
//     hash of the bytes to write and base the hash of the file now on disk
//     ("" if none). It returns
//     - false, nil: the claim is new; go to 2;
//     - true, nil: the output was already written by an earlier run; do not
//     write, go to 4;
//     - ErrOutputPending: an earlier run claimed and crashed before
//     confirming (step 3), so the write may or may not have landed. Hash the
//     file on disk and call RecoverOutput, which says whether to write;
//     - ErrOutputConflict: the request claimed another path or content.
//  2. Write atomically: a temporary file in the target's directory, fsync,
//     rename over path. The file therefore holds either base or sha, never a
//     mix, whatever the moment of a crash.
//  3. MarkOutputWritten(id, bytes).
//  4. Finish the request.
//
// A crash before 1 commits leaves no claim; between 1 and 3 leaves a pending
// claim that RecoverOutput decides from the disk; after 3 the claim says
// written and no later run writes again.
func (s *Store) ClaimOutput(ctx context.Context, id, path, sha, base string) (alreadyWritten bool, err error) {
	if path == "" || sha == "" {
		return false, fmt.Errorf("store: claim output of %s: path and sha256 are required", id)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		o, err := outputOf(ctx, tx, id)
		if errors.Is(err, ErrNotFound) {
			if _, err := stateOf(ctx, tx, id); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO outputs (request_id, path, sha256, base_sha256, claimed_at)
				VALUES (?, ?, ?, ?, ?)`, id, path, sha, base, ms(s.now()))
			return err
		}
		if err != nil {
			return err
		}
		if o.Path != path || o.SHA256 != sha {
			return fmt.Errorf("%w: claimed %s (sha256 %s), now %s (sha256 %s)",
				ErrOutputConflict, o.Path, short(o.SHA256), path, short(sha))
		}
		if !o.Written() {
			return fmt.Errorf("%w: %s claimed at %s; hash the file and call RecoverOutput",
				ErrOutputPending, o.Path, o.ClaimedAt.Format(time.RFC3339))
		}
		alreadyWritten = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: claim output %s of %s: %w", path, id, err)
	}
	return alreadyWritten, nil
}

// RecoverOutput resolves a pending claim (ClaimOutput returned
// ErrOutputPending) from disk, the hash of the file now at the claimed
// path ("" if absent):
//   - disk == the claimed sha: the write landed; the claim is marked
//     written and mustWrite is false;
//   - disk == the claimed base: the write never landed; mustWrite is true:
//     write (step 2) then MarkOutputWritten;
//   - anything else: the file changed under us; ErrOutputConflict, write
//     nothing and hand the request back.
//
// On a claim already written it returns false, nil.
func (s *Store) RecoverOutput(ctx context.Context, id, disk string) (mustWrite bool, err error) {
	err = s.write(ctx, func(tx *sql.Tx) error {
		o, err := outputOf(ctx, tx, id)
		if err != nil {
			return err
		}
		switch {
		case o.Written():
			return nil
		case disk == o.SHA256:
			_, err := tx.ExecContext(ctx, `UPDATE outputs SET written_at = ? WHERE request_id = ?`, ms(s.now()), id)
			return err
		case disk == o.BaseSHA256:
			mustWrite = true
			return nil
		}
		return fmt.Errorf("%w: %s has sha256 %q, neither the output (%s) nor the file before it (%q); it was changed meanwhile",
			ErrOutputConflict, o.Path, short(disk), short(o.SHA256), short(o.BaseSHA256))
	})
	if err != nil {
		return false, fmt.Errorf("store: recover output of %s: %w", id, err)
	}
	return mustWrite, nil
}

// MarkOutputWritten confirms a claimed output was written (step 3 of
// ClaimOutput's protocol) with its size. Marking again is a no-op; marking
// an unclaimed output wraps ErrNotFound.
func (s *Store) MarkOutputWritten(ctx context.Context, id string, bytes int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE outputs SET written_at = ?, bytes = ?
		WHERE request_id = ? AND written_at IS NULL`, ms(s.now()), bytes, id)
	if err != nil {
		return fmt.Errorf("store: mark output of %s written: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		return nil
	}
	if _, err := s.Output(ctx, id); err != nil {
		return fmt.Errorf("store: mark output of %s written: %w", id, err)
	}
	return nil
}

// Output returns the output record of a request, or an error wrapping
// ErrNotFound when none was claimed.
func (s *Store) Output(ctx context.Context, id string) (Output, error) {
	o, err := scanOutput(s.r.QueryRowContext(ctx, `SELECT `+outputCols+` FROM outputs WHERE request_id = ?`, id))
	if err != nil {
		return Output{}, fmt.Errorf("store: output of %s: %w", id, err)
	}
	return o, nil
}

// PendingOutputs lists the claims never confirmed written, oldest first:
// on start, the daemon resolves each with RecoverOutput.
func (s *Store) PendingOutputs(ctx context.Context) ([]Output, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+outputCols+` FROM outputs
		WHERE written_at IS NULL ORDER BY claimed_at, request_id`)
	if err != nil {
		return nil, fmt.Errorf("store: pending outputs: %w", err)
	}
	defer rows.Close()
	var out []Output
	for rows.Next() {
		o, err := scanOutput(rows)
		if err != nil {
			return nil, fmt.Errorf("store: pending outputs: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: pending outputs: %w", err)
	}
	return out, nil
}

const outputCols = `request_id, path, sha256, base_sha256, bytes, claimed_at, written_at`

func scanOutput(row scanner) (Output, error) {
	var (
		o       Output
		claimed int64
		written sql.NullInt64
	)
	err := row.Scan(&o.RequestID, &o.Path, &o.SHA256, &o.BaseSHA256, &o.Bytes, &claimed, &written)
	if errors.Is(err, sql.ErrNoRows) {
		return Output{}, ErrNotFound
	}
	if err != nil {
		return Output{}, err
	}
	o.ClaimedAt = fromMS(claimed)
	if written.Valid {
		o.WrittenAt = fromMS(written.Int64)
	}
	return o, nil
}

func outputOf(ctx context.Context, tx *sql.Tx, id string) (Output, error) {
	return scanOutput(tx.QueryRowContext(ctx, `SELECT `+outputCols+` FROM outputs WHERE request_id = ?`, id))
}

// short abbreviates a hash for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
