package delegate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"miam/delegate/store"
	"miam/delegate/wire"
)

// Config is the daemon's configuration; zero fields mean SPEC §12 defaults.
type Config struct {
	StateDir    string // $XDG_STATE_HOME/miam: database, daemon.json, attente.hdr
	Engines     []Engine
	Checker     Checker
	Listen      string        // default 127.0.0.1:0; always loopback
	CallWait    time.Duration // call_wait_s (45 s): how long deleguer waits before answering ok: null
	RouteWait   time.Duration // attente_route_s (3600 s): one internal wait of /attendre
	SansProgres time.Duration // sans_progres_s (600 s)
	Essais      int           // essais (2)
	// ReprisePrefix is the wait command given in `reprise`, to which the
	// request id is appended; default "miam attendre".
	ReprisePrefix string
	// JobContext decorates each request's context (the local engine reads
	// the session from it, for its fair queue); nil leaves it as is.
	JobContext func(context.Context, Job) context.Context
	Log        *slog.Logger
}

// Daemon is the delegation daemon: a queue in SQLite, a router running each
// request across the engines, and the loopback HTTP routes the MCP front
// and `miam attendre` use.
type Daemon struct {
	cfg     Config
	store   *store.Store
	router  *Router
	token   string
	ln      net.Listener
	waiters waiters
	log     *slog.Logger

	active   atomic.Int64 // HTTP requests in flight (long polls included)
	lastSeen atomic.Int64 // unix nanoseconds of the last request's end

	mu      sync.Mutex
	cancels map[string]context.CancelCauseFunc
	running sync.WaitGroup
	base    context.Context // parent of every request's context
	stop    context.CancelFunc
}

// errCancelled is the cause given to a request cancelled by annuler.
var errCancelled = errors.New("cancelled by annuler")

