package controls

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func TestComplet(t *testing.T) {
	py := func(r wire.Request) wire.Request {
		if r.Sortie == "" {
			r.Sortie = "src/x.py"
		}
		r.Consigne = "write it"
		return r
	}
	tests := []struct {
		name string
		req  wire.Request
		raw  string
		want wire.Control
	}{
		{
			name: "complete function with the attendus",
			req:  py(wire.Request{Attendus: []string{"add"}}),
			raw:  "Here it is:\n```python\ndef add(a, b):\n    \"\"\"Add.\"\"\"\n    return a + b\n```\n",
			want: wire.Control{Nom: "complet", OK: true},
		},
		{
			name: "empty answer",
			req:  py(wire.Request{}),
			raw:  "```python\n```",
			want: wire.Control{Nom: "complet", Message: "the answer holds no code: send the whole artefact"},
		},
		{
			name: "truncated inside the fence",
			req:  py(wire.Request{}),
			raw:  "```python\ndef add(a, b):\n    return (a +",
			want: wire.Control{Nom: "complet", Message: "truncated: the answer stops inside a code block; send the whole artefact"},
		},
		{
			name: "truncated go function: missing brace",
			req:  wire.Request{Consigne: "x", Sortie: "pkg/add.go"},
			raw:  "package pkg\n\nfunc Add(a, b int) int {\n\treturn a + b\n",
			want: wire.Control{Nom: "complet", Message: "truncated after line 4 `return a + b`: finish the code"},
		},
		{
			name: "truncated python call",
			req:  py(wire.Request{}),
			raw:  "def f(x):\n    return g(x,\n",
			want: wire.Control{Nom: "complet", Message: "truncated after line 2 `return g(x,`: finish the code"},
		},
		{
			name: "truncated string",
			req:  wire.Request{Consigne: "x", Sortie: "a.js"},
			raw:  "function f() {\n  return \"abc\n",
			want: wire.Control{Nom: "complet", Message: "truncated after line 2 `return \"abc`: finish the code"},
		},
		{
			name: "attendus mentioned in a comment only",
			req:  py(wire.Request{Attendus: []string{"parse_line", "Parser"}}),
			raw:  "# parse_line is left for later\nclass Parser:\n    def run(self):\n        return 1\n",
			want: wire.Control{Nom: "complet", Message: "`parse_line` is mentioned but not defined: write its definition"},
		},
		{
			name: "attendus absent",
			req:  py(wire.Request{Attendus: []string{"parse_line"}}),
			raw:  "def parse(line):\n    return line.split()\n",
			want: wire.Control{Nom: "complet", Message: "`parse_line` is not defined: write it"},
		},
		{
			name: "qualified attendus matches a method",
			req:  py(wire.Request{Attendus: []string{"Parser.run"}}),
			raw:  "class Parser:\n    def run(self):\n        return 1\n",
			want: wire.Control{Nom: "complet", OK: true},
		},
		{
			name: "pass-only body of a requested function",
			req:  py(wire.Request{Attendus: []string{"parse_line"}}),
			raw:  "def parse_line(line):\n    \"\"\"Parse one line.\"\"\"\n    # TODO\n    pass\n",
			want: wire.Control{Nom: "complet", Message: "`parse_line` has a placeholder body (`pass`): implement it"},
		},
		{
			name: "raise NotImplementedError body",
			req:  py(wire.Request{Attendus: []string{"f"}}),
			raw:  "def f(x: int) -> dict[str, int]:\n    raise NotImplementedError(\"later\")\n",
			want: wire.Control{Nom: "complet", Message: "`f` has a placeholder body (`raise NotImplementedError(\"later\")`): implement it"},
		},
		{
			name: "go panic TODO body",
			req:  wire.Request{Consigne: "x", Sortie: "p/p.go", Attendus: []string{"Sum"}},
			raw:  "package p\n\n// Sum adds.\nfunc Sum(xs []int) int {\n\tpanic(\"TODO\")\n}\n",
			want: wire.Control{Nom: "complet", Message: "`Sum` has a placeholder body (`panic(\"TODO\")`): implement it"},
		},
		{
			name: "rust todo! body",
			req:  wire.Request{Consigne: "x", Sortie: "src/lib.rs", Attendus: []string{"sum"}},
			raw:  "pub fn sum(xs: &[i32]) -> i32 {\n    todo!()\n}\n",
			want: wire.Control{Nom: "complet", Message: "`sum` has a placeholder body (`todo!()`): implement it"},
		},
		{
			name: "pass body of an unrequested class is fine",
			req:  py(wire.Request{Attendus: []string{"f"}}),
			raw:  "class Oops(Exception):\n    pass\n\ndef f():\n    raise Oops()\n",
			want: wire.Control{Nom: "complet", OK: true},
		},
		{
			name: "ellipsis and rest-of-code comment stand for code",
			req:  py(wire.Request{}),
			raw:  "def f(x):\n    y = x * 2\n    ...\n\n# ... rest of the code unchanged\n",
			want: wire.Control{Nom: "complet", Message: "line 3 is a placeholder `...`: write the code it stands for; line 5 is a placeholder `# ... rest of the code unchanged`: write the code it stands for"},
		},
		{
			name: "TODO implement comment",
			req:  wire.Request{Consigne: "x", Sortie: "a.ts"},
			raw:  "export function f(): number {\n  // TODO: implement the cache\n  return 1;\n}\n",
			want: wire.Control{Nom: "complet", Message: "line 2 is a placeholder `// TODO: implement the cache`: write the code it stands for"},
		},
		{
			name: "ellipsis in a Protocol is a stub, not a placeholder",
			req:  py(wire.Request{}),
			raw:  "from typing import Protocol\n\nclass Reader(Protocol):\n    def read(self) -> bytes:\n        ...\n",
			want: wire.Control{Nom: "complet", OK: true},
		},
		{
			name: "too few tests",
			req:  py(wire.Request{Type: "tests", Sortie: "tests/test_x.py", NTests: 3}),
			raw:  "```python\nimport pytest\n\ndef helper():\n    return 1\n\ndef test_one():\n    assert helper() == 1\n\ndef test_two():\n    assert helper() != 2\n```",
			want: wire.Control{Nom: "complet", Message: "2 test functions found, 3 wanted: write 1 more"},
		},
		{
			name: "enough go tests, suites and helpers not counted",
			req:  wire.Request{Consigne: "x", Type: "tests", Sortie: "p/p_test.go", NTests: 2},
			raw:  "package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n\nfunc TestB(t *testing.T) { t.Log(1) }\n\nfunc testHelper() {}\n",
			want: wire.Control{Nom: "complet", OK: true},
		},
		{
			name: "no grammar: attendus as mentions",
			req:  wire.Request{Consigne: "x", Sortie: "x.lua", Attendus: []string{"greet"}},
			raw:  "function greet()\n  print('hi')\nend\n",
			want: wire.Control{Nom: "complet", OK: true},
		},
		{
			name: "no grammar: brackets left open",
			req:  wire.Request{Consigne: "x", Sortie: "x.lua"},
			raw:  "local t = {\n  a = 1\n",
			want: wire.Control{Nom: "complet", Message: "truncated after line 2 `a = 1`: finish the code"},
		},
		{
			name: "several problems at once",
			req:  py(wire.Request{Attendus: []string{"a", "b"}}),
			raw:  "def a():\n    pass\n",
			want: wire.Control{Nom: "complet", Message: "`a` has a placeholder body (`pass`): implement it; `b` is not defined: write it"},
		},
		{
			name: "text complete",
			req:  wire.Request{Consigne: "x", Type: "resume"},
			raw:  "The module parses lines and counts words. It handles Unicode.\n",
			want: wire.Control{Nom: "complet", OK: true},
		},
		{
			name: "text empty",
			req:  wire.Request{Consigne: "x", Type: "texte"},
			raw:  " \n",
			want: wire.Control{Nom: "complet", Message: "the answer is empty: send the whole text"},
		},
		{
			name: "text cut mid-sentence",
			req:  wire.Request{Consigne: "x", Type: "traduction"},
			raw:  "Le module lit les lignes et compte les mots, puis il renvoie le total de chaque",
			want: wire.Control{Nom: "complet", Message: "truncated mid-sentence after `…mots, puis il renvoie le total de chaque`: finish the text"},
		},
		{
			name: "text ending on a comma",
			req:  wire.Request{Consigne: "x", Type: "resume"},
			raw:  "It reads the file,",
			want: wire.Control{Nom: "complet", Message: "truncated mid-sentence after `It reads the file,`: finish the text"},
		},
		{
			name: "text ending on a list item is fine",
			req:  wire.Request{Consigne: "x", Type: "resume"},
			raw:  "Steps:\n- read the file and split it into many lines of text\n- count the words of every line in the file",
			want: wire.Control{Nom: "complet", OK: true},
		},
		{
			name: "json truncated",
			req:  wire.Request{Consigne: "x", Type: "extraction", Format: "json"},
			raw:  "```json\n{\"name\": \"a\", \"items\": [1, 2",
			want: wire.Control{Nom: "complet", Message: "truncated: the JSON stops before its end; send the whole document"},
		},
		{
			name: "json truncated without fence",
			req:  wire.Request{Consigne: "x", Type: "extraction", Format: "json"},
			raw:  "{\"name\": \"a\", \"items\": [1, 2",
			want: wire.Control{Nom: "complet", Message: "truncated: the JSON stops before its end; send the whole document"},
		},
		{
			name: "json attendus keys",
			req:  wire.Request{Consigne: "x", Format: "json", Attendus: []string{"name", "version"}},
			raw:  "{\"name\": \"a\", \"deps\": {\"b\": 1}}",
			want: wire.Control{Nom: "complet", Message: "key \"version\" is missing"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := NewInput(tt.req, tt.raw, nil)
			got := Complet{}.Check(context.Background(), in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("complet mismatch (-want +got):\n%s\ncode:\n%s", diff, in.Code)
			}
		})
	}
}
