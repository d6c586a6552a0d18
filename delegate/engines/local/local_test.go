package local

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/delegate"
	"miam/fixtures/fakeollama"
	"miam/fixtures/fakestream"
)

const model = "qwen2.5-coder:7b"

func prompt(user string) delegate.Prompt {
	return delegate.Prompt{Messages: []delegate.Message{
		{Role: "system", Content: "You write Python."},
		{Role: "user", Content: user},
	}}
}

func TestCompleteGoodAnswer(t *testing.T) {
	text := "def add(a, b):\n    return a + b\n# é and more text to stream\n"
	reply := fakeollama.Answer(text)
	reply.InputTokens, reply.OutputTokens = 42, 17
	srv := fakeollama.New(fakeollama.Config{Installed: []string{model}, Loaded: []string{model}, Replies: []fakeollama.Reply{reply}})
	defer srv.Close()
	e := &Engine{Host: srv.URL(), Model: model}

	progress := 0
	got, err := e.Complete(t.Context(), prompt("write add"), func() { progress++ })
	if err != nil {
		t.Fatal(err)
	}
	want := delegate.Completion{Text: text, Model: model, InputTokens: 42, OutputTokens: 17}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Completion (-want +got):\n%s", diff)
	}
	if wantN := len(fakestream.Split(text)) + 1; progress != wantN {
		t.Errorf("progress called %d times, want %d (one per chunk)", progress, wantN)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	wantMsgs := []fakeollama.Message{{Role: "system", Content: "You write Python."}, {Role: "user", Content: "write add"}}
	if diff := cmp.Diff(wantMsgs, r.Messages); diff != "" {
		t.Errorf("messages sent (-want +got):\n%s", diff)
	}
	if string(r.KeepAlive) != `"10m0s"` || !r.Stream || r.Model != model {
		t.Errorf("keep_alive %s, stream %v, model %q", r.KeepAlive, r.Stream, r.Model)
	}
}

func TestCompleteSettings(t *testing.T) {
	srv := fakeollama.New(fakeollama.Config{Loaded: []string{"llama3"}, Replies: []fakeollama.Reply{fakeollama.Good(), fakeollama.Good()}})
	defer srv.Close()

	// No model configured: the loaded one answers. Host without a scheme.
	e := &Engine{Host: strings.TrimPrefix(srv.URL(), "http://"), KeepAlive: -1, Options: map[string]any{"num_ctx": 8192}}
	got, err := e.Complete(t.Context(), prompt("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != "llama3" {
		t.Errorf("Model = %q, want the loaded llama3", got.Model)
	}
	// The prompt's model wins over the configured one.
	if _, err := (&Engine{Host: srv.URL(), Model: "other"}).Complete(t.Context(), delegate.Prompt{Model: "pick"}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if string(reqs[0].KeepAlive) != "-1" || reqs[0].Options["num_ctx"] != 8192.0 {
		t.Errorf("keep_alive %s options %v", reqs[0].KeepAlive, reqs[0].Options)
	}
	if reqs[1].Model != "pick" {
		t.Errorf("model sent %q, want the prompt's", reqs[1].Model)
	}
}

func TestCompleteErrors(t *testing.T) {
	closed := fakeollama.New(fakeollama.Config{})
	closedURL := closed.URL()
	closed.Close()

	tests := []struct {
		name      string
		installed []string
		reply     fakeollama.Reply
		host      string        // "" is the fake
		timeout   time.Duration // 0: none
		want      delegate.Kind
		errText   string
	}{
		{name: "server error", reply: fakeollama.ServerError(), want: delegate.Transient, errText: "500"},
		{name: "truncated stream", reply: fakeollama.Truncated("def add(a, b):\n    return a + b\n"), want: delegate.Transient, errText: "done chunk"},
		{name: "model not found", installed: []string{"llama3"}, want: delegate.Refused, errText: "not found"},
		{name: "rate limited", reply: fakeollama.RateLimited("3"), want: delegate.RateLimited},
		{name: "bad request", reply: fakeollama.Status(http.StatusBadRequest, "invalid options"), want: delegate.Fatal, errText: "invalid options"},
		{name: "forbidden", reply: fakeollama.Status(http.StatusForbidden, "nope"), want: delegate.Refused},
		{name: "hang before answering", reply: fakeollama.Hang(), timeout: 50 * time.Millisecond, want: delegate.Transient, errText: "deadline"},
		{name: "connection refused", host: closedURL, want: delegate.Refused, errText: "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeollama.New(fakeollama.Config{Installed: tt.installed, Replies: []fakeollama.Reply{tt.reply}})
			defer srv.Close()
			host := srv.URL()
			if tt.host != "" {
				host = tt.host
			}
			ctx := t.Context()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			_, err := (&Engine{Host: host, Model: model}).Complete(ctx, prompt("x"), nil)
			var de *delegate.Error
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want a *delegate.Error", err)
			}
			got := struct {
				Kind   delegate.Kind
				Engine string
			}{de.Kind, de.Engine}
			if diff := cmp.Diff(struct {
				Kind   delegate.Kind
				Engine string
			}{tt.want, "local"}, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nerr: %v", diff, err)
			}
			if !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("err %q does not mention %q", err, tt.errText)
			}
		})
	}
}