// Open opens the store and the listener, and publishes the address and
// token. Run serves; Close releases everything.
func Open(cfg Config) (*Daemon, error) {
	if cfg.StateDir == "" {
		return nil, errors.New("daemon: no state directory")
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil || net.ParseIP(host) == nil || !net.ParseIP(host).IsLoopback() {
		return nil, fmt.Errorf("daemon: listen address %q must be a loopback IP and port", cfg.Listen)
	}
	if cfg.CallWait == 0 {
		cfg.CallWait = 45 * time.Second
	}
	if cfg.RouteWait == 0 {
		cfg.RouteWait = time.Hour
	}
	if cfg.ReprisePrefix == "" {
		cfg.ReprisePrefix = "miam attendre"
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	st, err := store.Open(cfg.StateDir, nil)
	if err != nil {
		return nil, err
	}
	token, err := NewToken()
	if err != nil {
		st.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("daemon: listen: %w", err)
	}
	d := &Daemon{cfg: cfg, store: st, token: token, ln: ln, log: log, cancels: map[string]context.CancelCauseFunc{}}
	d.router = &Router{Engines: cfg.Engines, Checker: cfg.Checker, Journal: journal{st}, Essais: cfg.Essais,
		SansProgres: cfg.SansProgres, Log: log, Write: d.writeOutput}
	d.base, d.stop = context.WithCancel(context.Background())
	d.touch()
	addr := Address{Port: ln.Addr().(*net.TCPAddr).Port, PID: os.Getpid()}
	if err := WriteDaemonFiles(cfg.StateDir, addr, token); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func (d *Daemon) touch() { d.lastSeen.Store(time.Now().UnixNano()) }

// IdleFor reports how long the daemon has had no request running, no HTTP
// request in flight and none finished; zero while busy.
func (d *Daemon) IdleFor() time.Duration {
	d.mu.Lock()
	running := len(d.cancels)
	d.mu.Unlock()
	if running > 0 || d.active.Load() > 0 {
		return 0
	}
	return time.Since(time.Unix(0, d.lastSeen.Load()))
}

// Addr is where the daemon listens.
func (d *Daemon) Addr() Address {
	return Address{Port: d.ln.Addr().(*net.TCPAddr).Port, PID: os.Getpid()}
}

// Token is the bearer token the HTTP routes require.
func (d *Daemon) Token() string { return d.token }

// Store gives read access to the journal, for `miam etat` and `miam stats`.
func (d *Daemon) Store() *store.Store { return d.store }

// Run resumes unfinished requests, then serves until ctx ends, and shuts
// down gracefully: running requests are cancelled and their writes finish
// before Run returns; they stay unfinished in the store and resume on the
// next start.
//
// h serves the routes; nil is d.Handler(). A caller adding routes (the MCP
// endpoint) wraps them with d.Authorize.
func (d *Daemon) Run(ctx context.Context, h http.Handler) error {
	if err := d.resume(ctx); err != nil {
		d.log.Error("resume", "err", err)
	}
	if err := d.WriteStatus(ctx); err != nil {
		d.log.Error("status", "err", err)
	}
	statusCtx, stopStatus := context.WithCancel(ctx)
	statusDone := make(chan struct{})
	go d.keepStatus(statusCtx, statusDone)
	defer func() { stopStatus(); <-statusDone }()
	if h == nil {
		h = d.Handler()
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return d.base }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(d.ln) }()
	d.log.Info("miam daemon listening", "addr", d.ln.Addr().String())
	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	d.stop() // wakes long polls and stops request goroutines
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdown)
	d.running.Wait()
	return err
}

// Close releases the store and the listener.
func (d *Daemon) Close() error {
	d.stop()
	d.running.Wait()
	d.ln.Close()
	return d.store.Close()
}

// resume restarts requests left unfinished by a crash or a restart.
func (d *Daemon) resume(ctx context.Context) error {
	recs, err := d.store.Unfinished(ctx)
	if err != nil {
		return err
	}
	for _, r := range recs {
		d.log.Info("resuming request", "id", r.ID, "state", r.State)
		d.start(Job{ID: r.ID, Project: r.Project, Session: r.SessionID, Req: r.Request})
	}
	return nil
}

// Submit validates and queues a request, then waits up to CallWait for it
// to end: the answer is terminal, or pending (ok: null) with `reprise`.
func (d *Daemon) Submit(ctx context.Context, session, project string, req wire.Request) (wire.Answer, error) {
	if err := Validate(req); err != nil {
		return wire.Answer{}, err
	}
	if !filepath.IsAbs(project) {
		return wire.Answer{}, fmt.Errorf("project %q is not an absolute directory", project)
	}
	id, err := d.store.Create(ctx, session, project, req)
	if err != nil {
		return wire.Answer{}, err
	}
	d.start(Job{ID: id, Project: project, Session: session, Req: req})
	return d.Follow(ctx, id, d.cfg.CallWait)
}

// start runs a request in its own goroutine.
func (d *Daemon) start(job Job) {
	ctx, cancel := context.WithCancelCause(d.base)
	if d.cfg.JobContext != nil {
		ctx = d.cfg.JobContext(ctx, job)
	}
	d.mu.Lock()
	d.cancels[job.ID] = cancel
	d.mu.Unlock()
	d.running.Add(1)
	go func() {
		defer d.running.Done()
		defer func() {
			d.mu.Lock()
			delete(d.cancels, job.ID)
			d.mu.Unlock()
			cancel(nil)
		}()
		if err := d.store.SetState(ctx, job.ID, wire.EnCours, ""); err != nil {
			d.log.Warn("set state", "id", job.ID, "err", err)
		}
		a := d.router.Run(ctx, job)
		if a.Fin == wire.Annule && !errors.Is(context.Cause(ctx), errCancelled) {
			// The daemon is stopping, not the user: leave the request
			// unfinished so that the next start resumes it.
			return
		}
		if _, _, err := d.store.Finish(context.WithoutCancel(ctx), job.ID, a); err != nil {
			d.log.Error("finish", "id", job.ID, "err", err)
		}
		d.waiters.done(job.ID)
		d.touch()
	}()
}

// Follow returns the request's answer once terminal, or pending after wait.
func (d *Daemon) Follow(ctx context.Context, id string, wait time.Duration) (wire.Answer, error) {
	done := d.waiters.wait(id)
	a, terminal, err := d.answer(ctx, id)
	if err != nil || terminal || wait <= 0 {
		return a, err
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	case <-d.base.Done():
	}
	a, _, err = d.answer(context.WithoutCancel(ctx), id)
	return a, err
}

// answer reads a request's current answer.
func (d *Daemon) answer(ctx context.Context, id string) (wire.Answer, bool, error) {
	rec, err := d.store.Get(ctx, id)
	if err != nil {
		return wire.Answer{}, false, err
	}
	if rec.Answer != nil && wire.Terminal(rec.State) {
		return *rec.Answer, true, nil
	}
	return wire.Answer{OK: nil, DemandeID: id, Etat: rec.State, Reprise: d.cfg.ReprisePrefix + " " + id,
		Message: "Still running. Run `reprise` once with run_in_background: true, then do other work or end your turn: you will be woken when it ends."}, false, nil
}

// Cancel cancels a request; a request already ended keeps its answer.
func (d *Daemon) Cancel(ctx context.Context, id string) (wire.Answer, error) {
	d.mu.Lock()
	cancel, running := d.cancels[id]
	d.mu.Unlock()
	if running {
		cancel(errCancelled)
	}
	ok := false
	stored, _, err := d.store.Finish(ctx, id, wire.Answer{OK: &ok, DemandeID: id, Etat: wire.Annule, Fin: wire.Annule, Message: "cancelled"})
	if err != nil {
		return wire.Answer{}, err
	}
	d.waiters.done(id)
	return stored, nil
}

// writeOutput writes a valid artefact once: the store's claim protocol
// guarantees that a request resumed after a crash never writes twice nor
// overwrites a file the user edited since.
func (d *Daemon) writeOutput(job Job, rel string, data []byte) (wire.Diff, error) {
	ctx := context.Background()
	rel, err := cleanRel(rel)
	if err != nil {
		return wire.Diff{}, err
	}
	sum := hashHex(data)
	base := ""
	if old, err := readInRoot(job.Project, rel); err == nil {
		base = hashHex(old)
	}
	already, err := d.store.ClaimOutput(ctx, job.ID, rel, sum, base)
	switch {
	case errors.Is(err, store.ErrOutputPending):
		disk, rerr := readInRoot(job.Project, rel)
		diskSum := ""
		if rerr == nil {
			diskSum = hashHex(disk)
		}
		must, rerr := d.store.RecoverOutput(ctx, job.ID, diskSum)
		if rerr != nil {
			return wire.Diff{}, rerr
		}
		if !must {
			return wire.Diff{Files: []string{rel}}, nil
		}
	case err != nil:
		return wire.Diff{}, err
	case already:
		return wire.Diff{Files: []string{rel}}, nil
	}
	diff, err := WriteOutput(job.Project, rel, data)
	if err != nil {
		return diff, err
	}
	return diff, d.store.MarkOutputWritten(ctx, job.ID, int64(len(data)))
}

func hashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func readInRoot(project, rel string) ([]byte, error) {
	root, err := os.OpenRoot(project)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(rel)
}

// journal adapts the store to the router's Journal.
type journal struct{ s *store.Store }

func (j journal) Progress(ctx context.Context, id, step string) error {
	return j.s.Progress(ctx, id, step)
}

func (j journal) AddTry(ctx context.Context, t Try) error {
	ok := t.ErrKind == "" && t.Err == ""
	_, err := j.s.AddTry(ctx, store.Try{RequestID: t.RequestID, Engine: t.Engine, Model: t.Model,
		InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, CostUSD: t.CostUSD, Duration: t.Duration,
		OK: ok, Controls: t.Controls, ErrorKind: t.ErrKind, Error: t.Err})
	return err
}
