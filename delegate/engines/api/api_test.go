package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/delegate"
	"miam/fixtures/fakeopenai"
	"miam/fixtures/fakestream"
)

const model = "qwen/qwen3-coder"

func engine(srv *fakeopenai.Server) *Engine {
	return &Engine{
		BaseURL:    srv.URL() + "/api/v1",
		Key:        "sk-or-test",
		Model:      model,
		Projects:   []string{"proj"},
		SpentToday: func(context.Context) (float64, error) { return 0, nil },
	}
}

func prompt(user string) delegate.Prompt {
	return delegate.Prompt{Messages: []delegate.Message{
		{Role: "system", Content: "You write Python."},
		{Role: "user", Content: user},
	}}
}

func TestCompleteGoodAnswer(t *testing.T) {
	text := "def add(a, b):\n    return a + b\n# é, streamed in pieces\n"
	reply := fakeopenai.Answer(text).WithCost(0.00123)
	reply.InputTokens, reply.OutputTokens, reply.Model = 40, 12, "qwen/qwen3-coder-20250722"
	srv := fakeopenai.New(reply)
	defer srv.Close()

	progress := 0
	got, err := engine(srv).Complete(t.Context(), prompt("write add"), func() { progress++ })
	if err != nil {
		t.Fatal(err)
	}
	want := delegate.Completion{Text: text, Model: "qwen/qwen3-coder-20250722", InputTokens: 40, OutputTokens: 12, CostUSD: 0.00123}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Completion (-want +got):\n%s", diff)
	}
	// One call per text chunk, the finish chunk and the usage chunk.
	if wantN := len(fakestream.Split(text)) + 2; progress != wantN {
		t.Errorf("progress called %d times, want %d", progress, wantN)
	}
	r := srv.Requests()[0]
	gotReq := map[string]any{
		"path": r.Path, "model": r.Model, "stream": r.Stream, "messages": r.Messages,
		"authorization": r.Header.Get("Authorization"), "referer": r.Header.Get("HTTP-Referer"),
		"title": r.Header.Get("X-Title"), "or-title": r.Header.Get("X-OpenRouter-Title"),
		"stream_options": r.Body["stream_options"],
	}
	wantReq := map[string]any{
		"path": "/api/v1/chat/completions", "model": model, "stream": true,
		"messages":      []fakeopenai.Message{{Role: "system", Content: "You write Python."}, {Role: "user", Content: "write add"}},
		"authorization": "Bearer sk-or-test", "referer": DefaultReferer, "title": "miam", "or-title": "miam",
		"stream_options": map[string]any{"include_usage": true},
	}
	if diff := cmp.Diff(wantReq, gotReq); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

// TestConcurrentCostsStaySeparate checks the per-call capture: each answer
// carries its own usage.cost however the two calls interleave.
func TestConcurrentCostsStaySeparate(t *testing.T) {
	srv := fakeopenai.New(fakeopenai.Answer("a").WithCost(0.1), fakeopenai.Answer("b").WithCost(0.2))
	defer srv.Close()
	e := engine(srv)
	var wg sync.WaitGroup
	got := make([]delegate.Completion, 2)
	for i := range got {
		wg.Go(func() {
			c, err := e.Complete(t.Context(), prompt("x"), nil)
			if err != nil {
				t.Error(err)
			}
			got[i] = c
		})
	}
	wg.Wait()
	for _, c := range got {
		if want := map[string]float64{"a": 0.1, "b": 0.2}[c.Text]; c.CostUSD != want {
			t.Errorf("answer %q cost %v, want %v", c.Text, c.CostUSD, want)
		}
	}
}

func TestCompleteErrors(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		reply   fakeopenai.Reply
		timeout time.Duration
		want    delegate.Kind
		after   time.Duration
	}{
		{name: "429 with seconds", reply: fakeopenai.RateLimited("7"), want: delegate.RateLimited, after: 7 * time.Second},
		{name: "429 with a date", reply: fakeopenai.RateLimited("Sun, 01 Mar 2026 12:01:30 GMT"), want: delegate.RateLimited, after: 90 * time.Second},
		{name: "429 without Retry-After", reply: fakeopenai.RateLimited(""), want: delegate.RateLimited},
		{name: "401 bad key", reply: fakeopenai.Status(http.StatusUnauthorized, "No auth credentials found"), want: delegate.Refused},
		{name: "402 no credits", reply: fakeopenai.Status(http.StatusPaymentRequired, "Insufficient credits"), want: delegate.Refused},
		{name: "403 moderation", reply: fakeopenai.Status(http.StatusForbidden, "flagged"), want: delegate.Refused},
		{name: "404 no such model", reply: fakeopenai.Status(http.StatusNotFound, "No endpoints found"), want: delegate.Refused},
		{name: "400 bad request", reply: fakeopenai.Status(http.StatusBadRequest, "context too long"), want: delegate.Fatal},
		{name: "500", reply: fakeopenai.ServerError(), want: delegate.Transient},
		{name: "503 with Retry-After", reply: fakeopenai.Reply{Status: 503, Message: "overloaded", RetryAfter: "2"}, want: delegate.Transient, after: 2 * time.Second},
		{name: "truncated stream", reply: fakeopenai.Truncated("def add(a, b):\n    return a + b\n"), want: delegate.Transient},
		{name: "truncated before any token", reply: fakeopenai.Truncated(""), want: delegate.Transient},
		{name: "hang", reply: fakeopenai.Hang(), timeout: 50 * time.Millisecond, want: delegate.Transient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeopenai.New(tt.reply)
			defer srv.Close()
			e := engine(srv)
			e.Now = func() time.Time { return now }
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
			if diff := cmp.Diff(result{tt.want, "api", tt.after}, result{de.Kind, de.Engine, de.RetryAfter}); diff != "" {
				t.Errorf("(-want +got):\n%s\nerr: %v", diff, err)
			}
		})
	}
}

