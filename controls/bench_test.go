package controls

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"miam/delegate/wire"
)

// pythonFile writes a realistic Python module of about n lines: a class
// with documented methods reading its own fields, standard modules, and
// module-level functions using them.
func pythonFile(n int) string {
	var b strings.Builder
	b.WriteString("\"\"\"Generated module for the benchmark.\"\"\"\n\nimport json\nimport os.path\nfrom collections import Counter\n\n\n")
	b.WriteString("class Store:\n    \"\"\"A store.\"\"\"\n\n    def __init__(self, root):\n        self.root = root\n        self.counts = Counter()\n\n")
	for i := 0; strings.Count(b.String(), "\n") < n-12; i++ {
		fmt.Fprintf(&b, "    def load_%d(self, name):\n        \"\"\"Load entry %d.\"\"\"\n        path = os.path.join(self.root, name + \".json\")\n        with open(path, encoding=\"utf-8\") as f:\n            data = json.load(f)\n        self.counts[name] += %d\n        return data\n\n", i, i, i)
	}
	b.WriteString("\ndef main():\n    \"\"\"Run.\"\"\"\n    s = Store(\".\")\n    print(s.load_0(\"x\"), s.counts.most_common(3))\n")
	return b.String()
}

// BenchmarkCodeControls runs the default code controls of the pure tier
// (complet, syntaxe, symboles, docstrings) on a 300-line Python file.
func BenchmarkCodeControls(b *testing.B) {
	code := pythonFile(300)
	if got := strings.Count(code, "\n"); got < 295 || got > 305 {
		b.Fatalf("file of %d lines", got)
	}
	req := wire.Request{Sortie: "pkg/store.py", Attendus: []string{"Store", "main"}}
	cs, err := Full().Select([]string{NameComplet, NameSyntaxe, NameSymboles, NameDocstrings})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	in := NewInput(req, "```python\n"+code+"```\n", nil)
	if res, ok := Run(ctx, cs, in); !ok {
		b.Fatalf("the benchmark file fails: %+v", res)
	}
	b.ResetTimer()
	for b.Loop() {
		Run(ctx, cs, NewInput(req, "```python\n"+code+"```\n", nil))
	}
}

// BenchmarkLint runs the lint control alone (a linter process) on the same
// file.
func BenchmarkLint(b *testing.B) {
	code := pythonFile(300)
	in := NewInput(wire.Request{Sortie: "pkg/store.py"}, code, nil)
	ctx := context.Background()
	if r := (Lint{}).Check(ctx, in); !r.OK || strings.Contains(r.Message, "skipped") {
		b.Skipf("lint: %+v", r)
	}
	for b.Loop() {
		Lint{}.Check(ctx, in)
	}
}
