package delegate_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/controls"
	"miam/delegate"
	"miam/delegate/engines/local"
	"miam/delegate/wire"
	"miam/fixtures/fakeapi"
	"miam/fixtures/fakeollama"
	"miam/fixtures/fakeopenai"
)

// backoffs records the router's Backoff calls and never waits.
type backoffs struct {
	mu    sync.Mutex
	calls []backoff
}

type backoff struct {
	N          int
	RetryAfter time.Duration
}

func (b *backoffs) wait(n int, retryAfter time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, backoff{n, retryAfter})
	return 0
}

func TestRouterTransientErrors(t *testing.T) {
	tests := []struct {
		name         string
		loaded       bool
		local        []fakeollama.Reply
		api          []fakeopenai.Reply
		haiku        []fakeapi.Step
		wantEngine   string
		wantEssais   int
		wantBackoffs []backoff
		wantCalls    [3]int // local, api, haiku
	}{{
		name:       "503 with Retry-After, then good: the same engine, after Retry-After",
		api:        []fakeopenai.Reply{{Status: 503, Message: "overloaded", RetryAfter: "7"}, fakeopenai.Answer(fencedPy)},
		wantEngine: "api", wantEssais: 1,
		wantBackoffs: []backoff{{1, 7 * time.Second}},
		wantCalls:    [3]int{0, 2, 0},
	}, {
		name:   "500 then good on local",
		loaded: true, local: []fakeollama.Reply{fakeollama.ServerError(), fakeollama.Answer(fencedPy)},
		wantEngine: "local", wantEssais: 1,
		wantBackoffs: []backoff{{1, 0}},
		wantCalls:    [3]int{2, 0, 0},
	}, {
		name:   "a cut stream is retried",
		loaded: true, local: []fakeollama.Reply{fakeollama.Truncated(fencedPy), fakeollama.Answer(fencedPy)},
		wantEngine: "local", wantEssais: 1,
		wantBackoffs: []backoff{{1, 0}},
		wantCalls:    [3]int{2, 0, 0},
	}, {
		name:   "500 past its retries: the next engine",
		loaded: true, local: []fakeollama.Reply{fakeollama.ServerError(), fakeollama.ServerError(), fakeollama.ServerError()},
		api:        []fakeopenai.Reply{fakeopenai.Answer(fencedPy)},
		wantEngine: "api", wantEssais: 2,
		wantBackoffs: []backoff{{1, 0}, {2, 0}},
		wantCalls:    [3]int{3, 1, 0},
	}, {
		name:       "429: the next engine, no wait",
		api:        []fakeopenai.Reply{fakeopenai.RateLimited("30")},
		haiku:      []fakeapi.Step{{Name: "add", Reply: []fakeapi.Block{fakeapi.Text(fencedPy)}}},
		wantEngine: "haiku", wantEssais: 2,
		wantCalls: [3]int{0, 1, 1},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakes{ollama: ollama(t, tt.loaded, tt.local...)}
			if tt.api != nil {
				f.openai = fakeopenai.New(tt.api...)
				t.Cleanup(f.openai.Close)
			}
			if tt.haiku != nil {
				f.anthropic = fakeapi.New(tt.haiku)
				t.Cleanup(f.anthropic.Close)
			}
			project := t.TempDir()
			b := &backoffs{}
			r := &delegate.Router{Engines: f.ladder(project, noSpend), Checker: &controls.Pipeline{Load: delegate.LoadFiles},
				Backoff: b.wait}
			got := r.Run(t.Context(), delegate.Job{ID: "r1", Project: project, Req: addRequest()})
			if got.Fin != wire.Valide || got.MoteurFinal != tt.wantEngine || got.Essais != tt.wantEssais {
				t.Errorf("answer %s on %s after %d tries (%s %s), want valide on %s after %d",
					got.Fin, got.MoteurFinal, got.Essais, got.Erreur, got.Message, tt.wantEngine, tt.wantEssais)
			}
			checkSortie(t, project, "add.py", goodPy)
			if diff := cmp.Diff(tt.wantBackoffs, b.calls); diff != "" {
				t.Errorf("backoffs (-want +got):\n%s", diff)
			}
			var calls [3]int
			calls[0] = len(f.ollama.Requests())
			if f.openai != nil {
				calls[1] = len(f.openai.Requests())
			}
			if f.anthropic != nil {
				calls[2] = len(f.anthropic.Requests())
			}
			if calls != tt.wantCalls {
				t.Errorf("models called %v, want %v", calls, tt.wantCalls)
			}
		})
	}
}

