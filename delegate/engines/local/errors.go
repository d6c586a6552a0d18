package local

import (
	"context"
	"errors"
	"syscall"

	"github.com/ollama/ollama/api"

	"miam/delegate"
)

// errTruncated is a stream that ended before its done chunk.
var errTruncated = errors.New("stream ended before the done chunk")

func (e *Engine) fail(k delegate.Kind, err error) *delegate.Error {
	return &delegate.Error{Kind: k, Engine: e.Name(), Err: err}
}

// classify converts an error of the Ollama client into a delegate.Error:
// Ollama down, no model or a missing model → Refused (next engine); 5xx, a
// cut or reset stream, a deadline → Transient; another 4xx → Fatal.
func (e *Engine) classify(err error) *delegate.Error {
	return e.fail(kindOf(err), err)
}

func kindOf(err error) delegate.Kind {
	var status api.StatusError
	var auth api.AuthorizationError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return delegate.Transient
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, errNoModel):
		return delegate.Refused
	case errors.As(err, &auth):
		return delegate.Refused
	case errors.As(err, &status):
		// 404 is a model Ollama does not have: Refused, as for every engine.
		if k, ok := delegate.KindOfStatus(status.StatusCode); ok {
			return k
		}
	}
	// Resets, a cut stream, an error object in the middle of a stream.
	return delegate.Transient
}
