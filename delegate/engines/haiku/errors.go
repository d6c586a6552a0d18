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
	switch {
	case status == http.StatusTooManyRequests:
		return delegate.RateLimited
	case status == http.StatusUnauthorized, status == http.StatusPaymentRequired,
		status == http.StatusForbidden, status == http.StatusNotFound:
		return delegate.Refused
	case status == http.StatusRequestTimeout, status >= 500, status == 0:
		return delegate.Transient
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

// maxRetryAfter bounds a server's Retry-After.
const maxRetryAfter = 24 * time.Hour

// retryAfter reads retry-after-ms, else Retry-After (delay-seconds or an HTTP
// date relative to now), at most maxRetryAfter. Garbage gives 0.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms > 0 {
		return time.Duration(min(ms, float64(maxRetryAfter/time.Millisecond))) * time.Millisecond
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}
