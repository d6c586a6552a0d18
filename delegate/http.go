package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"miam/delegate/store"
	"miam/delegate/wire"
)

// SubmitBody is the body of POST /v1/deleguer.
type SubmitBody struct {
	Session string       `json:"session"`
	Project string       `json:"project"`
	Request wire.Request `json:"request"`
}

// Etat is what `etat` reports: engines, queue and spend today.
type Etat struct {
	Engines    []EngineEtat   `json:"engines"`
	Queue      map[string]int `json:"queue"`
	SpentToday float64        `json:"spent_today_usd"`
}

// EngineEtat is one engine's availability.
type EngineEtat struct {
	Name   string `json:"name"`
	Ready  bool   `json:"ready"`
	Model  string `json:"model,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Handler serves the daemon's loopback routes; every route needs the
// bearer token.
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /attendre", d.handleAttendre)
	mux.HandleFunc("POST /v1/deleguer", d.handleDeleguer)
	mux.HandleFunc("GET /v1/suivre", d.handleSuivre)
	mux.HandleFunc("POST /v1/annuler", d.handleAnnuler)
	mux.HandleFunc("GET /v1/etat", d.handleEtat)
	mux.HandleFunc("GET /v1/ping", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "pid": d.Addr().PID})
	})
	return d.Authorize(mux)
}

// Authorize lets through only requests carrying the daemon's bearer token.
func (d *Daemon) Authorize(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !authorized(r, d.token) {
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		d.active.Add(1)
		defer func() {
			d.active.Add(-1)
			d.touch()
		}()
		h.ServeHTTP(w, r)
	})
}

// handleAttendre answers once, at the terminal state: the long poll behind
// `reprise`. Each internal wait lasts at most RouteWait, then waits again.
func (d *Daemon) handleAttendre(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("demande_id")
	for {
		a, err := d.Follow(r.Context(), id, d.cfg.RouteWait)
		if errors.Is(err, store.ErrNotFound) {
			ok := false
			writeJSON(w, http.StatusNotFound, wire.Answer{OK: &ok, DemandeID: id, Etat: wire.Perdue, Fin: wire.Perdue,
				Raison: "demande_inconnue", Message: "This daemon does not know the request: send it again or do it yourself."})
			return
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		if a.OK != nil {
			a.Fin = a.Etat
			writeJSON(w, http.StatusOK, a)
			return
		}
		if r.Context().Err() != nil || d.base.Err() != nil {
			// The client left or the daemon stops: no answer; `miam
			// attendre` reconnects.
			http.Error(w, "daemon stopping", http.StatusServiceUnavailable)
			return
		}
	}
}

func (d *Daemon) handleDeleguer(w http.ResponseWriter, r *http.Request) {
	var body SubmitBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20))
	if err := dec.Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	a, err := d.Submit(r.Context(), body.Session, body.Project, body.Request)
	writeAnswer(w, a, err)
}

func (d *Daemon) handleSuivre(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("demande_id")
	wait := d.cfg.CallWait
	if s := r.URL.Query().Get("attente_s"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			wait = min(time.Duration(n)*time.Second, d.cfg.CallWait)
		}
	}
	a, err := d.Follow(r.Context(), id, wait)
	writeAnswer(w, a, err)
}

func (d *Daemon) handleAnnuler(w http.ResponseWriter, r *http.Request) {
	a, err := d.Cancel(r.Context(), r.URL.Query().Get("demande_id"))
	writeAnswer(w, a, err)
}

func (d *Daemon) handleEtat(w http.ResponseWriter, r *http.Request) {
	e, err := d.Etat(r.Context(), r.URL.Query().Get("project"))
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

// Etat reports the engines' availability for a project, the queue and the
// spend of the day.
func (d *Daemon) Etat(ctx context.Context, project string) (Etat, error) {
	var e Etat
	for _, eng := range d.cfg.Engines {
		av := eng.Available(ctx, project)
		e.Engines = append(e.Engines, EngineEtat{Name: eng.Name(), Ready: av.Ready, Model: av.Model, Reason: av.Reason})
	}
	q, err := d.store.Queue(ctx)
	if err != nil {
		return e, err
	}
	e.Queue = q
	e.SpentToday, err = d.store.SpentToday(ctx, "", time.Now())
	return e, err
}

// writeAnswer maps a request's outcome to its status: a refused request is
// 400, an unknown id 404.
func writeAnswer(w http.ResponseWriter, a wire.Answer, err error) {
	var verr *ValidationError
	switch {
	case errors.As(err, &verr):
		writeError(w, http.StatusBadRequest, err)
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, err)
	case err != nil:
		writeError(w, http.StatusInternalServerError, err)
	default:
		writeJSON(w, http.StatusOK, a)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]string{"erreur": err.Error()})
}
