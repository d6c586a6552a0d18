package controls

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func TestNumberValues(t *testing.T) {
	tests := []struct {
		tok  string
		want []string
	}{
		{"1,234,567", []string{"1234567", "1234.567"}},
		{"1 234,5", []string{"12345", "1234.5"}},
		{"0.50", []string{"50", "0.5"}},
		{"007", []string{"7"}},
		{"30.0", []string{"300", "30"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, numberValues(tt.tok)); diff != "" {
			t.Errorf("numberValues(%q) mismatch (-want +got):\n%s", tt.tok, diff)
		}
	}
}

func TestCitations(t *testing.T) {
	src := map[string][]byte{"cfg/app.py": []byte("MAX_CONNECTIONS = 1000\nretry_delay = 2.5\nNAME = \"billing service\"\n")}
	ok := wire.Control{Nom: "citations", OK: true}
	tests := []struct {
		name string
		req  wire.Request
		text string
		want wire.Control
	}{
		{"normalised", wire.Request{Type: "resume"}, "The service allows 1,000 connections (`maxConnections`) and waits 2,5 s; it is the \"Billing  Service\" of app.py.", ok},
		{"list markers are not numbers", wire.Request{Type: "resume"}, "1. MAX_CONNECTIONS is 1000.\n2. The NAME is set.", ok},
		{"changed number", wire.Request{Type: "resume"}, "It allows 10,000 connections.", wire.Control{Nom: "citations", Message: "not found in the sources: 10,000: cite the sources exactly, or leave it out"}},
		{"invented identifier", wire.Request{Type: "resume"}, "See `retry_count`.", wire.Control{Nom: "citations", Message: "not found in the sources: `retry_count`: cite the sources exactly, or leave it out"}},
		{"json values", wire.Request{Type: "extraction", Format: "json"}, `{"max": 1000, "delay": 2.5, "name": "billing service", "level": "high"}`, ok},
		{"json wrong number", wire.Request{Type: "extraction", Format: "json"}, `{"max": 100}`, wire.Control{Nom: "citations", Message: "not found in the sources: 100: cite the sources exactly, or leave it out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Citations{}.Check(context.Background(), NewInput(tt.req, tt.text, src))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	got := Citations{}.Check(context.Background(), NewInput(wire.Request{Type: "resume"}, "Anything 42.", nil))
	if diff := cmp.Diff(wire.Control{Nom: "citations", OK: true, Message: "no joined source to cite: skipped"}, got); diff != "" {
		t.Errorf("without sources (-want +got):\n%s", diff)
	}
}

// FuzzCitations: the text scanners never panic, and every number token is
// a slice of its text.
func FuzzCitations(f *testing.F) {
	for _, s := range []string{"1 234,5", "«x»", "“a”", "`b` 3.", "1.\n2)", "9\u202f999", "{\"a\": [1e9, \"x\"]}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, n := range scanNumbers(s, true) {
			if s[n.start:n.end] != n.text {
				t.Fatalf("token %q is not at %d:%d", n.text, n.start, n.end)
			}
			numberValues(n.text)
		}
		src := sources{text: normText(s), numbers: numberSet(s), idents: identSet(s)}
		if m := src.checkProse(s); len(m) != 0 {
			// A text always cites itself, but for numbers it splits oddly.
			for _, x := range m {
				if x == "" {
					t.Fatalf("empty citation from %q", s)
				}
			}
		}
	})
}
