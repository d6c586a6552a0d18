package api

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"miam/delegate"
)

// errTruncated is a stream that ended before [DONE].
var errTruncated = errors.New("stream ended before [DONE]")

func (e *Engine) fail(k delegate.Kind, err error, h http.Header) *delegate.Error {
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	var after time.Duration
	if h != nil {
		after = delegate.ParseRetryAfter(h.Get("Retry-After"), now())
	}
	return &delegate.Error{Kind: k, Engine: e.Name(), RetryAfter: after, Err: err}
}

// classify converts an error of go-openai into a delegate.Error, from the
// HTTP status the transport saw: 429 → RateLimited (with Retry-After),
// 401/402/403/404 → Refused, 400/413/422 → Fatal, 408/5xx, resets, cut
// streams and deadlines → Transient. An error raised before any request
// left (a model go-openai rejects) → Refused.
func (e *Engine) classify(ctx context.Context, err error, c *capture) *delegate.Error {
	sum := c.result()
	status := sum.status
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode != 0:
		status = apiErr.HTTPStatusCode
	case errors.As(err, &apiErr):
		// An error event inside a 200 stream: OpenRouter puts the status
		// it stands for in its code.
		status, _ = apiErr.Code.(int)
	case errors.As(err, &reqErr) && reqErr.HTTPStatusCode != 0:
		status = reqErr.HTTPStatusCode
	case status < 400:
		status = 0 // the response was fine; the error came later (a cut stream)
	}
	return e.fail(kindOf(ctx, err, status), err, sum.header)
}

func kindOf(ctx context.Context, err error, status int) delegate.Kind {
	if k, ok := delegate.KindOfStatus(status); ok {
		return k
	}
	switch {
	case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return delegate.Transient
	}
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.As(err, &netErr), errors.As(err, &opErr),
		errors.Is(err, errTruncated), errors.Is(err, io.ErrUnexpectedEOF):
		return delegate.Transient
	case errors.Is(err, openai.ErrChatCompletionInvalidModel), errors.Is(err, openai.ErrReasoningModelMaxTokensDeprecated):
		return delegate.Refused
	}
	// An error object inside a 200 stream (the provider failed mid-answer),
	// a reset: worth another try.
	return delegate.Transient
}
