package delegate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"miam/delegate/wire"
)

// Checker judges an executor's raw answer with the request's controls and
// returns the cleaned artefact. The controls package provides the real one.
type Checker interface {
	Check(ctx context.Context, project string, req wire.Request, raw string) (artefact string, results []wire.Control, ok bool)
}

// Try is one executor call and what the controls said of it.
type Try struct {
	RequestID    string
	N            int // 1-based over the whole request
	Engine       string
	Model        string
	InputTokens  int
	OutputTokens int
	CostUSD      float64
	Duration     time.Duration
	Controls     []wire.Control
	ErrKind      string
	Err          string
}

// Journal records a request's progress and tries as they happen; the store
// implements it. Errors are logged, never fatal to the request.
type Journal interface {
	Progress(ctx context.Context, id, step string) error
	AddTry(ctx context.Context, t Try) error
}

// Job is one request to run.
type Job struct {
	ID      string
	Project string // absolute project directory; outputs land inside it
	Session string
	Req     wire.Request
}

// Router runs a request across the engine ladder: each engine gets Essais
// tries, each failed try sending the exact control failures back to the
// model, then the next engine; the output is written only once valide.
type Router struct {
	Engines []Engine // the ladder, in order (local, api, haiku)
	Checker Checker
	Journal Journal // may be nil
	// Essais is the default number of tries per engine (2).
	Essais int
	// TransientRetries bounds retries of one try after transient errors (2).
	TransientRetries int
	// Backoff is the wait before transient retry n (1-based); default
	// 1s, 2s, 4s… capped at 30s, or the server's Retry-After.
	Backoff func(n int, retryAfter time.Duration) time.Duration
	// SansProgres is the watchdog: no streamed token, finished control or
	// new try for this long ends the request besoin_claude (600s).
	SansProgres time.Duration
	// Write writes a valid artefact inside the project; default WriteOutput.
	Write func(job Job, rel string, data []byte) (wire.Diff, error)
	Log   *slog.Logger
}

// errNoProgress is the watchdog's cancellation cause.
var errNoProgress = errors.New("no progress")

func (r *Router) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

func (r *Router) backoff(n int, retryAfter time.Duration) time.Duration {
	if r.Backoff != nil {
		return r.Backoff(n, retryAfter)
	}
	if retryAfter > 0 {
		return min(retryAfter, 30*time.Second)
	}
	return min(time.Second<<(n-1), 30*time.Second)
}

// ladder returns the engines a request may use, in order.
func (r *Router) ladder(moteur string) []Engine {
	if moteur == "" || moteur == "auto" {
		return r.Engines
	}
	for _, e := range r.Engines {
		if e.Name() == moteur {
			return []Engine{e}
		}
	}
	return nil
}

