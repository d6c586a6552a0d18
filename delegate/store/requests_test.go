package store

import (
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func TestCreateGetFinishRoundTrip(t *testing.T) {
	clk := newClock(t0)
	s := openAt(t, t.TempDir(), clk)
	req := sampleRequest()
	id, err := s.Create(ctx(t), "sess-1", "/home/u/proj", req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	want := Record{
		ID: id, SessionID: "sess-1", Project: "/home/u/proj", Request: req, State: wire.EnFile,
		CreatedAt: t0, UpdatedAt: t0, ProgressAt: t0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("after Create (-want +got):\n%s", diff)
	}

	clk.Advance(time.Second)
	if err := s.SetState(ctx(t), id, wire.EnCours, "routed local"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if _, err := s.AddTry(ctx(t), Try{RequestID: id, Engine: "local", Model: "qwen", OK: true}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	ans := fullAnswer(id)
	stored, won, err := s.Finish(ctx(t), id, ans)
	if err != nil || !won {
		t.Fatalf("Finish = won %v, err %v; want won", won, err)
	}
	if diff := cmp.Diff(ans, stored); diff != "" {
		t.Errorf("Finish's stored answer (-want +got):\n%s", diff)
	}
	got, err = s.Get(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	want.State, want.Answer, want.Attempts = wire.Valide, &ans, 1
	want.UpdatedAt, want.ProgressAt, want.ProgressStep = t0.Add(3*time.Second), t0.Add(2*time.Second), "try 1 local/qwen"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after Finish (-want +got):\n%s", diff)
	}
}

func TestFinishCompletesAnswer(t *testing.T) {
	s := openAt(t, t.TempDir(), newClock(t0))
	no, yes := false, true
	tests := []struct {
		name string
		in   wire.Answer
		want func(id string) wire.Answer
	}{
		{
			name: "fin only, failure",
			in:   wire.Answer{Fin: wire.BesoinClaude, Raison: "aucun_executeur"},
			want: func(id string) wire.Answer {
				return wire.Answer{OK: &no, DemandeID: id, Etat: wire.BesoinClaude, Fin: wire.BesoinClaude, Raison: "aucun_executeur"}
			},
		},
		{
			name: "etat only, success",
			in:   wire.Answer{Etat: wire.Termine, Corps: "x"},
			want: func(id string) wire.Answer {
				return wire.Answer{OK: &yes, DemandeID: id, Etat: wire.Termine, Fin: wire.Termine, Corps: "x"}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := s.Create(ctx(t), "s", "/p", wire.Request{Consigne: "c"})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Finish(ctx(t), id, tt.in); err != nil {
				t.Fatal(err)
			}
			rec, err := s.Get(ctx(t), id)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want(id)
			if diff := cmp.Diff(&want, rec.Answer); diff != "" {
				t.Errorf("stored answer (-want +got):\n%s", diff)
			}
			if rec.Reason != tt.in.Raison {
				t.Errorf("reason = %q, want %q", rec.Reason, tt.in.Raison)
			}
		})
	}
}

func TestFinishFirstWins(t *testing.T) {
	s := openAt(t, t.TempDir(), newClock(t0))
	id, err := s.Create(ctx(t), "s", "/p", sampleRequest())
	if err != nil {
		t.Fatal(err)
	}
	first := fullAnswer(id)
	if _, won, err := s.Finish(ctx(t), id, first); err != nil || !won {
		t.Fatalf("first Finish: won %v, err %v", won, err)
	}
	for _, second := range []wire.Answer{
		{Fin: wire.Annule, Message: "cancelled late"},
		{Fin: wire.Perdue, Raison: "watchdog"},
		first,
	} {
		stored, won, err := s.Finish(ctx(t), id, second)
		if err != nil {
			t.Fatal(err)
		}
		if won {
			t.Errorf("Finish(%s) after finish: won", second.Fin)
		}
		if diff := cmp.Diff(first, stored); diff != "" {
			t.Errorf("Finish(%s) after finish returned (-want first +got):\n%s", second.Fin, diff)
		}
	}
	rec, _ := s.Get(ctx(t), id)
	if rec.State != wire.Valide {
		t.Errorf("state = %s, want valide", rec.State)
	}

	// Racing finishers: exactly one wins, all see its answer.
	id2, _ := s.Create(ctx(t), "s", "/p", sampleRequest())
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		seen    = map[string]bool{}
	)
	for _, fin := range []string{wire.Valide, wire.Termine, wire.Annule, wire.Perdue, wire.EchecControle, wire.BesoinClaude} {
		wg.Go(func() {
			stored, won, err := s.Finish(ctx(t), id2, wire.Answer{Fin: fin})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if won {
				winners = append(winners, fin)
			}
			seen[stored.Fin] = true
		})
	}
	wg.Wait()
	if len(winners) != 1 || len(seen) != 1 || !seen[winners[0]] {
		t.Errorf("racing Finish: winners %v, answers seen %v; want one winner seen by all", winners, seen)
	}
}

func TestFinishRejects(t *testing.T) {
	s := openAt(t, t.TempDir(), newClock(t0))
	id, _ := s.Create(ctx(t), "s", "/p", sampleRequest())
	tests := []struct {
		name  string
		id    string
		ans   wire.Answer
		errIs error
	}{
		{name: "no state", id: id, ans: wire.Answer{}, errIs: ErrBadState},
		{name: "running state", id: id, ans: wire.Answer{Etat: wire.EnCours}, errIs: ErrBadState},
		{name: "unknown state", id: id, ans: wire.Answer{Fin: "fini"}, errIs: ErrBadState},
		{name: "etat and fin differ", id: id, ans: wire.Answer{Etat: wire.Valide, Fin: wire.Annule}, errIs: ErrBadState},
		{name: "unknown id", id: "dnope", ans: wire.Answer{Fin: wire.Annule}, errIs: ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, won, err := s.Finish(ctx(t), tt.id, tt.ans)
			if !errors.Is(err, tt.errIs) || won {
				t.Errorf("Finish: won %v, err %v; want %v", won, err, tt.errIs)
			}
		})
	}
	if _, _, err := s.Finish(ctx(t), id, wire.Answer{Fin: wire.Annule, DemandeID: "dother"}); err == nil {
		t.Error("Finish with another request's answer: no error")
	}
	if rec, _ := s.Get(ctx(t), id); rec.State != wire.EnFile || rec.Answer != nil {
		t.Errorf("after rejected Finish: state %s, answer %v", rec.State, rec.Answer)
	}
}

func TestSetState(t *testing.T) {
	clk := newClock(t0)
	s := openAt(t, t.TempDir(), clk)
	running, _ := s.Create(ctx(t), "s", "/p", sampleRequest())
	done, _ := s.Create(ctx(t), "s", "/p", sampleRequest())
	if _, _, err := s.Finish(ctx(t), done, wire.Answer{Fin: wire.Annule}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		id    string
		state string
		errIs error
	}{
		{name: "en_cours", id: running, state: wire.EnCours},
		{name: "back to en_file", id: running, state: wire.EnFile},
		{name: "terminal refused", id: running, state: wire.Valide, errIs: ErrBadState},
		{name: "garbage refused", id: running, state: "x", errIs: ErrBadState},
		{name: "on terminal request", id: done, state: wire.EnCours, errIs: ErrTerminal},
		{name: "unknown id", id: "dnope", state: wire.EnCours, errIs: ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk.Advance(time.Second)
			err := s.SetState(ctx(t), tt.id, tt.state, "because "+tt.name)
			if !errors.Is(err, tt.errIs) {
				t.Fatalf("SetState: %v, want %v", err, tt.errIs)
			}
			if err != nil {
				return
			}
			rec, _ := s.Get(ctx(t), tt.id)
			if rec.State != tt.state || rec.Reason != "because "+tt.name || !rec.UpdatedAt.Equal(clk.Now()) {
				t.Errorf("record = %+v", rec)
			}
		})
	}
	if rec, _ := s.Get(ctx(t), done); rec.State != wire.Annule {
		t.Errorf("terminal request moved to %s", rec.State)
	}
}

func TestProgressAndStalled(t *testing.T) {
	clk := newClock(t0)
	s := openAt(t, t.TempDir(), clk)
	a, _ := s.Create(ctx(t), "s", "/p", sampleRequest())
	b, _ := s.Create(ctx(t), "s", "/p", sampleRequest())
	c, _ := s.Create(ctx(t), "s", "/p", sampleRequest()) // stays en_file: not watched
	for _, id := range []string{a, b} {
		if err := s.SetState(ctx(t), id, wire.EnCours, ""); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(5 * time.Minute)
	if err := s.Progress(ctx(t), b, "stream local/qwen"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(6 * time.Minute)

	stalled, err := s.Stalled(ctx(t), clk.Now().Add(-10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range stalled {
		ids = append(ids, r.ID)
	}
	if diff := cmp.Diff([]string{a}, ids); diff != "" {
		t.Errorf("Stalled (-want +got):\n%s", diff)
	}
	rb, _ := s.Get(ctx(t), b)
	if rb.ProgressStep != "stream local/qwen" || !rb.ProgressAt.Equal(t0.Add(5*time.Minute)) {
		t.Errorf("b progress = %s at %s", rb.ProgressStep, rb.ProgressAt)
	}

	// Progress on a finished request is a no-op; on an unknown one, ErrNotFound.
	s.Finish(ctx(t), c, wire.Answer{Fin: wire.Annule})
	if err := s.Progress(ctx(t), c, "late"); err != nil {
		t.Errorf("Progress on terminal: %v", err)
	}
	if rc, _ := s.Get(ctx(t), c); rc.ProgressStep != "" {
		t.Errorf("terminal request's step changed to %q", rc.ProgressStep)
	}
	if err := s.Progress(ctx(t), "dnope", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Progress on unknown: %v", err)
	}
}

func TestQueue(t *testing.T) {
	s := openAt(t, t.TempDir(), newClock(t0))
	for _, fin := range []string{"", "", wire.EnCours, wire.Valide, wire.Valide, wire.Perdue} {
		id, err := s.Create(ctx(t), "s", "/p", sampleRequest())
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case fin == wire.EnCours:
			s.SetState(ctx(t), id, fin, "")
		case fin != "":
			s.Finish(ctx(t), id, wire.Answer{Fin: fin})
		}
	}
	got, err := s.Queue(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		wire.EnFile: 2, wire.EnCours: 1, wire.Valide: 2, wire.Termine: 0,
		wire.EchecControle: 0, wire.BesoinClaude: 0, wire.Annule: 0, wire.Perdue: 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Queue (-want +got):\n%s", diff)
	}
}

func TestIDsSortAndNeverRepeat(t *testing.T) {
	clk := newClock(t0)
	s, err := Open(t.TempDir(), &Options{Now: clk.Now, Rand: &seq{n: 250}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	for i := range 50 {
		if i%10 == 0 {
			clk.Advance(time.Millisecond)
		}
		if i == 25 {
			clk.Advance(-time.Second) // a clock step back must not break order
		}
		id, err := s.Create(ctx(t), "s", "/p", wire.Request{Consigne: "c"})
		if err != nil {
			t.Fatal(err)
		}
		if len(id) != 19 || id[0] != 'd' {
			t.Fatalf("id %q: want d + 18 base-32 digits", id)
		}
		ids = append(ids, id)
	}
	if !sort.StringsAreSorted(ids) {
		t.Errorf("ids not in creation order: %v", ids)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Errorf("id %s repeated", ids[i])
		}
	}
}

func TestConcurrentCreateFinish(t *testing.T) {
	s := openAt(t, t.TempDir(), newClock(t0))
	const n = 20
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id, err := s.Create(ctx(t), "s", "/p", sampleRequest())
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = id
			if err := s.SetState(ctx(t), id, wire.EnCours, ""); err != nil {
				t.Error(err)
			}
			if err := s.Progress(ctx(t), id, "stream"); err != nil {
				t.Error(err)
			}
			if _, err := s.AddTry(ctx(t), Try{RequestID: id, Engine: "api", Model: "m", CostUSD: 0.01, OK: true}); err != nil {
				t.Error(err)
			}
			if _, err := s.Get(ctx(t), id); err != nil {
				t.Error(err)
			}
			if _, won, err := s.Finish(ctx(t), id, fullAnswer(id)); err != nil || !won {
				t.Errorf("Finish %s: won %v, err %v", id, won, err)
			}
		})
	}
	wg.Wait()
	q, err := s.Queue(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if q[wire.Valide] != n || q[wire.EnFile]+q[wire.EnCours] != 0 {
		t.Errorf("Queue = %v, want %d valide", q, n)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		rec, err := s.Get(ctx(t), id)
		if err != nil || rec.State != wire.Valide || rec.Attempts != 1 || seen[id] {
			t.Errorf("request %q: %+v, %v", id, rec, err)
		}
		seen[id] = true
	}
	spent, _ := s.SpentToday(ctx(t), "api", t0)
	if spent < 0.2-1e-9 || spent > 0.2+1e-9 {
		t.Errorf("spent = %v, want 0.20", spent)
	}
}
