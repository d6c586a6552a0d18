package delegate_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"slices"
	"testing"
	"time"

	"miam/delegate"
	"miam/delegate/wire"
)

// instant stands for a model that answers at once with a good file, so that
// what is measured is miam's own overhead: the real controls, store and
// output writes. With a gate it answers once per value received.
type instant struct{ gate chan struct{} }

func (instant) Name() string { return "local" }

func (instant) Available(context.Context, string) delegate.Availability {
	return delegate.Availability{Ready: true, Model: "instant"}
}

func (e instant) Complete(ctx context.Context, _ delegate.Prompt, progress func()) (delegate.Completion, error) {
	if e.gate != nil {
		select {
		case <-e.gate:
		case <-ctx.Done():
			return delegate.Completion{}, ctx.Err()
		}
	}
	progress()
	return delegate.Completion{Text: fencedPy, Model: "instant"}, nil
}

// BenchmarkRequestOverhead is deleguer from enqueue to its terminal answer
// with an instant model: validation, the queue and journal in SQLite, the
// controls syntaxe and complet, and, with a sortie, the output written
// through the claim protocol.
func BenchmarkRequestOverhead(b *testing.B) {
	for _, sortie := range []bool{true, false} {
		b.Run(fmt.Sprintf("sortie=%v", sortie), func(b *testing.B) {
			d, project := openDaemon(b, fakes{}, delegate.Config{Engines: []delegate.Engine{instant{}}, CallWait: time.Minute})
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				req := addRequest()
				req.Sortie = ""
				if sortie {
					req.Sortie = fmt.Sprintf("out/add%d.py", i)
				}
				a, err := d.Submit(b.Context(), "s1", project, req)
				if err != nil || a.Fin != wire.Valide {
					b.Fatalf("%+v, %v", a, err)
				}
			}
		})
	}
}

// served is a daemon serving its routes on 127.0.0.1 with a gated model,
// every /attendre announced on entered as it reaches the handler.
type served struct {
	d       *delegate.Daemon
	project string
	gate    chan struct{}
	entered chan struct{}
	url     string
	hdr     string
}

func serveDaemon(tb testing.TB, waiters int) *served {
	s := &served{gate: make(chan struct{}), entered: make(chan struct{}, waiters+1)}
	s.d, s.project = openDaemon(tb, fakes{}, delegate.Config{Engines: []delegate.Engine{instant{gate: s.gate}},
		CallWait: time.Millisecond})
	h := s.d.Handler()
	announce := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/attendre" {
			select {
			case s.entered <- struct{}{}:
			default:
			}
		}
		h.ServeHTTP(w, r)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.d.Run(ctx, announce) }()
	tb.Cleanup(func() {
		cancel()
		<-done
	})
	s.url = s.d.Addr().URL()
	s.hdr = "Bearer " + s.d.Token()
	return s
}

// pending submits a request that waits for the gate, answered ok: null.
func (s *served) pending(tb testing.TB) string {
	req := addRequest()
	req.Sortie, req.Controle = "", &[]string{}
	a, err := s.d.Submit(context.Background(), "s1", s.project, req)
	if err != nil || a.OK != nil {
		tb.Fatalf("submit: %+v, %v", a, err)
	}
	return a.DemandeID
}

// BenchmarkAttendreWake is the latency from the model's answer to the
// /attendre response of a waiter already waiting: the request's end (no
// control, its answer stored in SQLite), the wake, the stored answer read
// back and sent over loopback HTTP.
func BenchmarkAttendreWake(b *testing.B) {
	s := serveDaemon(b, 1)
	client := &http.Client{}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		id := s.pending(b)
		req, _ := http.NewRequest(http.MethodGet, s.url+"/attendre?demande_id="+id, nil)
		req.Header.Set("Authorization", s.hdr)
		got := make(chan wire.Answer, 1)
		go func() {
			var a wire.Answer
			resp, err := client.Do(req)
			if err == nil {
				json.NewDecoder(resp.Body).Decode(&a)
				resp.Body.Close()
			}
			got <- a
		}()
		<-s.entered
		b.StartTimer()
		s.gate <- struct{}{}
		if a := <-got; a.Fin != wire.Termine || a.DemandeID != id {
			b.Fatalf("/attendre answered %+v", a)
		}
	}
}

// waitStats is what thousand waiters cost and how fast they woke.
type waitStats struct {
	bytesPerWaiter    float64
	p50, p99, maxWake time.Duration
}

// waitMany parks n /attendre waiters on a new pending request of s over raw
// loopback connections (no client goroutine while they wait, so that the
// memory measured is the daemon's), then lets the model answer and times
// each waiter's response from that moment.
func waitMany(tb testing.TB, s *served, n int) waitStats {
	id := s.pending(tb)
	addr := s.url[len("http://"):]

	var before, during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	conns := make([]net.Conn, n)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			tb.Fatalf("waiter %d: %v", i, err)
		}
		fmt.Fprintf(c, "GET /attendre?demande_id=%s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\n\r\n", id, addr, s.hdr)
		conns[i] = c
	}
	for range n {
		<-s.entered
	}
	runtime.GC()
	runtime.ReadMemStats(&during)
	grown := int64(during.HeapInuse+during.StackInuse) - int64(before.HeapInuse+before.StackInuse)

	type result struct {
		end time.Time
		a   wire.Answer
		err error
	}
	results := make(chan result, n)
	for _, c := range conns {
		go func() {
			var r result
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			r.end = time.Now()
			if err == nil {
				err = json.NewDecoder(resp.Body).Decode(&r.a)
				resp.Body.Close()
			}
			r.err = err
			results <- r
		}()
	}
	t0 := time.Now()
	s.gate <- struct{}{}
	took := make([]time.Duration, 0, n)
	for range n {
		r := <-results
		if r.err != nil || r.a.Fin != wire.Termine || r.a.DemandeID != id {
			tb.Fatalf("a waiter got %+v, %v", r.a, r.err)
		}
		took = append(took, r.end.Sub(t0))
	}
	slices.Sort(took)
	return waitStats{bytesPerWaiter: float64(grown) / float64(n),
		p50: took[n/2], p99: took[n*99/100], maxWake: took[n-1]}
}

// TestThousandWaiters parks 1,000 /attendre on one daemon: each gets the
// terminal answer once the request ends.
func TestThousandWaiters(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 loopback connections")
	}
	st := waitMany(t, serveDaemon(t, 1000), 1000)
	t.Logf("1000 waiters: %.0f B/waiter (daemon side), wake p50 %v, p99 %v, max %v", st.bytesPerWaiter, st.p50, st.p99, st.maxWake)
}

// BenchmarkThousandWaiters reports the memory a parked waiter costs the
// daemon and how long 1,000 of them take to wake.
func BenchmarkThousandWaiters(b *testing.B) {
	s := serveDaemon(b, 1000)
	var all []waitStats
	for b.Loop() {
		all = append(all, waitMany(b, s, 1000))
	}
	mean := func(f func(waitStats) float64) float64 {
		var s float64
		for _, w := range all {
			s += f(w)
		}
		return s / float64(len(all))
	}
	b.ReportMetric(mean(func(w waitStats) float64 { return w.bytesPerWaiter }), "B/waiter")
	b.ReportMetric(mean(func(w waitStats) float64 { return float64(w.p50.Microseconds()) }), "wake-p50-µs")
	b.ReportMetric(mean(func(w waitStats) float64 { return float64(w.p99.Microseconds()) }), "wake-p99-µs")
	b.ReportMetric(mean(func(w waitStats) float64 { return float64(w.maxWake.Microseconds()) }), "wake-max-µs")
}
