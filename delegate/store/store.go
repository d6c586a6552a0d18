// Package store keeps the daemon's crash-safe state: delegation requests,
// their tries and the record of written outputs, in one SQLite database
// (miam.db, WAL mode) so that a restarted daemon resumes or ends every
// request and never writes an output twice (SPEC §1, §3, §11).
//
// Every write is one short BEGIN IMMEDIATE transaction on a single writer
// connection; reads go through a small pool of read-only connections that
// WAL lets run beside the writer. Another process touching the same file
// (miam stats, a second daemon by mistake) is waited for by busy_timeout.
//
// Timestamps are stored as INTEGER Unix milliseconds, UTC. The schema is
// described in migrate.go.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
)

// FileName is the database's file name inside the directory given to Open.
const FileName = "miam.db"

// Errors callers branch on; every returned error wraps one of them or an
// underlying SQLite/OS error, with the request id as context.
var (
	// ErrNotFound: no request (or output claim) with that id.
	ErrNotFound = errors.New("store: not found")
	// ErrTerminal: the request already ended; it cannot change state again.
	ErrTerminal = errors.New("store: request already terminal")
	// ErrBadState: a state that is not one of the wire states, or one the
	// method does not accept (SetState takes only en_file/en_cours, Finish
	// only terminal states).
	ErrBadState = errors.New("store: invalid state")
	// ErrNewerSchema: the database was written by a newer miam.
	ErrNewerSchema = errors.New("store: database schema is newer than this program")
	// ErrOutputPending: an output was claimed but its write was never
	// confirmed (a crash between ClaimOutput and MarkOutputWritten). See
	// ClaimOutput for what to do.
	ErrOutputPending = errors.New("store: output claimed but not confirmed written")
	// ErrOutputConflict: a request claims an output with another path or
	// content than its existing claim.
	ErrOutputConflict = errors.New("store: output claim conflicts with an earlier claim")
)

// Options tunes Open. The zero value (or nil) means the documented defaults.
type Options struct {
	// Now is the clock; time.Now by default. Stored times are its UTC value.
	Now func() time.Time
	// Rand feeds request ids; crypto/rand.Reader by default.
	Rand io.Reader
	// BusyTimeout is how long a write waits for another process holding the
	// database lock; 5s by default.
	BusyTimeout time.Duration
	// Readers is the number of read-only connections; 4 by default.
	Readers int
}

// Store is the daemon's state. Its methods are safe for concurrent use.
type Store struct {
	w    *sql.DB // the one writer connection
	r    *sql.DB // read-only connections
	path string
	now  func() time.Time
	rand io.Reader

	idMu   sync.Mutex // guards lastMS, lastRnd
	lastMS int64
	lastID uint64
}

// Open opens (creating when missing) dir/miam.db, switches it to WAL,
// applies pending migrations and returns the store. A database of a newer
// schema than this code knows is refused with ErrNewerSchema.
func Open(dir string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.Readers <= 0 {
		o.Readers = 4
	}
	if strings.ContainsRune(dir, '?') {
		return nil, fmt.Errorf("store: open %q: the state directory must not contain '?'; choose another XDG_STATE_HOME", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: open: create state directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	busy := o.BusyTimeout.Milliseconds()

	// The writer: WAL (persistent in the file), full sync on commit so a
	// committed state survives power loss too, BEGIN IMMEDIATE so a write
	// transaction takes the lock up front and busy_timeout applies to it.
	w := sql.OpenDB(connector{dsn: fmt.Sprintf(
		"%s?_busy_timeout=%d&_journal_mode=WAL&_synchronous=FULL&_foreign_keys=1&_txlock=immediate",
		path, busy)})
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	ctx := context.Background()
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := migrate(ctx, w, path); err != nil {
		w.Close()
		return nil, err
	}
	r := sql.OpenDB(connector{dsn: fmt.Sprintf(
		"%s?_busy_timeout=%d&_foreign_keys=1&_query_only=1", path, busy)})
	r.SetMaxOpenConns(o.Readers)
	r.SetMaxIdleConns(o.Readers)
	if err := r.PingContext(ctx); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("store: open %s for reading: %w", path, err)
	}
	return &Store{w: w, r: r, path: path, now: o.Now, rand: o.Rand}, nil
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database. Pending transactions are rolled back.
func (s *Store) Close() error {
	rerr := s.r.Close()
	werr := s.w.Close()
	if err := errors.Join(rerr, werr); err != nil {
		return fmt.Errorf("store: close %s: %w", s.path, err)
	}
	return nil
}

// connector opens modernc's driver directly, so no blank import and no
// global driver registry are involved.
type connector struct{ dsn string }

func (c connector) Connect(context.Context) (driver.Conn, error) {
	return (&sqlite.Driver{}).Open(c.dsn)
}

func (c connector) Driver() driver.Driver { return &sqlite.Driver{} }

// write runs fn in one IMMEDIATE transaction on the writer, committing when
// fn returns nil.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// ms is a stored timestamp.
func ms(t time.Time) int64 { return t.UnixMilli() }

// fromMS reads a stored timestamp; 0 is the zero time.
func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// crockford is Crockford's base-32 alphabet, lower-cased: ids sort as
// strings in creation order.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// newID returns "d" + 10 base-32 digits of Unix milliseconds + 8 base-32
// digits of randomness (40 bits). Within one process ids are strictly
// increasing: a second id in the same millisecond (or a clock step back)
// reuses the last time part and increments the random part.
func (s *Store) newID() (string, error) {
	var b [5]byte
	if _, err := io.ReadFull(s.rand, b[:]); err != nil {
		return "", fmt.Errorf("new id: read random: %w", err)
	}
	rnd := uint64(b[0])<<32 | uint64(b[1])<<24 | uint64(b[2])<<16 | uint64(b[3])<<8 | uint64(b[4])
	now := s.now().UnixMilli()
	s.idMu.Lock()
	if now <= s.lastMS {
		now = s.lastMS
		rnd = (s.lastID + 1) & (1<<40 - 1)
		if rnd == 0 { // random part wrapped: borrow the next millisecond
			now++
		}
	}
	s.lastMS, s.lastID = now, rnd
	s.idMu.Unlock()

	var out [19]byte
	out[0] = 'd'
	for i := 10; i >= 1; i-- {
		out[i] = crockford[now&31]
		now >>= 5
	}
	for i := 18; i >= 11; i-- {
		out[i] = crockford[rnd&31]
		rnd >>= 5
	}
	return string(out[:]), nil
}
