// Package local is the "local" delegation engine: a model served by Ollama,
// driven through github.com/ollama/ollama/api. It is ready only when the
// model it would use is loaded (/api/ps) and no benchmark holds the GPU, runs
// one request at a time with a queue fair across sessions, and converts the
// client's errors into delegate.Error kinds at its edge.
package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"miam/delegate"
)

// DefaultHost is where Ollama listens when neither config nor OLLAMA_HOST
// says otherwise.
const DefaultHost = "http://127.0.0.1:11434"

// DefaultKeepAlive is how long Ollama keeps the model loaded after a request.
const DefaultKeepAlive = 10 * time.Minute

// Engine talks to one Ollama server. Zero fields mean their documented
// defaults; use it by pointer, since it holds the queue. Its methods are safe
// for concurrent use.
type Engine struct {
	// Host is Ollama's base URL ("http://host:port", or "host:port"); "" is
	// DefaultHost. The caller resolves engines.local.host, then OLLAMA_HOST.
	Host string
	// Model is the model to use (engines.local.model). "" means whichever
	// model is loaded.
	Model string
	// KeepAlive is sent as keep_alive on every chat; 0 is DefaultKeepAlive,
	// a negative value keeps the model loaded forever.
	KeepAlive time.Duration
	// Options are Ollama model options sent with each chat (num_ctx,
	// temperature, …); nil sends none.
	Options map[string]any
	// BenchLock is a file whose presence means a benchmark holds the GPU
	// (engines.bench_lock); "" disables the check.
	BenchLock string
	// Stat reports whether a file exists (nil error: it does); nil is a
	// wrapper of os.Stat. It is only asked about BenchLock.
	Stat func(path string) error
	// HTTPClient carries the requests; nil is http.DefaultClient. Give it no
	// overall Timeout: answers stream for minutes and the context bounds them.
	HTTPClient *http.Client

	queue queue
}

// Name is "local".
func (e *Engine) Name() string { return "local" }

func (e *Engine) client() (*api.Client, error) {
	host := e.Host
	if host == "" {
		host = DefaultHost
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("engines.local.host %q is not a URL like http://127.0.0.1:11434", e.Host)
	}
	hc := e.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	return api.NewClient(u, hc), nil
}

// benchHeld reports whether the bench lock file exists.
func (e *Engine) benchHeld() bool {
	if e.BenchLock == "" {
		return false
	}
	stat := e.Stat
	if stat == nil {
		stat = func(p string) error { _, err := os.Stat(p); return err }
	}
	return stat(e.BenchLock) == nil
}

// Available asks Ollama which models are loaded. It is ready when the
// configured model is loaded (any model when none is configured) and the
// bench lock is absent. The project plays no part: local serves every project.
func (e *Engine) Available(ctx context.Context, project string) delegate.Availability {
	if e.benchHeld() {
		return delegate.Availability{Reason: "benchmark holds the GPU", Model: e.Model}
	}
	model, err := e.loadedModel(ctx, e.Model)
	if err != nil {
		return delegate.Availability{Reason: err.Error(), Model: e.Model}
	}
	return delegate.Availability{Ready: true, Model: model}
}

var errNoModel = errors.New("no model loaded")

// loadedModel returns want when /api/ps lists it, or the first loaded model
// when want is "". The error is the reason it cannot.
func (e *Engine) loadedModel(ctx context.Context, want string) (string, error) {
	c, err := e.client()
	if err != nil {
		return "", err
	}
	ps, err := c.ListRunning(ctx)
	if err != nil {
		return "", fmt.Errorf("ollama unreachable: %w", err)
	}
	var loaded []string
	for _, m := range ps.Models {
		loaded = append(loaded, m.Name)
		if want != "" && (sameModel(m.Name, want) || sameModel(m.Model, want)) {
			return want, nil
		}
	}
	switch {
	case len(loaded) == 0:
		return "", errNoModel
	case want == "":
		return loaded[0], nil
	}
	return "", fmt.Errorf("model %s not loaded (loaded: %s)", want, strings.Join(loaded, ", "))
}

// sameModel compares names the way Ollama does: no tag means ":latest".
func sameModel(a, b string) bool {
	tag := func(n string) string {
		if !strings.Contains(n, ":") {
			return n + ":latest"
		}
		return n
	}
	return tag(a) == tag(b)
}

// Complete streams one chat from Ollama, waiting first for its turn in the
// queue (see WithSession). progress is called once per streamed chunk. The
// model is p.Model, else Model, else the loaded one. Cost is always 0.
func (e *Engine) Complete(ctx context.Context, p delegate.Prompt, progress func()) (delegate.Completion, error) {
	session := sessionOf(ctx)
	if err := e.queue.acquire(ctx, session); err != nil {
		return delegate.Completion{}, e.fail(delegate.Transient, fmt.Errorf("waiting for the local model: %w", err))
	}
	defer e.queue.release(session)

	model := cmp.Or(p.Model, e.Model)
	if model == "" {
		m, err := e.loadedModel(ctx, "")
		if err != nil {
			return delegate.Completion{}, e.classify(err)
		}
		model = m
	}
	c, err := e.client()
	if err != nil {
		return delegate.Completion{}, e.fail(delegate.Fatal, err)
	}
	keep := e.KeepAlive
	if keep == 0 {
		keep = DefaultKeepAlive
	}
	req := &api.ChatRequest{
		Model:     model,
		Messages:  messages(p.Messages),
		Stream:    new(true),
		KeepAlive: &api.Duration{Duration: keep},
		Options:   e.Options,
	}
	var (
		text   strings.Builder
		out    = delegate.Completion{Model: model}
		done   bool
		chunks int
	)
	err = c.Chat(ctx, req, func(r api.ChatResponse) error {
		chunks++
		if progress != nil {
			progress()
		}
		text.WriteString(r.Message.Content)
		if r.Model != "" {
			out.Model = r.Model
		}
		if r.Done {
			done = true
			out.InputTokens, out.OutputTokens = r.PromptEvalCount, r.EvalCount
		}
		return nil
	})
	switch {
	case err == nil && !done:
		// The client ignores read errors: a cut stream just ends, or hands
		// its last half line over as an error.
		err = errTruncated
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", errTruncated, context.Cause(ctx))
		}
	case err != nil && !done && chunks > 0:
		err = fmt.Errorf("%w after %d chunks: %w", errTruncated, chunks, err)
	}
	if err != nil {
		return delegate.Completion{}, e.classify(err)
	}
	out.Text = text.String()
	return out, nil
}

func messages(ms []delegate.Message) []api.Message {
	out := make([]api.Message, 0, len(ms))
	for _, m := range ms {
		out = append(out, api.Message{Role: m.Role, Content: m.Content})
	}
	return out
}
