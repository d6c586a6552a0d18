package local

import (
	"context"
	"slices"
	"sync"
)

type sessionKey struct{}

// WithSession returns a context whose requests to the local engine queue as
// session id. The queue serves sessions in turn (round robin), so one
// session's batch of bouts cannot starve another's; within a session,
// requests keep their arrival order. A context without a session queues as
// the session "".
func WithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// SessionFrom returns the session WithSession put in ctx, "" when none.
func SessionFrom(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey{}).(string)
	return id
}

func sessionOf(ctx context.Context) string { return SessionFrom(ctx) }

// queue lets one request run at a time, handing the turn to waiting sessions
// in round robin. Its zero value is an idle queue.
type queue struct {
	mu      sync.Mutex
	busy    bool
	waiting map[string][]chan struct{} // per session, in arrival order
	order   []string                   // sessions with waiters, next turn first
}

// acquire waits for the turn of session, or for ctx to end.
func (q *queue) acquire(ctx context.Context, session string) error {
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if q.waiting == nil {
		q.waiting = map[string][]chan struct{}{}
	}
	if len(q.waiting[session]) == 0 {
		q.order = append(q.order, session)
	}
	q.waiting[session] = append(q.waiting[session], ch)
	q.mu.Unlock()

	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-ch: // the turn came as ctx ended: pass it on
		q.handOff(session)
		return ctx.Err()
	default:
	}
	w := slices.DeleteFunc(q.waiting[session], func(c chan struct{}) bool { return c == ch })
	q.waiting[session] = w
	if len(w) == 0 {
		delete(q.waiting, session)
		q.order = slices.DeleteFunc(q.order, func(s string) bool { return s == session })
	}
	return ctx.Err()
}

// release ends the turn of session and hands it to the next one.
func (q *queue) release(session string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.handOff(session)
}

// handOff gives the turn to the first waiting session, preferring another
// session than the one whose turn just ended; q.mu is held.
func (q *queue) handOff(ended string) {
	if len(q.order) == 0 {
		q.busy = false
		return
	}
	if q.order[0] == ended && len(q.order) > 1 {
		q.order = append(q.order[1:], ended)
	}
	s := q.order[0]
	q.order = q.order[1:]
	w := q.waiting[s]
	ch := w[0]
	if len(w) > 1 {
		q.waiting[s] = w[1:]
		q.order = append(q.order, s)
	} else {
		delete(q.waiting, s)
	}
	close(ch)
}