func TestCompleteHangAfterTokensCancelled(t *testing.T) {
	srv := fakeollama.New(fakeollama.Config{Replies: []fakeollama.Reply{{Text: "def f(", Hang: true}}})
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	progress := 0
	_, err := (&Engine{Host: srv.URL(), Model: model}).Complete(ctx, prompt("x"), func() {
		progress++
		cancel() // the watchdog gives up once the model stalls
	})
	if k := delegate.KindOf(err); k != delegate.Transient || progress == 0 {
		t.Errorf("kind %v after %d progress calls, err %v; want transient after progress", k, progress, err)
	}
}

func TestAvailable(t *testing.T) {
	closed := fakeollama.New(fakeollama.Config{})
	closedURL := closed.URL()
	closed.Close()
	exists := func(string) error { return nil }
	missing := func(string) error { return fs.ErrNotExist }

	tests := []struct {
		name   string
		loaded []string
		engine *Engine
		want   delegate.Availability
	}{
		{name: "configured model loaded", loaded: []string{"llama3:latest", model},
			engine: &Engine{Model: model}, want: delegate.Availability{Ready: true, Model: model}},
		{name: "tag latest implied", loaded: []string{"llama3:latest"},
			engine: &Engine{Model: "llama3"}, want: delegate.Availability{Ready: true, Model: "llama3"}},
		{name: "any model when none configured", loaded: []string{"llama3:latest"},
			want: delegate.Availability{Ready: true, Model: "llama3:latest"}},
		{name: "no model loaded", engine: &Engine{Model: model},
			want: delegate.Availability{Reason: "no model loaded", Model: model}},
		{name: "no model loaded, none configured",
			want: delegate.Availability{Reason: "no model loaded"}},
		{name: "another model loaded", loaded: []string{"llama3:latest"}, engine: &Engine{Model: model},
			want: delegate.Availability{Reason: "model " + model + " not loaded (loaded: llama3:latest)", Model: model}},
		{name: "bench lock present", loaded: []string{model}, engine: &Engine{Model: model, BenchLock: "/x/bench.lock", Stat: exists},
			want: delegate.Availability{Reason: "benchmark holds the GPU", Model: model}},
		{name: "bench lock absent", loaded: []string{model}, engine: &Engine{Model: model, BenchLock: "/x/bench.lock", Stat: missing},
			want: delegate.Availability{Ready: true, Model: model}},
		{name: "bench lock on disk", loaded: []string{model}, engine: &Engine{Model: model, BenchLock: t.TempDir()},
			want: delegate.Availability{Reason: "benchmark holds the GPU", Model: model}},
		{name: "bad host", engine: &Engine{Host: "http://[::1"},
			want: delegate.Availability{Reason: `engines.local.host "http://[::1" is not a URL like http://127.0.0.1:11434`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeollama.New(fakeollama.Config{Loaded: tt.loaded})
			defer srv.Close()
			e := tt.engine
			if e == nil {
				e = &Engine{}
			}
			if e.Host == "" {
				e.Host = srv.URL()
			}
			if diff := cmp.Diff(tt.want, e.Available(t.Context(), "proj")); diff != "" {
				t.Errorf("Available (-want +got):\n%s", diff)
			}
		})
	}

	got := (&Engine{Host: closedURL}).Available(t.Context(), "proj")
	if got.Ready || !strings.HasPrefix(got.Reason, "ollama unreachable: ") {
		t.Errorf("unreachable Ollama: %+v", got)
	}
}

func TestCompleteFollowsLoadedModel(t *testing.T) {
	srv := fakeollama.New(fakeollama.Config{})
	defer srv.Close()
	_, err := (&Engine{Host: srv.URL()}).Complete(t.Context(), prompt("x"), nil)
	if k := delegate.KindOf(err); k != delegate.Refused || !strings.Contains(err.Error(), "no model loaded") {
		t.Errorf("no model at all: kind %v err %v, want refused", k, err)
	}
}

func TestRetryPromptCarriesFailure(t *testing.T) {
	srv := fakeollama.New(fakeollama.Config{Replies: []fakeollama.Reply{
		fakeollama.Answer("def add(a, b)\n    return a + b\n"), fakeollama.Good(),
	}})
	defer srv.Close()
	e := &Engine{Host: srv.URL(), Model: model}
	p := prompt("write add")
	first, err := e.Complete(t.Context(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	failure := "SyntaxError: expected ':' (x.py, line 1)"
	p.Messages = append(p.Messages,
		delegate.Message{Role: "assistant", Content: first.Text},
		delegate.Message{Role: "user", Content: "The control failed:\n" + failure})
	if _, err := e.Complete(t.Context(), p, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[1].LastUser(); !strings.Contains(got, failure) {
		t.Errorf("retry prompt %q lacks the failure", got)
	}
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[1].Raw, &body); err != nil || len(body.Messages) != 4 {
		t.Errorf("retry carried %d messages (%v), want 4", len(body.Messages), err)
	}
}
