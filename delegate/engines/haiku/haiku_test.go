package haiku

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"miam/delegate"
	"miam/fixtures/fakeapi"
)

func prompt(user string) delegate.Prompt {
	return delegate.Prompt{Messages: []delegate.Message{
		{Role: "system", Content: "You write Python."},
		{Role: "user", Content: user},
	}}
}

func TestCompleteGoodAnswer(t *testing.T) {
	text := strings.Repeat("def add(a, b):\n    return a + b\n", 5) // several deltas
	srv := fakeapi.New([]fakeapi.Step{{Name: "answer", Reply: []fakeapi.Block{fakeapi.Text(text)}}})
	defer srv.Close()
	e := &Engine{BaseURL: srv.URL(), Key: "sk-ant-test"}

	progress := 0
	got, err := e.Complete(t.Context(), prompt("write add"), func() { progress++ })
	if err != nil {
		t.Fatal(err)
	}
	out := 1 + len(text)/4 // fakeapi's output count; it always reports 100 in
	want := delegate.Completion{Text: text, Model: DefaultModel, InputTokens: 100, OutputTokens: out,
		CostUSD: (100*1.0 + float64(out)*5.0) / 1e6}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Completion (-want +got):\n%s", diff)
	}
	if progress < 6 { // message_start, block start, ≥2 deltas, block stop, message_delta, message_stop
		t.Errorf("progress called %d times, want one per event", progress)
	}
	r := srv.Requests()[0]
	gotReq := map[string]any{
		"path": r.Path, "system": r.System, "model": r.Body["model"], "max_tokens": r.Body["max_tokens"],
		"stream": r.Body["stream"], "user": r.Messages[0].Text(), "n": len(r.Messages),
		"auth": r.Header.Get("Authorization"), "has version": r.Header.Get("Anthropic-Version") != "",
	}
	wantReq := map[string]any{
		"path": "/v1/messages", "system": "You write Python.", "model": DefaultModel, "max_tokens": 8192.0,
		"stream": true, "user": "write add", "n": 1,
		"auth": "Bearer sk-ant-test", "has version": true, // SDK v2.15 sends 2026-10-21, not WIRE.md's 2023-06-01
	}
	if diff := cmp.Diff(wantReq, gotReq); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

func TestRetryPromptCarriesFailure(t *testing.T) {
	failure := "SyntaxError: expected ':'"
	srv := fakeapi.New([]fakeapi.Step{
		{Name: "fixed", When: fakeapi.LastUserContains(failure), Reply: []fakeapi.Block{fakeapi.Text("def add(a, b):\n    return a + b\n")}},
		{Name: "broken", Reply: []fakeapi.Block{fakeapi.Text("def add(a, b)\n")}},
	})
	defer srv.Close()
	e := &Engine{BaseURL: srv.URL(), Key: "k", Model: "claude-haiku-4-5-20251001"}
	p := prompt("write add")
	first, err := e.Complete(t.Context(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Messages = append(p.Messages, delegate.Message{Role: "assistant", Content: first.Text},
		delegate.Message{Role: "user", Content: "The control failed:\n" + failure})
	second, err := e.Complete(t.Context(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(second.Text, "return a + b\n") || second.Model != "claude-haiku-4-5-20251001" {
		t.Errorf("second answer %+v", second)
	}
	if p := srv.Pending(); len(p) != 0 {
		t.Errorf("steps never used: %v (the retry did not carry the failure)", p)
	}
}

// serve starts a one-off Messages server for the error paths fakeapi does
// not script. It reads each request body first, as a real server does, so
// the request's context ends when the client goes away.
func serve(h http.HandlerFunc) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h(w, r)
	}))
}

