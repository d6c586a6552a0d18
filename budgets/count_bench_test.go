package budgets

import (
	"fmt"
	"strings"
	"testing"
)

// python400 is a 400-line Python file: 100 four-line functions, each with a
// one-line docstring — the size of file the hook classifies on every call.
func python400() []byte {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "def func_%d(a, b):\n    \"\"\"Add a and b.\"\"\"\n    total = a + b\n    return total\n", i)
	}
	return []byte(b.String())
}

func BenchmarkClassifyPython400(b *testing.B) {
	src := python400()
	if n := lineCount(src); n != 400 {
		b.Fatalf("generated %d lines, want 400", n)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		Classify(LangPython, src)
	}
}

// BenchmarkParsePython400 is the floor under Classify: tree-sitter's parse
// alone.
func BenchmarkParsePython400(b *testing.B) {
	src := python400()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		tree, _ := parse(LangPython, src)
		tree.Close()
	}
}
