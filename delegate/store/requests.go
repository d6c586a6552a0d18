package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"miam/delegate/wire"
)

// Record is one stored request.
type Record struct {
	ID        string
	SessionID string
	Project   string
	Request   wire.Request
	// State is a wire state (wire.EnFile, wire.EnCours or a terminal one).
	State string
	// Answer is the final answer; nil until the request is terminal.
	Answer *wire.Answer
	// Reason says why the state was last set.
	Reason string
	// Attempts counts the tries recorded (AddTry).
	Attempts  int
	CreatedAt time.Time
	UpdatedAt time.Time
	// ProgressAt and ProgressStep are the last sign of life (Progress,
	// SetState to en_cours, AddTry), read by the watchdog.
	ProgressAt   time.Time
	ProgressStep string
}

// AllStates lists the wire states in their lifecycle order.
func AllStates() []string {
	return []string{wire.EnFile, wire.EnCours, wire.Valide, wire.Termine,
		wire.EchecControle, wire.BesoinClaude, wire.Annule, wire.Perdue}
}

const recordCols = `id, session_id, project, request, state, answer, reason, attempts,
	created_at, updated_at, progress_at, progress_step`

type scanner interface{ Scan(dest ...any) error }

func scanRecord(row scanner) (Record, error) {
	var (
		rec                       Record
		reqJSON                   string
		ansJSON                   sql.NullString
		created, updated, progres int64
	)
	if err := row.Scan(&rec.ID, &rec.SessionID, &rec.Project, &reqJSON, &rec.State, &ansJSON,
		&rec.Reason, &rec.Attempts, &created, &updated, &progres, &rec.ProgressStep); err != nil {
		return Record{}, err
	}
	if err := json.Unmarshal([]byte(reqJSON), &rec.Request); err != nil {
		return Record{}, fmt.Errorf("request %s: decode stored request: %w", rec.ID, err)
	}
	if ansJSON.Valid {
		var a wire.Answer
		if err := json.Unmarshal([]byte(ansJSON.String), &a); err != nil {
			return Record{}, fmt.Errorf("request %s: decode stored answer: %w", rec.ID, err)
		}
		rec.Answer = &a
	}
	rec.CreatedAt, rec.UpdatedAt, rec.ProgressAt = fromMS(created), fromMS(updated), fromMS(progres)
	return rec, nil
}

// Create records a new request in state en_file and returns its id.
func (s *Store) Create(ctx context.Context, sessionID, project string, req wire.Request) (string, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("store: create: encode request: %w", err)
	}
	id, err := s.newID()
	if err != nil {
		return "", fmt.Errorf("store: create: %w", err)
	}
	now := ms(s.now())
	_, err = s.w.ExecContext(ctx, `INSERT INTO requests
		(id, session_id, project, request, state, created_at, updated_at, progress_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		id, sessionID, project, string(body), wire.EnFile, now, now, now)
	if err != nil {
		return "", fmt.Errorf("store: create request for session %s: %w", sessionID, err)
	}
	return id, nil
}

// Get returns the request id, or an error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Record, error) {
	rec, err := scanRecord(s.r.QueryRowContext(ctx, `SELECT `+recordCols+` FROM requests WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, fmt.Errorf("store: get request %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Record{}, fmt.Errorf("store: get request %s: %w", id, err)
	}
	return rec, nil
}