// Run runs one request to a terminal answer. It never returns a pending
// answer: waiting and persistence are the daemon's business.
func (r *Router) Run(ctx context.Context, job Job) wire.Answer {
	req := job.Req
	essais := req.Essais
	if essais == 0 {
		essais = r.Essais
	}
	if essais == 0 {
		essais = 2
	}
	first, err := buildPrompt(job.Project, req)
	if err != nil {
		return end(job, wire.BesoinClaude, func(a *wire.Answer) {
			a.Raison, a.Erreur = "requete_invalide", err.Error()
			a.Message = "The request could not be prepared; fix it and send it again."
		})
	}
	w := newWatch(ctx, r.sansProgres())
	defer w.stop()
	ctx = w.ctx

	var unavailable []string
	var lastFailure []wire.Control
	var lastEngine, lastModel string
	n := 0
	tried := false
	for _, e := range r.ladder(req.Moteur) {
		av := e.Available(ctx, job.Project)
		if !av.Ready {
			unavailable = append(unavailable, fmt.Sprintf("%s: %s", e.Name(), av.Reason))
			continue
		}
		tried = true
		msgs := first
	tries:
		for t := 1; t <= essais; t++ {
			n++
			r.progress(ctx, w, job.ID, fmt.Sprintf("try %d on %s", n, e.Name()))
			comp, dur, err := r.complete(ctx, w, e, Prompt{Model: av.Model, Messages: msgs})
			// A failed call has no answering model: record the one asked.
			try := Try{RequestID: job.ID, N: n, Engine: e.Name(), Model: cmp.Or(comp.Model, av.Model), InputTokens: comp.InputTokens,
				OutputTokens: comp.OutputTokens, CostUSD: comp.CostUSD, Duration: dur}
			if err != nil {
				try.ErrKind, try.Err = KindOf(err).String(), err.Error()
				r.record(ctx, try)
				if w.stuck() {
					return end(job, wire.BesoinClaude, func(a *wire.Answer) {
						a.Raison, a.Essais = "sans_progres", n
						a.Message = fmt.Sprintf("No progress for %s during %s; decide whether to retry or take it over.", r.sansProgres(), w.step())
					})
				}
				if ctx.Err() != nil {
					return end(job, wire.Annule, func(a *wire.Answer) { a.Essais, a.Erreur = n, context.Cause(ctx).Error() })
				}
				if KindOf(err) == Fatal {
					return end(job, wire.BesoinClaude, func(a *wire.Answer) {
						a.Raison, a.Erreur, a.Essais = "erreur_executeur", err.Error(), n
						a.Message = "The executor refused this request as malformed; rephrase or cut it."
					})
				}
				unavailable = append(unavailable, fmt.Sprintf("%s: %v", e.Name(), err))
				break tries // rate limited, refused, or transient past its retries: next engine
			}
			lastEngine, lastModel = e.Name(), comp.Model
			r.progress(ctx, w, job.ID, fmt.Sprintf("controls of try %d", n))
			artefact, results, ok := r.Checker.Check(ctx, job.Project, req, comp.Text)
			try.Controls = results
			if !ok {
				try.ErrKind = ControlFailed.String()
			}
			r.record(ctx, try)
			w.touch()
			if ok {
				return r.accept(job, artefact, results, n, e.Name(), comp.Model)
			}
			lastFailure = results
			msgs = retryMessages(msgs, comp.Text, results)
		}
	}
	if !tried || lastFailure == nil {
		why := strings.Join(unavailable, "; ")
		if len(unavailable) == 0 {
			why = "no engine configured"
			if req.Moteur != "" && req.Moteur != "auto" {
				why = "engine " + req.Moteur + " not configured"
			}
		}
		return end(job, wire.BesoinClaude, func(a *wire.Answer) {
			a.Raison, a.Essais = "aucun_executeur", n
			a.Message = "No executor could take this bout (" + why + "). Run the ready subagent call in `appel`, or do it yourself."
			a.Appel = subagentCall(job.Project, req, first)
		})
	}
	return end(job, wire.EchecControle, func(a *wire.Answer) {
		a.Verdict, a.Controles, a.Essais = wire.VerdictEchecControle, lastFailure, n
		a.MoteurFinal, a.ModeleFinal = lastEngine, lastModel
		a.Message = "Every try failed its controls; the last failures are in `controles`. Take it over or cut it smaller."
	})
}

// accept writes a valid artefact and builds the answer.
func (r *Router) accept(job Job, artefact string, results []wire.Control, n int, engine, model string) wire.Answer {
	req := job.Req
	noControls := req.Controle != nil && len(*req.Controle) == 0
	fin, verdict := wire.Valide, wire.VerdictValide
	if noControls {
		fin, verdict = wire.Termine, wire.VerdictNonControle
	}
	a := end(job, fin, func(a *wire.Answer) {
		a.Verdict, a.Controles, a.Essais, a.MoteurFinal, a.ModeleFinal = verdict, results, n, engine, model
	})
	switch {
	case req.Sortie != "" && !noControls:
		if !strings.HasSuffix(artefact, "\n") {
			artefact += "\n"
		}
		write := r.Write
		if write == nil {
			write = func(job Job, rel string, data []byte) (wire.Diff, error) { return WriteOutput(job.Project, rel, data) }
		}
		d, err := write(job, req.Sortie, []byte(artefact))
		if err != nil {
			return end(job, wire.BesoinClaude, func(a *wire.Answer) {
				a.Raison, a.Erreur, a.Essais = "sortie_refusee", err.Error(), n
				a.Message = "The answer is valid but its output path was refused."
				a.Corps = artefact
			})
		}
		a.Sortie, a.Diff = req.Sortie, &d
		if req.Retour == "complet" {
			a.Corps = artefact
		}
	default:
		a.Corps = artefact
	}
	return a
}