// apiError writes the Messages API's error body.
func apiError(w http.ResponseWriter, status int, kind string, header map[string]string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"scripted %d"},"request_id":"req_1"}`, kind, status)
}

// events writes server-sent events, then ends as end says.
func events(w http.ResponseWriter, evs ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, ev := range evs {
		name, _, _ := strings.Cut(ev, "|")
		data := strings.TrimPrefix(ev, name+"|")
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
	}
	w.(http.Flusher).Flush()
}

const (
	evStart = `message_start|{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`
	evBlock = `content_block_start|{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	evDelta = `content_block_delta|{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"def f("}}`
	evStop  = `content_block_stop|{"type":"content_block_stop","index":0}`
	evStopM = `message_stop|{"type":"message_stop"}`
)

func TestCompleteErrors(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		timeout time.Duration
		want    delegate.Kind
		after   time.Duration
	}{
		{name: "429 Retry-After seconds", want: delegate.RateLimited, after: 7 * time.Second,
			handler: func(w http.ResponseWriter, r *http.Request) {
				apiError(w, 429, "rate_limit_error", map[string]string{"Retry-After": "7"})
			}},
		{name: "429 retry-after-ms wins", want: delegate.RateLimited, after: 1500 * time.Millisecond,
			handler: func(w http.ResponseWriter, r *http.Request) {
				apiError(w, 429, "rate_limit_error", map[string]string{"Retry-After": "7", "Retry-After-Ms": "1500"})
			}},
		{name: "429 Retry-After date", want: delegate.RateLimited, after: time.Minute,
			handler: func(w http.ResponseWriter, r *http.Request) {
				apiError(w, 429, "rate_limit_error", map[string]string{"Retry-After": "Sun, 01 Mar 2026 12:01:00 GMT"})
			}},
		{name: "401", want: delegate.Refused, handler: func(w http.ResponseWriter, r *http.Request) {
			apiError(w, 401, "authentication_error", nil)
		}},
		{name: "403", want: delegate.Refused, handler: func(w http.ResponseWriter, r *http.Request) {
			apiError(w, 403, "permission_error", nil)
		}},
		{name: "400", want: delegate.Fatal, handler: func(w http.ResponseWriter, r *http.Request) {
			apiError(w, 400, "invalid_request_error", nil)
		}},
		{name: "500", want: delegate.Transient, handler: func(w http.ResponseWriter, r *http.Request) {
			apiError(w, 500, "api_error", nil)
		}},
		{name: "529 overloaded", want: delegate.Transient, handler: func(w http.ResponseWriter, r *http.Request) {
			apiError(w, 529, "overloaded_error", nil)
		}},
		{name: "error event mid-stream", want: delegate.Transient, handler: func(w http.ResponseWriter, r *http.Request) {
			events(w, evStart, evBlock, evDelta, `error|{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		}},
		{name: "rate limit event mid-stream", want: delegate.RateLimited, handler: func(w http.ResponseWriter, r *http.Request) {
			events(w, evStart, `error|{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
		}},
		{name: "refusal", want: delegate.Refused, handler: func(w http.ResponseWriter, r *http.Request) {
			events(w, evStart, evBlock, evStop,
				`message_delta|{"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null},"usage":{"output_tokens":1}}`, evStopM)
		}},
		{name: "truncated stream", want: delegate.Transient, handler: func(w http.ResponseWriter, r *http.Request) {
			events(w, evStart, evBlock, evDelta)
			fmt.Fprint(w, "event: content_block_delta\ndata: {\"type\":\"content_blo")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}},
		{name: "stream ends cleanly but early", want: delegate.Transient, handler: func(w http.ResponseWriter, r *http.Request) {
			events(w, evStart, evBlock, evDelta)
		}},
		{name: "hang", timeout: 50 * time.Millisecond, want: delegate.Transient, handler: func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(tt.handler)
			defer srv.Close()
			e := &Engine{BaseURL: srv.URL, Key: "k", Now: func() time.Time { return now }}
			ctx := t.Context()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			_, err := e.Complete(ctx, prompt("x"), nil)
			var de *delegate.Error
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want a *delegate.Error", err)
			}
			type result struct {
				Kind       delegate.Kind
				Engine     string
				RetryAfter time.Duration
			}
			if diff := cmp.Diff(result{tt.want, "haiku", tt.after}, result{de.Kind, de.Engine, de.RetryAfter}); diff != "" {
				t.Errorf("(-want +got):\n%s\nerr: %v", diff, err)
			}
		})
	}
}

