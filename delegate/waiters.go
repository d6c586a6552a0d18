package delegate

import "sync"

// waiters wakes everyone waiting on a request when it reaches a terminal
// state. A waiter registers first, then reads the state: a request that
// ended in between has closed the channel it got.
type waiters struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// wait returns a channel closed when id ends.
func (w *waiters) wait(id string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]chan struct{}{}
	}
	ch, ok := w.m[id]
	if !ok {
		ch = make(chan struct{})
		w.m[id] = ch
	}
	return ch
}

// done wakes id's waiters.
func (w *waiters) done(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.m[id]; ok {
		close(ch)
		delete(w.m, id)
	}
}