// end builds a terminal answer.
func end(job Job, fin string, fill func(*wire.Answer)) wire.Answer {
	ok := fin == wire.Valide || fin == wire.Termine
	a := wire.Answer{OK: &ok, DemandeID: job.ID, Etat: fin, Fin: fin}
	fill(&a)
	return a
}

// complete runs one try with its transient retries.
func (r *Router) complete(ctx context.Context, w *watch, e Engine, p Prompt) (Completion, time.Duration, error) {
	retries := r.TransientRetries
	if retries == 0 {
		retries = 2
	}
	start := time.Now()
	for i := 0; ; i++ {
		comp, err := e.Complete(ctx, p, w.touch)
		if err == nil || KindOf(err) != Transient || i >= retries || ctx.Err() != nil {
			return comp, time.Since(start), err
		}
		var ee *Error
		var after time.Duration
		if errors.As(err, &ee) {
			after = ee.RetryAfter
		}
		r.log().Info("transient engine error, retrying", "engine", e.Name(), "err", err, "retry", i+1)
		select {
		case <-ctx.Done():
			return comp, time.Since(start), err
		case <-time.After(r.backoff(i+1, after)):
		}
		w.touch()
	}
}

func (r *Router) sansProgres() time.Duration {
	if r.SansProgres > 0 {
		return r.SansProgres
	}
	return 600 * time.Second
}

func (r *Router) progress(ctx context.Context, w *watch, id, step string) {
	w.at(step)
	if r.Journal != nil {
		if err := r.Journal.Progress(context.WithoutCancel(ctx), id, step); err != nil {
			r.log().Warn("journal progress", "id", id, "err", err)
		}
	}
}

func (r *Router) record(ctx context.Context, t Try) {
	if r.Journal != nil {
		if err := r.Journal.AddTry(context.WithoutCancel(ctx), t); err != nil {
			r.log().Warn("journal try", "id", t.RequestID, "err", err)
		}
	}
}

// watch is the watchdog: it cancels the request's context when nothing has
// progressed for limit.
type watch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
	mu     sync.Mutex
	last   time.Time
	where  string
	limit  time.Duration
}

func newWatch(parent context.Context, limit time.Duration) *watch {
	ctx, cancel := context.WithCancelCause(parent)
	w := &watch{ctx: ctx, cancel: cancel, done: make(chan struct{}), last: time.Now(), limit: limit, where: "start"}
	go w.loop()
	return w
}

func (w *watch) loop() {
	t := time.NewTicker(max(w.limit/10, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-w.ctx.Done():
			return
		case now := <-t.C:
			w.mu.Lock()
			idle := now.Sub(w.last)
			w.mu.Unlock()
			if idle >= w.limit {
				w.cancel(errNoProgress)
				return
			}
		}
	}
}

// touch records progress (a streamed token, a finished control).
func (w *watch) touch() {
	w.mu.Lock()
	w.last = time.Now()
	w.mu.Unlock()
}

// at records progress and names the current step.
func (w *watch) at(step string) {
	w.mu.Lock()
	w.last, w.where = time.Now(), step
	w.mu.Unlock()
}

func (w *watch) step() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.where
}

func (w *watch) stuck() bool { return errors.Is(context.Cause(w.ctx), errNoProgress) }

func (w *watch) stop() {
	close(w.done)
	w.cancel(nil)
}
