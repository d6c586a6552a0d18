package store

import (
	"testing"

	"miam/delegate/wire"
)

// BenchmarkCreateFinish measures one request's life: create, one try,
// finish (three write transactions, each synced).
func BenchmarkCreateFinish(b *testing.B) {
	s, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	req := sampleRequest()
	for b.Loop() {
		id, err := s.Create(b.Context(), "sess", "/p", req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.AddTry(b.Context(), Try{RequestID: id, Engine: "local", Model: "qwen", OK: true,
			Controls: []wire.Control{{Nom: "syntaxe", OK: true}}}); err != nil {
			b.Fatal(err)
		}
		if _, _, err := s.Finish(b.Context(), id, fullAnswer(id)); err != nil {
			b.Fatal(err)
		}
	}
}
