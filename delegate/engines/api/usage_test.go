package api

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/delegate"
)

type scanned struct {
	Cost float64
	Done bool
}

func scanAll(sse bool, body []byte, cut int) scanned {
	s := costScanner{sse: sse}
	cut = min(max(cut, 0), len(body))
	s.Write(body[:cut])
	s.Write(body[cut:])
	s.Close()
	return scanned{s.cost, s.done}
}

func TestCostScanner(t *testing.T) {
	tests := []struct {
		name string
		sse  bool
		body string
		want scanned
	}{
		{name: "stream with usage", sse: true, body: ": OPENROUTER PROCESSING\n\n" +
			"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"cost\":0.0042,\"cost_details\":{\"upstream_inference_cost\":null}}}\n\n" +
			"data: [DONE]\n\n",
			want: scanned{0.0042, true}},
		{name: "CRLF and no space after data:", sse: true, body: "data:{\"usage\":{\"cost\":1e-7}}\r\n\r\ndata:[DONE]\r\n",
			want: scanned{1e-7, true}},
		{name: "stream cut before [DONE]", sse: true, body: "data: {\"usage\":{\"cost\":0.5}}\n\ndata: [DO",
			want: scanned{0.5, false}},
		{name: "usage null", sse: true, body: "data: {\"usage\":null}\ndata: [DONE]\n", want: scanned{0, true}},
		{name: "negative cost ignored", sse: true, body: "data: {\"usage\":{\"cost\":-3}}\ndata: [DONE]\n", want: scanned{0, true}},
		{name: "cost as a string ignored", sse: true, body: "data: {\"usage\":{\"cost\":\"3\"}}\n", want: scanned{0, false}},
		{name: "usage text inside content", sse: true, body: "data: {\"choices\":[{\"delta\":{\"content\":\"\\\"usage\\\"\"}}]}\n", want: scanned{}},
		{name: "plain body", body: "{\"id\":\"gen\",\"usage\":{\"prompt_tokens\":1,\"cost\":0.25}}\n", want: scanned{0.25, true}},
		{name: "plain body without cost", body: "{\"id\":\"gen\",\"usage\":{\"prompt_tokens\":1}}", want: scanned{0, true}},
		{name: "plain body cut", body: "{\"id\":\"gen\",\"usage\":{\"cost\":0.25", want: scanned{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for cut := range len(tt.body) + 1 {
				if diff := cmp.Diff(tt.want, scanAll(tt.sse, []byte(tt.body), cut)); diff != "" {
					t.Fatalf("cut at %d (-want +got):\n%s", cut, diff)
				}
			}
		})
	}
}

// FuzzCostScanner: the scanner never panics, how the body is cut into
// reads never changes what it finds, a cost is never negative or not a
// number, and only a body that says so counts as complete.
func FuzzCostScanner(f *testing.F) {
	f.Add(true, []byte("data: {\"usage\":{\"cost\":0.1}}\n\ndata: [DONE]\n\n"), 7)
	f.Add(false, []byte(`{"usage":{"cost":2.5e-3}}`), 3)
	f.Add(true, []byte(": comment\ndata: {\"usage\":{\"cost\":1e400}}\n"), 0)
	f.Add(false, []byte(`{"usage":{"cost":-1}}`), 100)
	f.Fuzz(func(t *testing.T, sse bool, body []byte, cut int) {
		whole := scanAll(sse, body, len(body))
		split := scanAll(sse, body, cut)
		if whole != split {
			t.Fatalf("cut at %d changed the result: %+v vs %+v", cut, whole, split)
		}
		if whole.Cost < 0 || math.IsNaN(whole.Cost) || math.IsInf(whole.Cost, 0) {
			t.Fatalf("cost %v", whole.Cost)
		}
		if whole.Cost != 0 && !bytes.Contains(body, []byte(`"usage"`)) {
			t.Fatalf("cost %v from a body without usage", whole.Cost)
		}
		if whole.Done && sse && !bytes.Contains(body, []byte("[DONE]")) {
			t.Fatal("stream complete without [DONE]")
		}
	})
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, in string
		want     time.Duration
	}{
		{"empty", "", 0},
		{"seconds", "30", 30 * time.Second},
		{"spaces", " 5 ", 5 * time.Second},
		{"zero", "0", 0},
		{"negative", "-4", 0},
		{"huge", "99999999999999", delegate.MaxRetryAfter},
		{"far date", "Fri, 31 Dec 9999 23:59:59 GMT", delegate.MaxRetryAfter},
		{"date", "Sun, 01 Mar 2026 12:00:10 GMT", 10 * time.Second},
		{"past date", "Sun, 01 Mar 2026 11:00:00 GMT", 0},
		{"fraction", "1.5", 0},
		{"garbage", "soon", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := delegate.ParseRetryAfter(tt.in, now); got != tt.want {
				t.Errorf("ParseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "30", "-1", "Sun, 01 Mar 2026 12:00:10 GMT", "1e9", "9223372036854775807"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if d := delegate.ParseRetryAfter(s, now); d < 0 || d > delegate.MaxRetryAfter {
			t.Fatalf("ParseRetryAfter(%q) = %v", s, d)
		}
	})
}
