package api

import (
	"io"
	"net/http"
	"strings"
	"sync"
)

// captureKey marks the request context carrying a *capture; one per
// Complete, so concurrent calls never share what their responses said.
type captureKey struct{}

// capture holds what the transport saw of one response that go-openai does
// not pass on: the status and headers (Retry-After) and usage.cost.
type capture struct {
	mu     sync.Mutex
	status int
	header http.Header
	scan   costScanner
}

type summary struct {
	status int
	header http.Header
	cost   float64
	done   bool
}

func (c *capture) result() summary {
	c.mu.Lock()
	defer c.mu.Unlock()
	return summary{status: c.status, header: c.header, cost: c.scan.cost, done: c.scan.done}
}

// transport adds OpenRouter's attribution headers to every request and taps
// the response of a request whose context carries a capture.
type transport struct {
	base           http.RoundTripper
	referer, title string
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("HTTP-Referer", t.referer)
	r.Header.Set("X-Title", t.title)
	r.Header.Set("X-OpenRouter-Title", t.title)
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	c, _ := req.Context().Value(captureKey{}).(*capture)
	if c == nil {
		return resp, nil
	}
	c.mu.Lock()
	c.status, c.header = resp.StatusCode, resp.Header.Clone()
	c.scan = costScanner{sse: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")}
	c.mu.Unlock()
	resp.Body = &tap{ReadCloser: resp.Body, c: c}
	return resp, nil
}

// tap feeds what the client reads of a body to the capture's scanner.
type tap struct {
	io.ReadCloser
	c *capture
}

func (t *tap) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.c.mu.Lock()
	t.c.scan.Write(p[:n])
	if err == io.EOF {
		t.c.scan.Close()
	}
	t.c.mu.Unlock()
	return n, err
}