func TestRouterMoteur(t *testing.T) {
	tests := []struct {
		name       string
		moteur     string
		loaded     bool
		onlyLocal  bool // the ladder holds local alone
		wantFin    string
		wantEngine string
		wantMsg    string
		wantCalls  [2]int // local, api
	}{
		{name: "auto takes local first", moteur: "auto", loaded: true, wantFin: wire.Valide, wantEngine: "local", wantCalls: [2]int{1, 0}},
		{name: "api skips a ready local", moteur: "api", loaded: true, wantFin: wire.Valide, wantEngine: "api", wantCalls: [2]int{0, 1}},
		{name: "local not ready does not fall to api", moteur: "local", wantFin: wire.BesoinClaude,
			wantMsg: "(local: no model loaded)"},
		{name: "an engine not in the ladder", moteur: "api", onlyLocal: true, loaded: true, wantFin: wire.BesoinClaude,
			wantMsg: "(engine api not configured)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakes{ollama: ollama(t, tt.loaded, fakeollama.Answer(fencedPy)), openai: fakeopenai.New(fakeopenai.Answer(fencedPy))}
			t.Cleanup(f.openai.Close)
			project := t.TempDir()
			engines := f.ladder(project, noSpend)
			if tt.onlyLocal {
				engines = engines[:1]
			}
			r := &delegate.Router{Engines: engines, Checker: &controls.Pipeline{Load: delegate.LoadFiles}}
			req := addRequest()
			req.Moteur = tt.moteur
			got := r.Run(t.Context(), delegate.Job{ID: "r1", Project: project, Req: req})
			if got.Fin != tt.wantFin || got.MoteurFinal != tt.wantEngine || !strings.Contains(got.Message, tt.wantMsg) {
				t.Errorf("answer %s on %q: %q; want %s on %q, message with %q", got.Fin, got.MoteurFinal, got.Message,
					tt.wantFin, tt.wantEngine, tt.wantMsg)
			}
			if got.Fin == wire.BesoinClaude && (got.Raison != "aucun_executeur" || got.Appel == nil) {
				t.Errorf("besoin_claude %q without the subagent call: %+v", got.Raison, got.Appel)
			}
			if calls := [2]int{len(f.ollama.Requests()), len(f.openai.Requests())}; calls != tt.wantCalls {
				t.Errorf("models called %v, want %v", calls, tt.wantCalls)
			}
		})
	}
}

func TestRouterWatchdog(t *testing.T) {
	tests := []struct {
		name     string
		replies  []fakeollama.Reply
		wantStep string
		wantN    int
	}{
		{name: "silent model", replies: []fakeollama.Reply{fakeollama.Hang()}, wantStep: "try 1 on local", wantN: 1},
		{name: "streams, then stalls", replies: []fakeollama.Reply{{Text: goodPy, Hang: true}}, wantStep: "try 1 on local", wantN: 1},
		{name: "stalls on the repair", replies: []fakeollama.Reply{fakeollama.Answer(badPy), fakeollama.Hang()},
			wantStep: "try 2 on local", wantN: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ollama(t, true, tt.replies...)
			synctest.Test(t, func(t *testing.T) {
				hc := serveInMemory(t, o.Handler())
				r := &delegate.Router{
					Engines:     []delegate.Engine{&local.Engine{Host: o.URL(), Model: localModel, HTTPClient: hc}},
					Checker:     &controls.Pipeline{Load: delegate.LoadFiles},
					SansProgres: 30 * time.Second,
				}
				project := t.TempDir()
				start := time.Now()
				got := r.Run(t.Context(), delegate.Job{ID: "r1", Project: project, Req: addRequest()})
				if took := time.Since(start); took < 30*time.Second || took > 33*time.Second {
					t.Errorf("ended after %v, want 30s of silence (+ one tick)", took)
				}
				no := false
				want := wire.Answer{OK: &no, DemandeID: "r1", Etat: wire.BesoinClaude, Fin: wire.BesoinClaude,
					Raison: "sans_progres", Essais: tt.wantN,
					Message: "No progress for 30s during " + tt.wantStep + "; decide whether to retry or take it over."}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("answer (-want +got):\n%s", diff)
				}
				checkSortie(t, project, "add.py", "")
			})
		})
	}
}

// noSpend is an api ledger with nothing spent today.
func noSpend(context.Context) (float64, error) { return 0, nil }
