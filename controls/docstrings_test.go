package controls

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func TestDocstrings(t *testing.T) {
	ok := wire.Control{Nom: "docstrings", OK: true}
	tests := []struct {
		name  string
		req   wire.Request
		code  string
		files map[string][]byte
		want  wire.Control
	}{
		{name: "python documented", req: wire.Request{Sortie: "a.py"}, code: "def f():\n    \"\"\"Do f.\"\"\"\n\n\nclass C:\n    '''A C.'''\n\n    def __init__(self):\n        pass\n\n    def _hidden(self):\n        pass\n", want: ok},
		{name: "python decorated and multi-line signature", req: wire.Request{Sortie: "a.py"}, code: "@cache\ndef f(\n    a: int,\n) -> dict[str, int]:\n    # comment first\n    r\"\"\"Do f.\"\"\"\n", want: ok},
		{name: "python missing", req: wire.Request{Sortie: "a.py"}, code: "def f():\n    return 1\n\n\ndef _g():\n    return 2\n",
			want: wire.Control{Nom: "docstrings", Message: "undocumented public definitions: `f` (line 1); add a \"\"\"docstring\"\"\" to each"}},
		{name: "python test file exempt", req: wire.Request{Type: "tests", Sortie: "tests/test_a.py"}, code: "def test_a():\n    assert True\n", want: ok},
		{name: "python existing undocumented exempt", req: wire.Request{Sortie: "a.py"}, files: map[string][]byte{"a.py": []byte("def old():\n    return 0\n")},
			code: "def old():\n    return 0\n\n\ndef new():\n    \"\"\"New.\"\"\"\n    return 1\n", want: ok},
		{name: "go method", req: wire.Request{Sortie: "a.go"}, code: "package a\n\n// T is a t.\ntype T struct{}\n\nfunc (T) M() {}\n",
			want: wire.Control{Nom: "docstrings", Message: "undocumented public definitions: `M` (line 6); add a `// Name …` doc comment to each"}},
		{name: "go article allowed", req: wire.Request{Sortie: "a.go"}, code: "package a\n\n// A Point is a point.\ntype Point struct{}\n", want: ok},
		{name: "go test file exempt", req: wire.Request{Sortie: "a_test.go"}, code: "package a\n\nfunc TestX(t *testing.T) {}\n\nfunc Helper() {}\n", want: ok},
		{name: "ts unexported ignored", req: wire.Request{Sortie: "a.ts"}, code: "function f() {}\nexport const g = () => 1;\n",
			want: wire.Control{Nom: "docstrings", Message: "undocumented public definitions: `g` (line 2); add a `/** … */` JSDoc comment to each"}},
		{name: "csharp", req: wire.Request{Sortie: "A.cs"}, code: "/// <summary>A.</summary>\npublic class A {\n    public int F() { return 1; }\n    public override string ToString() { return \"\"; }\n}\n",
			want: wire.Control{Nom: "docstrings", Message: "undocumented public definitions: `A.F` (line 3); add a `///` XML doc comment to each"}},
		{name: "c skipped", req: wire.Request{Sortie: "a.c"}, code: "int f(void) { return 1; }\n",
			want: wire.Control{Nom: "docstrings", OK: true, Message: "no documentation convention checked for this language: skipped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Docstrings{}.Check(context.Background(), NewInput(tt.req, tt.code, tt.files))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