func TestCompleteHangAfterTokensCancelled(t *testing.T) {
	srv := fakeopenai.New(fakeopenai.Reply{Text: "def f(", Hang: true})
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	progress := 0
	_, err := engine(srv).Complete(ctx, prompt("x"), func() { progress++; cancel() })
	if k := delegate.KindOf(err); k != delegate.Transient || progress == 0 {
		t.Errorf("kind %v after %d progress calls (err %v), want transient after progress", k, progress, err)
	}
}

func TestRetryPromptCarriesFailure(t *testing.T) {
	srv := fakeopenai.New(fakeopenai.Answer("def add(a, b)\n"), fakeopenai.Good())
	defer srv.Close()
	e := engine(srv)
	p := prompt("write add")
	first, err := e.Complete(t.Context(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	failure := "SyntaxError: expected ':'"
	p.Messages = append(p.Messages, delegate.Message{Role: "assistant", Content: first.Text},
		delegate.Message{Role: "user", Content: "The control failed:\n" + failure})
	if _, err := e.Complete(t.Context(), p, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[1].LastUser(); !strings.Contains(got, failure) {
		t.Errorf("retry prompt %q lacks the failure", got)
	}
}

func TestAvailable(t *testing.T) {
	spent := func(v float64, err error) func(context.Context) (float64, error) {
		return func(context.Context) (float64, error) { return v, err }
	}
	base := func(mod func(*Engine)) *Engine {
		e := &Engine{Key: "k", Model: model, Projects: []string{"proj"}, SpentToday: spent(0.5, nil)}
		if mod != nil {
			mod(e)
		}
		return e
	}
	tests := []struct {
		name    string
		engine  *Engine
		project string
		want    delegate.Availability
	}{
		{name: "ready", engine: base(nil), project: "proj", want: delegate.Availability{Ready: true, Model: model}},
		{name: "project not allowed", engine: base(nil), project: "other",
			want: delegate.Availability{Reason: "project not allowed", Model: model}},
		{name: "no project listed", engine: base(func(e *Engine) { e.Projects = nil }), project: "proj",
			want: delegate.Availability{Reason: "project not allowed", Model: model}},
		{name: "default cap reached", engine: base(func(e *Engine) { e.SpentToday = spent(2, nil) }), project: "proj",
			want: delegate.Availability{Reason: "daily cap reached (2.00 of 2.00 USD)", Model: model}},
		{name: "under a raised cap", engine: base(func(e *Engine) { e.SpentToday, e.DailyCapUSD = spent(2, nil), 5 }), project: "proj",
			want: delegate.Availability{Ready: true, Model: model}},
		{name: "lower cap reached", engine: base(func(e *Engine) { e.DailyCapUSD = 0.25 }), project: "proj",
			want: delegate.Availability{Reason: "daily cap reached (0.50 of 0.25 USD)", Model: model}},
		{name: "ledger error", engine: base(func(e *Engine) { e.SpentToday = spent(0, errors.New("db locked")) }), project: "proj",
			want: delegate.Availability{Reason: "spend unknown: db locked", Model: model}},
		{name: "no ledger", engine: base(func(e *Engine) { e.SpentToday = nil }), project: "proj",
			want: delegate.Availability{Reason: "spend unknown: no ledger", Model: model}},
		{name: "no key", engine: base(func(e *Engine) { e.Key = "" }), project: "proj",
			want: delegate.Availability{Reason: "no key", Model: model}},
		{name: "no model", engine: base(func(e *Engine) { e.Model = "" }), project: "proj",
			want: delegate.Availability{Reason: "no model configured (engines.api.model)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.engine.Available(t.Context(), tt.project)); diff != "" {
				t.Errorf("Available (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompleteWithoutKeyIsRefused(t *testing.T) {
	_, err := (&Engine{Model: model}).Complete(t.Context(), prompt("x"), nil)
	if k := delegate.KindOf(err); k != delegate.Refused {
		t.Errorf("kind %v (err %v), want refused", k, err)
	}
}
