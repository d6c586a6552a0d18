package controls

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func TestAnswerFiles(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want []string
	}{
		{"plain fence", "```python\nx = 1\n```\n", nil},
		{"info title", "```python title=\"src/a.py\"\nx = 1\n```\n", []string{"src/a.py"}},
		{"info path", "```src/a.go\npackage a\n```\n", []string{"src/a.go"}},
		{"info lang:path", "```py:pkg/b.py\nx = 1\n```\n", []string{"pkg/b.py"}},
		{"bold header", "**src/a.py**\n\n```python\nx = 1\n```\n", []string{"src/a.py"}},
		{"file: header", "File: `tests/test_a.py`\n```python\nx = 1\n```\n", []string{"tests/test_a.py"}},
		{"prose mentioning a file is no header", "This reads config.json and prints it:\n```python\nx = 1\n```\n", nil},
		{"first-line comment", "```go\n// file: cmd/main.go\npackage main\n```\n", []string{"cmd/main.go"}},
		{"diff", "--- a/x.py\n+++ b/x.py\n@@\n--- /dev/null\n+++ b/new.py\n", []string{"x.py", "new.py"}},
		{"apply_patch", "*** Begin Patch\n*** Update File: a/b.rs\n", []string{"a/b.rs"}},
		{"module name is no file", "`os.path`:\n```python\nx = 1\n```\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, AnswerFiles(tt.raw)); diff != "" {
				t.Errorf("AnswerFiles mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPerimetre(t *testing.T) {
	two := "**a.py**\n```python\nx = 1\n```\n**b.py**\n```python\ny = 2\n```\n"
	tests := []struct {
		name string
		req  wire.Request
		raw  string
		want wire.Control
	}{
		{"nothing to compare", wire.Request{}, two, wire.Control{Nom: "perimetre", OK: true, Message: "no perimetre nor sortie to compare with: skipped"}},
		{"sortie alone", wire.Request{Sortie: "a.py"}, "```python\nx = 1\n```\n", wire.Control{Nom: "perimetre", OK: true}},
		{"extra file", wire.Request{Sortie: "a.py"}, two, wire.Control{Nom: "perimetre", Message: "the answer writes b.py, outside the perimetre (a.py): change only those files, in one artefact"}},
		{"both in perimetre", wire.Request{Sortie: "a.py", Perimetre: []string{"a.py", "b.py"}}, two, wire.Control{Nom: "perimetre", OK: true}},
		{"glob", wire.Request{Sortie: "src/a.py", Perimetre: []string{"src/*.py"}}, "```python title=src/b.py\nx = 1\n```\n", wire.Control{Nom: "perimetre", OK: true}},
		{"directory", wire.Request{Sortie: "src/a.py", Perimetre: []string{"src/"}}, "```python title=src/deep/b.py\nx = 1\n```\n", wire.Control{Nom: "perimetre", OK: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Perimetre{}.Check(context.Background(), NewInput(tt.req, tt.raw, nil))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzAnswerFiles: the answer parser never panics and returns clean,
// relative paths.
func FuzzAnswerFiles(f *testing.F) {
	for _, s := range []string{"```x.py\n", "**a/b.go**\n```go\n", "+++ b/\n", "```py:\n", "```\n# \n```", "*** Add File: ../x.py"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range AnswerFiles(s) {
			if p == "" || p[0] == '/' {
				t.Fatalf("AnswerFiles(%q) gave %q", s, p)
			}
		}
	})
}