func TestCompleteHangAfterTokensCancelled(t *testing.T) {
	srv := serve(func(w http.ResponseWriter, r *http.Request) {
		events(w, evStart, evBlock, evDelta)
		<-r.Context().Done()
	})
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	progress := 0
	_, err := (&Engine{BaseURL: srv.URL, Key: "k"}).Complete(ctx, prompt("x"), func() {
		progress++
		if progress == 3 {
			cancel()
		}
	})
	if k := delegate.KindOf(err); k != delegate.Transient || progress < 3 {
		t.Errorf("kind %v after %d progress calls (err %v), want transient", k, progress, err)
	}
}

func TestCompleteRejectsBadPrompts(t *testing.T) {
	e := &Engine{BaseURL: "http://127.0.0.1:1", Key: "k"}
	tests := []struct {
		name string
		p    delegate.Prompt
		want delegate.Kind
	}{
		{"no user message", delegate.Prompt{Messages: []delegate.Message{{Role: "system", Content: "s"}}}, delegate.Fatal},
		{"unknown role", delegate.Prompt{Messages: []delegate.Message{{Role: "tool", Content: "s"}}}, delegate.Fatal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.Complete(t.Context(), tt.p, nil)
			if k := delegate.KindOf(err); k != tt.want {
				t.Errorf("kind %v (err %v), want %v", k, err, tt.want)
			}
		})
	}
	if _, err := (&Engine{}).Complete(t.Context(), prompt("x"), nil); delegate.KindOf(err) != delegate.Refused {
		t.Errorf("no key: %v, want refused", err)
	}
}

func TestAvailable(t *testing.T) {
	tests := []struct {
		name   string
		engine *Engine
		want   delegate.Availability
	}{
		{"no key", &Engine{}, delegate.Availability{Reason: "no key", Model: DefaultModel}},
		{"key", &Engine{Key: "k"}, delegate.Availability{Ready: true, Model: DefaultModel}},
		{"configured model", &Engine{Key: "k", Model: "claude-haiku-4-5-20251001"}, delegate.Availability{Ready: true, Model: "claude-haiku-4-5-20251001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.engine.Available(t.Context(), "any")); diff != "" {
				t.Errorf("Available (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{"ms", http.Header{"Retry-After-Ms": {"250.5"}}, 250 * time.Millisecond},
		{"ms NaN falls back", http.Header{"Retry-After-Ms": {"NaN"}, "Retry-After": {"2"}}, 2 * time.Second},
		{"ms Inf capped", http.Header{"Retry-After-Ms": {"+Inf"}}, delegate.MaxRetryAfter},
		{"date", http.Header{"Retry-After": {"Sun, 01 Mar 2026 12:00:30 GMT"}}, 30 * time.Second},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0},
		{"garbage", http.Header{"Retry-After": {"later"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryAfter(tt.header, now); got != tt.want {
				t.Errorf("retryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzRetryAfter(f *testing.F) {
	f.Add("3", "")
	f.Add("Sun, 01 Mar 2026 12:00:30 GMT", "1e300")
	f.Add("", "-5")
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, after, afterMs string) {
		h := http.Header{"Retry-After": {after}, "Retry-After-Ms": {afterMs}}
		if d := retryAfter(h, now); d < 0 || d > delegate.MaxRetryAfter {
			t.Fatalf("retryAfter(%q, %q) = %v", after, afterMs, d)
		}
	})
}

func TestCost(t *testing.T) {
	e := &Engine{}
	tests := []struct {
		name                        string
		in, out, cacheWrite, cached int64
		want                        float64
	}{
		{"million in", 1_000_000, 0, 0, 0, 1},
		{"million out", 0, 1_000_000, 0, 0, 5},
		{"cache priced", 0, 0, 1_000_000, 1_000_000, 1.25 + 0.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := anthropic.Usage{InputTokens: tt.in, OutputTokens: tt.out,
				CacheCreationInputTokens: tt.cacheWrite, CacheReadInputTokens: tt.cached}
			if got := e.cost(u); got < tt.want-1e-9 || got > tt.want+1e-9 {
				t.Errorf("cost = %v, want %v", got, tt.want)
			}
		})
	}
}
