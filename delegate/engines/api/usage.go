package api

import (
	"bytes"
	"encoding/json"
	"math"
)

// maxBody bounds what the scanner keeps of a non-streamed body or of one
// server-sent event line; past it the cost is not read.
const maxBody = 8 << 20

// costScanner reads OpenRouter's usage.cost out of a response body fed to it
// in pieces of any size: server-sent events line by line (sse), else the
// whole JSON body at Close. done reports a complete answer: [DONE] seen, or
// a non-streamed body that parsed. A cost that is missing, negative or not a
// number leaves cost at 0.
type costScanner struct {
	sse  bool
	buf  []byte
	cost float64
	done bool
	over bool // buf outgrew maxBody
}

// Write takes the next piece of the body.
func (s *costScanner) Write(p []byte) {
	if !s.sse {
		s.keep(p)
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.keep(p)
			return
		}
		s.keep(p[:i])
		if !s.over {
			s.line(s.buf)
		}
		s.buf, s.over = s.buf[:0], false
		p = p[i+1:]
	}
}

// Close ends the body: a non-streamed body is parsed now. A last SSE line
// without its newline is a cut stream and is dropped.
func (s *costScanner) Close() {
	if s.sse || s.over {
		return
	}
	if cost, ok := costOf(s.buf); ok {
		s.cost, s.done = cost, true
	} else if json.Valid(s.buf) {
		s.done = true
	}
	s.buf = nil
}

func (s *costScanner) keep(p []byte) {
	if s.over || len(s.buf)+len(p) > maxBody {
		s.over = true
		return
	}
	s.buf = append(s.buf, p...)
}

// line reads one server-sent event line.
func (s *costScanner) line(l []byte) {
	l = bytes.TrimSpace(bytes.TrimSuffix(l, []byte("\r")))
	data, ok := bytes.CutPrefix(l, []byte("data:"))
	if !ok {
		return // a comment (": OPENROUTER PROCESSING"), a blank line, an event name
	}
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		s.done = true
		return
	}
	if cost, ok := costOf(data); ok {
		s.cost = cost
	}
}

// costOf decodes usage.cost from one JSON object; ok is false when the
// object has none or it is not a finite, non-negative number.
func costOf(data []byte) (float64, bool) {
	if !bytes.Contains(data, []byte(`"usage"`)) {
		return 0, false
	}
	var v struct {
		Usage *struct {
			Cost *float64 `json:"cost"`
		} `json:"usage"`
	}
	if json.Unmarshal(data, &v) != nil || v.Usage == nil || v.Usage.Cost == nil {
		return 0, false
	}
	c := *v.Usage.Cost
	if c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
		return 0, false
	}
	return c, true
}
