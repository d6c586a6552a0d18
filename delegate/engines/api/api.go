// Package api is the "api" delegation engine: an OpenAI-compatible chat API,
// OpenRouter by default, driven through github.com/sashabaranov/go-openai.
// It serves only the projects listed in config and only while today's spend
// is under the daily cap; its transport adds OpenRouter's attribution
// headers and reads usage.cost, which go-openai drops, from the raw stream.
// It converts the client's errors into delegate.Error kinds at its edge.
package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"miam/delegate"
)

// Defaults for the zero fields of Engine.
const (
	DefaultBaseURL     = "https://openrouter.ai/api/v1"
	DefaultDailyCapUSD = 2.0
	DefaultReferer     = "https://miam.local/"
	DefaultTitle       = "miam"
)

// Engine talks to one OpenAI-compatible endpoint. Zero fields mean their
// documented defaults. Its methods are safe for concurrent use.
type Engine struct {
	// BaseURL is engines.api.base_url; "" is DefaultBaseURL. The chat path
	// "/chat/completions" is appended to it.
	BaseURL string
	// Key is the API key, read by the caller from the variable that
	// engines.api.key_env names. "" makes the engine unavailable.
	Key string
	// Model is engines.api.model, e.g. "qwen/qwen3-coder"; a Prompt's
	// model wins. Neither set makes the engine unavailable.
	Model string
	// MaxTokens caps the answer (max_tokens); 0 sends no cap.
	MaxTokens int
	// DailyCapUSD is engines.api.daily_cap_usd; 0 is DefaultDailyCapUSD.
	DailyCapUSD float64
	// Projects lists the projects allowed to spend here (engines.api.projects).
	// Empty allows none.
	Projects []string
	// SpentToday reports what this engine spent today, in USD, from the
	// caller's ledger. nil or an error makes the engine unavailable: the
	// cap is never assumed unspent.
	SpentToday func(ctx context.Context) (float64, error)
	// Referer and Title are sent as OpenRouter's attribution headers
	// (HTTP-Referer, X-Title and X-OpenRouter-Title); "" is DefaultReferer and
	// DefaultTitle.
	Referer, Title string
	// HTTPClient carries the requests; nil is a client over
	// http.DefaultTransport. Its Transport is wrapped, not replaced. Give it
	// no overall Timeout: answers stream and the context bounds them.
	HTTPClient *http.Client
	// Now is the clock, used to read a Retry-After given as a date; nil is
	// time.Now.
	Now func() time.Time
}

// Name is "api".
func (e *Engine) Name() string { return "api" }

// AllowedProjects is engines.api.projects, for the daemon's status file.
func (e *Engine) AllowedProjects() []string { return e.Projects }

// Available says whether project may use the API now: a key and a model are
// configured, the project is listed, and today's spend is under the cap.
func (e *Engine) Available(ctx context.Context, project string) delegate.Availability {
	no := func(reason string) delegate.Availability {
		return delegate.Availability{Reason: reason, Model: e.Model}
	}
	switch {
	case e.Key == "":
		return no("no key")
	case e.Model == "":
		return no("no model configured (engines.api.model)")
	case !slices.Contains(e.Projects, project):
		return no("project not allowed")
	case e.SpentToday == nil:
		return no("spend unknown: no ledger")
	}
	spent, err := e.SpentToday(ctx)
	if err != nil {
		return no("spend unknown: " + err.Error())
	}
	if limit := e.dailyCap(); spent >= limit {
		return no(fmt.Sprintf("daily cap reached (%.2f of %.2f USD)", spent, limit))
	}
	return delegate.Availability{Ready: true, Model: e.Model}
}

func (e *Engine) dailyCap() float64 {
	if e.DailyCapUSD == 0 {
		return DefaultDailyCapUSD
	}
	return e.DailyCapUSD
}

func (e *Engine) client() *openai.Client {
	cfg := openai.DefaultConfig(e.Key)
	cfg.BaseURL = cmp.Or(e.BaseURL, DefaultBaseURL)
	hc := http.Client{}
	if e.HTTPClient != nil {
		hc = *e.HTTPClient
	}
	hc.Transport = &transport{
		base:    hc.Transport,
		referer: cmp.Or(e.Referer, DefaultReferer),
		title:   cmp.Or(e.Title, DefaultTitle),
	}
	cfg.HTTPClient = &hc
	return openai.NewClientWithConfig(cfg)
}

// Complete streams one chat completion. progress is called once per
// streamed chunk. CostUSD is OpenRouter's usage.cost (0 when the server
// sends none).
func (e *Engine) Complete(ctx context.Context, p delegate.Prompt, progress func()) (delegate.Completion, error) {
	model := cmp.Or(p.Model, e.Model)
	if e.Key == "" || model == "" {
		return delegate.Completion{}, e.fail(delegate.Refused, errors.New("no key or no model configured"), nil)
	}
	req := openai.ChatCompletionRequest{
		Model:         model,
		Messages:      messages(p.Messages),
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		MaxTokens:     e.MaxTokens,
	}
	tap := &capture{}
	ctx = context.WithValue(ctx, captureKey{}, tap)
	stream, err := e.client().CreateChatCompletionStream(ctx, req)
	if err != nil {
		return delegate.Completion{}, e.classify(ctx, err, tap)
	}
	defer stream.Close()

	var (
		text strings.Builder
		out  = delegate.Completion{Model: model}
	)
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return delegate.Completion{}, e.classify(ctx, err, tap)
		}
		if progress != nil {
			progress()
		}
		out.Model = cmp.Or(chunk.Model, out.Model)
		for _, c := range chunk.Choices {
			text.WriteString(c.Delta.Content)
		}
		if u := chunk.Usage; u != nil {
			out.InputTokens, out.OutputTokens = u.PromptTokens, u.CompletionTokens
		}
	}
	sum := tap.result()
	if !sum.done {
		// go-openai reports a stream cut before [DONE] as a clean io.EOF.
		err := errTruncated
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", errTruncated, context.Cause(ctx))
		}
		return delegate.Completion{}, e.fail(delegate.Transient, err, nil)
	}
	out.Text = text.String()
	out.CostUSD = sum.cost
	return out, nil
}

func messages(ms []delegate.Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(ms))
	for _, m := range ms {
		out = append(out, openai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
	}
	return out
}
