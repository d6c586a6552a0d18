// Package haiku is the "haiku" delegation engine: Claude Haiku through the
// Anthropic Messages API and github.com/anthropics/anthropic-sdk-go/v2. It
// is ready only when an API key is configured (without one, the router hands
// the bout back to Claude Code as a haiku subagent call), prices an answer
// from its usage, and converts the SDK's errors into delegate.Error kinds at
// its edge. The SDK never reads the environment and never retries here: the
// router decides.
package haiku

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"miam/delegate"
)

// Defaults for the zero fields of Engine. Prices are Haiku 4.5's, in USD per
// million tokens.
const (
	DefaultModel            = "claude-haiku-4-5"
	DefaultMaxTokens        = 8192
	DefaultInputUSDPerMTok  = 1.0
	DefaultOutputUSDPerMTok = 5.0
)

// Engine calls the Messages API. Zero fields mean their documented defaults.
// Its methods are safe for concurrent use.
type Engine struct {
	// BaseURL is engines.haiku.base_url; "" is the SDK's production URL.
	BaseURL string
	// Key is the API key, read by the caller from the variable that
	// engines.haiku.key_env names. "" makes the engine unavailable.
	Key string
	// Model is engines.haiku.model; "" is DefaultModel. A Prompt's model wins.
	Model string
	// MaxTokens caps the answer; 0 is DefaultMaxTokens.
	MaxTokens int
	// Prices per million input and output tokens; 0 is Haiku's. Cache writes
	// cost 1.25× input and cache reads 0.1× input, as on the price list.
	InputUSDPerMTok, OutputUSDPerMTok float64
	// HTTPClient carries the requests; nil is the SDK's default. Give it no
	// overall Timeout: answers stream and the context bounds them.
	HTTPClient *http.Client
	// Now is the clock, used to read a Retry-After given as a date; nil is
	// time.Now.
	Now func() time.Time
}

// Name is "haiku".
func (e *Engine) Name() string { return "haiku" }

func (e *Engine) model() string { return cmp.Or(e.Model, DefaultModel) }

// Available is ready when a key is configured; it asks nothing of the
// network. Every project may use Haiku.
func (e *Engine) Available(ctx context.Context, project string) delegate.Availability {
	if e.Key == "" {
		return delegate.Availability{Reason: "no key", Model: e.model()}
	}
	return delegate.Availability{Ready: true, Model: e.model()}
}

func (e *Engine) client() anthropic.Client {
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(e.Key),
		option.WithMaxRetries(0),
	}
	if e.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(e.BaseURL))
	}
	if e.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(e.HTTPClient))
	}
	return anthropic.NewClient(opts...)
}

// Complete streams one Messages answer. progress is called once per streamed
// event. System messages become the system prompt; user and assistant
// messages keep their order.
func (e *Engine) Complete(ctx context.Context, p delegate.Prompt, progress func()) (delegate.Completion, error) {
	if e.Key == "" {
		return delegate.Completion{}, e.fail(delegate.Refused, errors.New("no key"), nil)
	}
	params, err := e.params(p)
	if err != nil {
		return delegate.Completion{}, e.fail(delegate.Fatal, err, nil)
	}
	c := e.client()
	stream := c.Messages.NewStreaming(ctx, params)
	defer stream.Close()

	var (
		acc     anthropic.Message
		text    strings.Builder
		stopped bool
	)
	for stream.Next() {
		ev := stream.Current()
		if progress != nil {
			progress()
		}
		if err := acc.Accumulate(ev); err != nil {
			return delegate.Completion{}, e.fail(delegate.Transient, fmt.Errorf("stream out of order: %w", err), nil)
		}
		switch v := ev.AsAny().(type) {
		case anthropic.ContentBlockDeltaEvent:
			if d, ok := v.Delta.AsAny().(anthropic.TextDelta); ok {
				text.WriteString(d.Text)
			}
		case anthropic.MessageStopEvent:
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return delegate.Completion{}, e.classify(ctx, err)
	}
	if !stopped {
		err := errTruncated
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", errTruncated, context.Cause(ctx))
		}
		return delegate.Completion{}, e.fail(delegate.Transient, err, nil)
	}
	if acc.StopReason == anthropic.StopReasonRefusal {
		return delegate.Completion{}, e.fail(delegate.Refused, errors.New("the model refused the request"), nil)
	}
	u := acc.Usage
	out := delegate.Completion{
		Text:         text.String(),
		Model:        cmp.Or(string(acc.Model), string(params.Model)),
		InputTokens:  int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
		OutputTokens: int(u.OutputTokens),
		CostUSD:      e.cost(u),
	}
	return out, nil
}

// cost prices usage: input, cache writes at 1.25× and cache reads at 0.1×
// the input price, output at the output price.
func (e *Engine) cost(u anthropic.Usage) float64 {
	in := cmp.Or(e.InputUSDPerMTok, DefaultInputUSDPerMTok)
	out := cmp.Or(e.OutputUSDPerMTok, DefaultOutputUSDPerMTok)
	return (float64(u.InputTokens)*in +
		float64(u.CacheCreationInputTokens)*in*1.25 +
		float64(u.CacheReadInputTokens)*in*0.1 +
		float64(u.OutputTokens)*out) / 1e6
}

// params builds the request: system messages joined into the system prompt,
// the rest as the conversation.
func (e *Engine) params(p delegate.Prompt) (anthropic.MessageNewParams, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(cmp.Or(p.Model, e.model())),
		MaxTokens: int64(cmp.Or(e.MaxTokens, DefaultMaxTokens)),
	}
	for i, m := range p.Messages {
		switch m.Role {
		case "system":
			params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
		case "user":
			params.Messages = append(params.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		case "assistant":
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(anthropic.NewTextBlock(m.Content)))
		default:
			return params, fmt.Errorf("message %d: role %q is not system, user or assistant", i, m.Role)
		}
	}
	if len(params.Messages) == 0 {
		return params, errors.New("no user message")
	}
	return params, nil
}
