package local

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
)

func TestSessionFromContext(t *testing.T) {
	if got := SessionFrom(t.Context()); got != "" {
		t.Errorf("no session: %q", got)
	}
	if got := SessionFrom(WithSession(t.Context(), "s1")); got != "s1" {
		t.Errorf("SessionFrom = %q", got)
	}
}

// TestQueueRoundRobin holds the turn, queues requests from three sessions
// (A's three first), then lets each finish in turn and records who ran.
func TestQueueRoundRobin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q queue
		ctx := t.Context()
		if err := q.acquire(ctx, "X"); err != nil {
			t.Fatal(err)
		}
		var (
			mu   sync.Mutex
			ran  []string
			next = make(chan struct{})
		)
		for _, r := range []struct{ session, id string }{
			{"A", "A1"}, {"A", "A2"}, {"A", "A3"}, {"B", "B1"}, {"X", "X2"}, {"C", "C1"}, {"B", "B2"},
		} {
			go func() {
				if err := q.acquire(ctx, r.session); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				ran = append(ran, r.id)
				mu.Unlock()
				<-next
				q.release(r.session)
			}()
			synctest.Wait() // queued in this order
		}
		q.release("X")
		for range 7 {
			synctest.Wait()
			next <- struct{}{}
		}
		synctest.Wait()
		want := []string{"A1", "B1", "X2", "C1", "A2", "B2", "A3"}
		if diff := cmp.Diff(want, ran); diff != "" {
			t.Errorf("turns (-want +got):\n%s", diff)
		}
		if q.busy || len(q.order) != 0 || len(q.waiting) != 0 {
			t.Errorf("queue not idle: busy %v order %v waiting %v", q.busy, q.order, q.waiting)
		}
	})
}

func TestQueueCancelledWaiterLosesItsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q queue
		if err := q.acquire(t.Context(), "A"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { errc <- q.acquire(ctx, "B") }()
		got := make(chan struct{})
		go func() {
			if err := q.acquire(t.Context(), "C"); err != nil {
				t.Error(err)
			}
			close(got)
		}()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled waiter: %v", err)
		}
		q.release("A")
		<-got // C runs, B's turn was dropped
		q.release("C")
		if q.busy {
			t.Error("queue still busy")
		}
	})
}

func TestCompleteWaitsForTurn(t *testing.T) {
	e := &Engine{Host: "http://127.0.0.1:1"}
	if err := e.queue.acquire(t.Context(), "other"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(WithSession(t.Context(), "me"))
	cancel()
	_, err := e.Complete(ctx, prompt("x"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want cancelled while waiting", err)
	}
}
