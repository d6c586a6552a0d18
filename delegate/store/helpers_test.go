package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"miam/delegate/wire"
)

// clock is a settable clock safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *clock { return &clock{t: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var t0 = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// openAt opens a store in dir on clk; it is closed at cleanup (a second
// Close is harmless).
func openAt(t testing.TB, dir string, clk *clock) *Store {
	t.Helper()
	s, err := Open(dir, &Options{Now: clk.Now})
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sampleRequest() wire.Request {
	ctl := []string{"syntaxe", "lint"}
	return wire.Request{
		Consigne:  "Write parse_header(line) returning (key, value).",
		Langue:    "en",
		Type:      "code",
		Fichiers:  []string{"src/http.py:10-40"},
		Sortie:    "src/header.py",
		Format:    "json",
		Schema:    []byte(`{"type":"object"}`),
		Retour:    "apercu",
		Moteur:    "auto",
		Controle:  &ctl,
		Attendus:  []string{"parse_header"},
		NTests:    3,
		Perimetre: []string{"src/header.py"},
		Essais:    2,
	}
}

func fullAnswer(id string) wire.Answer {
	ok := true
	return wire.Answer{
		OK:        &ok,
		DemandeID: id,
		Etat:      wire.Valide,
		Fin:       wire.Valide,
		Verdict:   wire.VerdictValide,
		Controles: []wire.Control{
			{Nom: "syntaxe", OK: true},
			{Nom: "lint", OK: true, Message: "2 warnings ignored"},
		},
		Essais:      2,
		MoteurFinal: "local",
		ModeleFinal: "qwen2.5-coder:7b",
		Sortie:      "src/header.py",
		Diff:        &wire.Diff{Files: []string{"src/header.py"}, Added: 12, Removed: 1},
		Corps:       "def parse_header(line): ...",
		Message:     "written",
		Reprise:     "miam attendre " + id,
		Appel:       &wire.SubagentCall{Tool: "Agent", Input: map[string]any{"model": "haiku", "prompt": "x"}},
		Lot:         []wire.Answer{{DemandeID: "dsub", Etat: wire.Termine}},
	}
}

// seq is a deterministic random source: 0, 1, 2, … as bytes.
type seq struct{ n byte }

func (r *seq) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.n
		r.n++
	}
	return len(p), nil
}

func ctx(t testing.TB) context.Context { return t.Context() }
