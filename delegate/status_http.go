package delegate

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxRetryAfter caps a server's Retry-After: beyond it the router moves on
// rather than wait.
const MaxRetryAfter = 24 * time.Hour

// ParseRetryAfter reads a Retry-After value, seconds or an HTTP date, as
// a duration from now; 0 when absent, past or unreadable.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(MaxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), MaxRetryAfter)
	}
	return 0
}

// KindOfStatus is what the router does about an HTTP error status, the
// same for every engine: 429 → RateLimited; 401, 402, 403, 404 → Refused;
// 408 and 5xx → Transient; any other 4xx → Fatal. ok is false below 400.
func KindOfStatus(status int) (k Kind, ok bool) {
	switch {
	case status == http.StatusTooManyRequests:
		return RateLimited, true
	case status == http.StatusUnauthorized, status == http.StatusPaymentRequired,
		status == http.StatusForbidden, status == http.StatusNotFound:
		return Refused, true
	case status == http.StatusRequestTimeout, status >= 500:
		return Transient, true
	case status >= 400:
		return Fatal, true
	}
	return 0, false
}
