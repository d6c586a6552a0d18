package haiku

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"miam/delegate"
)

// errTruncated is a stream that ended before message_stop.
var errTruncated = errors.New("stream ended before message_stop")

func (e *Engine) fail(k delegate.Kind, err error, h http.Header) *delegate.Error {
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	return &delegate.Error{Kind: k, Engine: e.Name(), RetryAfter: retryAfter(h, now()), Err: err}
}

// classify converts an SDK error into a delegate.Error by HTTP status: 429 →
// RateLimited (with Retry-After), 401/403/404 → Refused, 400/413 → Fatal,
// 408/5xx/529 (overloaded), resets, cut streams and deadlines → Transient.
// An error event inside the stream carries its type instead of a status.
func (e *Engine) classify(ctx context.Context, err error) *delegate.Error {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return e.fail(delegate.Transient, err, nil)
	}
	var h http.Header
	if apiErr.Response != nil {
		h = apiErr.Response.Header
	}
	status := apiErr.StatusCode
	if status == 0 || status == http.StatusOK {
		status = statusOfType(string(apiErr.Type()))
	}
	return e.fail(kindOf(status), err, h)
}

func kindOf(status int) delegate.Kind {
	if status == 0 {
		return delegate.Transient // a reset or cut stream, no status at all
	}
	if k, ok := delegate.KindOfStatus(status); ok {
		return k
	}
	return delegate.Fatal
}

// statusOfType maps the error types of an in-stream error event to the
// status the API uses for them.
func statusOfType(t string) int {
	switch t {
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "authentication_error":
		return http.StatusUnauthorized
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "invalid_request_error":
		return http.StatusBadRequest
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	}
	return 0 // api_error, overloaded_error, unknown: worth another try
}

// retryAfter reads retry-after-ms, else Retry-After (delay-seconds or an HTTP
// date relative to now), at most delegate.MaxRetryAfter. Garbage gives 0.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms > 0 {
		return time.Duration(min(ms, float64(delegate.MaxRetryAfter/time.Millisecond))) * time.Millisecond
	}
	return delegate.ParseRetryAfter(h.Get("Retry-After"), now)
}
