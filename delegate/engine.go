package delegate

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Message is one chat turn sent to an executor.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
}

// Prompt is what an engine is asked: a chat, and the model to use ("" means
// the engine's configured default).
type Prompt struct {
	Model    string
	Messages []Message
}

// Completion is an engine's answer with what it cost.
type Completion struct {
	Text         string
	Model        string // the model that actually answered
	InputTokens  int
	OutputTokens int
	CostUSD      float64
}

// Availability says whether an engine can take a request now, and why not.
type Availability struct {
	Ready  bool
	Reason string // e.g. "no model loaded", "project not allowed", "daily cap reached"
	Model  string // the model it would use
}

// Engine is one executor. Implementations live in delegate/engines/…, each
// converting its client's errors into an *Error at its own edge; the router
// imports no provider package.
type Engine interface {
	Name() string // "local", "api", "haiku"
	Available(ctx context.Context, project string) Availability
	// Complete runs one try. progress is called whenever the model makes
	// progress (a streamed token), for the watchdog; it may be nil.
	Complete(ctx context.Context, p Prompt, progress func()) (Completion, error)
}

// Kind is what the router does about an engine error.
type Kind int

const (
	// Transient: retry the same engine with backoff (5xx, reset, truncated stream).
	Transient Kind = iota + 1
	// RateLimited: go to the next engine (429).
	RateLimited
	// Refused: go to the next engine (auth, model missing, cap reached, content refused).
	Refused
	// ControlFailed: the answer came but failed the controls; next try, then next engine.
	ControlFailed
	// Fatal: stop the request (bad request that no engine can serve).
	Fatal
)

func (k Kind) String() string {
	switch k {
	case Transient:
		return "transient"
	case RateLimited:
		return "rate_limited"
	case Refused:
		return "refused"
	case ControlFailed:
		return "control_failed"
	case Fatal:
		return "fatal"
	}
	return "unknown"
}

// Error is an engine failure the router can act on.
type Error struct {
	Kind       Kind
	Engine     string
	RetryAfter time.Duration // from Retry-After, when the server sent one
	Err        error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s engine: %s: %v", e.Engine, e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of err: 0 for nil, Transient for errors no engine
// classified (a context deadline of one try, say).
func KindOf(err error) Kind {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Transient
}