// SetState moves a running request to en_file or en_cours with a reason.
// Moving to en_cours also counts as progress (step "en_cours"). A terminal
// request is not changed (ErrTerminal): requests end only through Finish.
func (s *Store) SetState(ctx context.Context, id, state, reason string) error {
	if state != wire.EnFile && state != wire.EnCours {
		return fmt.Errorf("store: set state of %s to %q: %w (only en_file and en_cours; end a request with Finish)", id, state, ErrBadState)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		cur, err := stateOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if wire.Terminal(cur) {
			return fmt.Errorf("%w (%s)", ErrTerminal, cur)
		}
		now := ms(s.now())
		if state == wire.EnCours {
			_, err = tx.ExecContext(ctx, `UPDATE requests SET state = ?, reason = ?, updated_at = ?,
				progress_at = ?, progress_step = ? WHERE id = ?`, state, reason, now, now, state, id)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE requests SET state = ?, reason = ?, updated_at = ? WHERE id = ?`,
				state, reason, now, id)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set state of %s to %s: %w", id, state, err)
	}
	return nil
}

// Progress records a sign of life of a running request: the step now under
// way (e.g. "stream local/qwen", "control lint"). It is a no-op on a
// terminal request and wraps ErrNotFound for an unknown id.
func (s *Store) Progress(ctx context.Context, id, step string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE requests SET progress_at = ?, progress_step = ?
		WHERE id = ? AND state IN ('en_file', 'en_cours')`, ms(s.now()), step, id)
	if err != nil {
		return fmt.Errorf("store: progress of %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		return nil
	}
	if _, err := s.Get(ctx, id); err != nil {
		return fmt.Errorf("store: progress of %s: %w", id, err)
	}
	return nil
}

// Finish ends a request with its final answer; the state is ans.Fin, or
// ans.Etat when Fin is empty, and must be terminal (ErrBadState otherwise).
// The stored answer is completed: DemandeID, Etat and Fin set to the id and
// state, OK to true for valide/termine and false otherwise when nil; the
// request's reason becomes ans.Raison.
//
// The first Finish wins: won reports whether this call ended the request,
// and stored is the answer on record — this call's, or, when the request
// had already ended, the earlier answer unchanged.
func (s *Store) Finish(ctx context.Context, id string, ans wire.Answer) (stored wire.Answer, won bool, err error) {
	state := ans.Fin
	if state == "" {
		state = ans.Etat
	}
	switch {
	case !wire.Terminal(state):
		return wire.Answer{}, false, fmt.Errorf("store: finish %s: %w: %q is not a terminal state", id, ErrBadState, state)
	case ans.Etat != "" && ans.Etat != state:
		return wire.Answer{}, false, fmt.Errorf("store: finish %s: %w: etat %q and fin %q differ", id, ErrBadState, ans.Etat, ans.Fin)
	case ans.DemandeID != "" && ans.DemandeID != id:
		return wire.Answer{}, false, fmt.Errorf("store: finish %s: the answer is for request %s", id, ans.DemandeID)
	}
	ans.DemandeID, ans.Etat, ans.Fin = id, state, state
	if ans.OK == nil {
		ok := state == wire.Valide || state == wire.Termine
		ans.OK = &ok
	}
	body, err := json.Marshal(ans)
	if err != nil {
		return wire.Answer{}, false, fmt.Errorf("store: finish %s: encode answer: %w", id, err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		var (
			cur  string
			prev sql.NullString
		)
		err := tx.QueryRowContext(ctx, `SELECT state, answer FROM requests WHERE id = ?`, id).Scan(&cur, &prev)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if prev.Valid {
			stored = wire.Answer{}
			if err := json.Unmarshal([]byte(prev.String), &stored); err != nil {
				return fmt.Errorf("decode stored answer: %w", err)
			}
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE requests SET state = ?, answer = ?, reason = ?, updated_at = ?
			WHERE id = ?`, state, string(body), ans.Raison, ms(s.now()), id)
		if err != nil {
			return err
		}
		stored, won = ans, true
		return nil
	})
	if err != nil {
		return wire.Answer{}, false, fmt.Errorf("store: finish %s as %s: %w", id, state, err)
	}
	return stored, won, nil
}

// Unfinished returns the requests still en_file or en_cours, oldest first:
// what a starting daemon resumes or ends perdue.
func (s *Store) Unfinished(ctx context.Context) ([]Record, error) {
	recs, err := s.records(ctx, `SELECT `+recordCols+` FROM requests
		WHERE state IN ('en_file', 'en_cours') ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("store: unfinished requests: %w", err)
	}
	return recs, nil
}

// Stalled returns the en_cours requests whose last progress is before
// before, oldest progress first: the watchdog's candidates.
func (s *Store) Stalled(ctx context.Context, before time.Time) ([]Record, error) {
	recs, err := s.records(ctx, `SELECT `+recordCols+` FROM requests
		WHERE state = 'en_cours' AND progress_at < ? ORDER BY progress_at, id`, ms(before))
	if err != nil {
		return nil, fmt.Errorf("store: stalled requests: %w", err)
	}
	return recs, nil
}

// Queue counts requests by state; every wire state is present, zero when
// none.
func (s *Store) Queue(ctx context.Context) (map[string]int, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT state, count(*) FROM requests GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("store: queue: %w", err)
	}
	defer rows.Close()
	q := make(map[string]int)
	for _, st := range AllStates() {
		q[st] = 0
	}
	for rows.Next() {
		var (
			st string
			n  int
		)
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("store: queue: %w", err)
		}
		q[st] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: queue: %w", err)
	}
	return q, nil
}

func (s *Store) records(ctx context.Context, query string, args ...any) ([]Record, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var recs []Record
	for rows.Next() {
		rec, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	return recs, rows.Err()
}

// stateOf reads a request's state inside tx.
func stateOf(ctx context.Context, tx *sql.Tx, id string) (string, error) {
	var st string
	err := tx.QueryRowContext(ctx, `SELECT state FROM requests WHERE id = ?`, id).Scan(&st)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return st, err
}
