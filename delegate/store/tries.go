package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"miam/delegate/wire"
)

// Try is one engine's attempt at a request.
type Try struct {
	RequestID string
	// N numbers the request's tries from 1; AddTry assigns the next one
	// when N is 0.
	N            int
	Engine       string // local, api, haiku
	Model        string
	InputTokens  int
	OutputTokens int
	CostUSD      float64
	Duration     time.Duration // stored in milliseconds
	// OK is true when the try's output passed its controls.
	OK       bool
	Controls []wire.Control
	// ErrorKind and Error say why the try failed without an output to
	// control (a delegate.Error kind and its text).
	ErrorKind string
	Error     string
	// StartedAt and EndedAt default to the store's clock when zero.
	StartedAt time.Time
	EndedAt   time.Time
}

// AddTry records a try and returns its number. It raises the request's
// attempt count and, while the request runs, counts as progress (step
// "try N engine/model"). A try may be recorded after the request ended (the
// watchdog may end it while an engine was still answering): its cost must
// count all the same.
func (s *Store) AddTry(ctx context.Context, t Try) (int, error) {
	controls := t.Controls
	if controls == nil {
		controls = []wire.Control{}
	}
	cj, err := json.Marshal(controls)
	if err != nil {
		return 0, fmt.Errorf("store: add try to %s: encode controls: %w", t.RequestID, err)
	}
	now := s.now()
	if t.StartedAt.IsZero() {
		t.StartedAt = now
	}
	if t.EndedAt.IsZero() {
		t.EndedAt = now
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		if _, err := stateOf(ctx, tx, t.RequestID); err != nil {
			return err
		}
		if t.N == 0 {
			if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(n), 0) + 1 FROM tries WHERE request_id = ?`,
				t.RequestID).Scan(&t.N); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO tries (request_id, n, engine, model, input_tokens,
			output_tokens, cost_usd, duration_ms, ok, controls, error_kind, error_text, started_at, ended_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.RequestID, t.N, t.Engine, t.Model, t.InputTokens, t.OutputTokens, t.CostUSD,
			t.Duration.Milliseconds(), t.OK, string(cj), t.ErrorKind, t.Error,
			ms(t.StartedAt), ms(t.EndedAt)); err != nil {
			return err
		}
		n := ms(now)
		_, err := tx.ExecContext(ctx, `UPDATE requests SET attempts = max(attempts, ?), updated_at = ?,
			progress_at = CASE WHEN state IN ('en_file', 'en_cours') THEN ? ELSE progress_at END,
			progress_step = CASE WHEN state IN ('en_file', 'en_cours') THEN ? ELSE progress_step END
			WHERE id = ?`, t.N, n, n, fmt.Sprintf("try %d %s/%s", t.N, t.Engine, t.Model), t.RequestID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: add try %d (%s/%s) to %s: %w", t.N, t.Engine, t.Model, t.RequestID, err)
	}
	return t.N, nil
}

// ListTries returns a request's tries in order. An unknown request has
// none.
func (s *Store) ListTries(ctx context.Context, requestID string) ([]Try, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT request_id, n, engine, model, input_tokens, output_tokens,
		cost_usd, duration_ms, ok, controls, error_kind, error_text, started_at, ended_at
		FROM tries WHERE request_id = ? ORDER BY n`, requestID)
	if err != nil {
		return nil, fmt.Errorf("store: list tries of %s: %w", requestID, err)
	}
	defer rows.Close()
	var out []Try
	for rows.Next() {
		var (
			t           Try
			dur, st, en int64
			cj          string
		)
		if err := rows.Scan(&t.RequestID, &t.N, &t.Engine, &t.Model, &t.InputTokens, &t.OutputTokens,
			&t.CostUSD, &dur, &t.OK, &cj, &t.ErrorKind, &t.Error, &st, &en); err != nil {
			return nil, fmt.Errorf("store: list tries of %s: %w", requestID, err)
		}
		if err := json.Unmarshal([]byte(cj), &t.Controls); err != nil {
			return nil, fmt.Errorf("store: list tries of %s: try %d: decode controls: %w", requestID, t.N, err)
		}
		if len(t.Controls) == 0 {
			t.Controls = nil
		}
		t.Duration = time.Duration(dur) * time.Millisecond
		t.StartedAt, t.EndedAt = fromMS(st), fromMS(en)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list tries of %s: %w", requestID, err)
	}
	return out, nil
}

// SpentToday sums the cost in USD of the tries of engine ("" for every
// engine) started during day's UTC calendar day.
func (s *Store) SpentToday(ctx context.Context, engine string, day time.Time) (float64, error) {
	d := day.UTC()
	start := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 0, 1)
	var usd float64
	err := s.r.QueryRowContext(ctx, `SELECT total(cost_usd) FROM tries
		WHERE (? = '' OR engine = ?) AND started_at >= ? AND started_at < ?`,
		engine, engine, ms(start), ms(end)).Scan(&usd)
	if err != nil {
		return 0, fmt.Errorf("store: spend of %q on %s: %w", engine, start.Format(time.DateOnly), err)
	}
	return usd, nil
}

// ModelStats are the measures of one engine and model (SPEC §11).
type ModelStats struct {
	Engine   string
	Model    string
	Requests int // distinct requests it tried
	Tries    int
	// Successes counts tries that passed their controls.
	Successes int
	// FirstTry counts successes on the model's first try at a request.
	FirstTry int
	// Repairs counts successes after an earlier failed try of the same
	// model on the same request (it repaired its output from the control
	// failure). Successes = FirstTry + Repairs + successes that followed
	// only earlier successes of the model (not expected in practice).
	Repairs      int
	InputTokens  int64
	OutputTokens int64
	CostUSD      float64
	Duration     time.Duration
}

// Stats returns the measures per engine and model, sorted by engine then
// model.
func (s *Store) Stats(ctx context.Context) ([]ModelStats, error) {
	rows, err := s.r.QueryContext(ctx, `
SELECT t.engine, t.model, count(DISTINCT t.request_id), count(*), sum(t.ok),
	sum(t.ok AND NOT EXISTS (SELECT 1 FROM tries p WHERE p.request_id = t.request_id
		AND p.engine = t.engine AND p.model = t.model AND p.n < t.n)),
	sum(t.ok AND EXISTS (SELECT 1 FROM tries p WHERE p.request_id = t.request_id
		AND p.engine = t.engine AND p.model = t.model AND p.n < t.n AND p.ok = 0)),
	sum(t.input_tokens), sum(t.output_tokens), total(t.cost_usd), sum(t.duration_ms)
FROM tries t GROUP BY t.engine, t.model ORDER BY t.engine, t.model`)
	if err != nil {
		return nil, fmt.Errorf("store: stats: %w", err)
	}
	defer rows.Close()
	var out []ModelStats
	for rows.Next() {
		var (
			m   ModelStats
			dur int64
		)
		if err := rows.Scan(&m.Engine, &m.Model, &m.Requests, &m.Tries, &m.Successes, &m.FirstTry,
			&m.Repairs, &m.InputTokens, &m.OutputTokens, &m.CostUSD, &dur); err != nil {
			return nil, fmt.Errorf("store: stats: %w", err)
		}
		m.Duration = time.Duration(dur) * time.Millisecond
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: stats: %w", err)
	}
	return out, nil
}
