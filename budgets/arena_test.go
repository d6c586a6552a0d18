package budgets

import (
	"slices"
	"strings"
	"sync"
	"testing"
)

// The parses of the flat walk run in a per-thread arena, while the Go
// binding's parses (syntax errors, definitions) use libc's allocator
// through the same tree-sitter allocation hooks. Both, in parallel on many
// threads, and on files big enough to need several arena chunks and to
// move blocks past the arena's largest class, give what they give alone.
func TestArenaParsesAlongsideBinding(t *testing.T) {
	small := python400()
	var big strings.Builder
	for range 20 {
		big.Write(small)
	}
	big.WriteString("x = [" + strings.Repeat("1, ", 5000) + "]\n") // one long list node
	srcs := [][]byte{small, []byte(big.String()), []byte("def broken(:\n    pass\n")}
	var want [][]LineKind
	var wantErrs [][]SyntaxError
	for _, src := range srcs {
		want = append(want, Classify(LangPython, src))
		wantErrs = append(wantErrs, SyntaxErrors(LangPython, src))
	}
	if !arenaInstalled() {
		t.Fatal("the flat parses do not allocate through the arena (ts_set_allocator not linked?)")
	}
	if len(want[1]) != 8001 || len(wantErrs[2]) == 0 {
		t.Fatalf("reference: %d kinds for the big file, %d errors for the broken one", len(want[1]), len(wantErrs[2]))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 6 {
				k := (g + i) % len(srcs)
				if g%2 == 0 {
					if got := Classify(LangPython, srcs[k]); !slices.Equal(got, want[k]) {
						t.Errorf("Classify of source %d differs in parallel", k)
					}
				} else if got := SyntaxErrors(LangPython, srcs[k]); !slices.Equal(got, wantErrs[k]) {
					t.Errorf("SyntaxErrors of source %d differs in parallel: %v", k, got)
				}
			}
		}()
	}
	wg.Wait()
}
