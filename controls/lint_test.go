package controls

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func noTool(string) (string, error) { return "", errors.New("not found") }

func TestLintSkipsAndSays(t *testing.T) {
	dir := t.TempDir()
	configured := t.TempDir()
	if err := os.WriteFile(filepath.Join(configured, "eslint.config.js"), []byte("export default [];\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		lint Lint
		req  wire.Request
		code string
		dir  string
		want wire.Control
	}{
		{"no python linter", Lint{LookPath: noTool}, wire.Request{Sortie: "a.py"}, "x = 1\n", "",
			wire.Control{Nom: "lint", OK: true, Message: "neither ruff nor pyflakes is installed: skipped"}},
		{"no go", Lint{LookPath: noTool}, wire.Request{Sortie: "a.go"}, "package a\n", "",
			wire.Control{Nom: "lint", OK: true, Message: "the go command is not installed: skipped"}},
		{"eslint without project dir", Lint{}, wire.Request{Sortie: "a.js"}, "let x = 1;\n", "",
			wire.Control{Nom: "lint", OK: true, Message: "the project's directory is unknown, so is its eslint configuration: skipped"}},
		{"eslint not configured", Lint{}, wire.Request{Sortie: "a.js"}, "let x = 1;\n", dir,
			wire.Control{Nom: "lint", OK: true, Message: "the project does not configure eslint: skipped"}},
		{"eslint configured, not installed", Lint{LookPath: noTool}, wire.Request{Sortie: "a.js"}, "let x = 1;\n", configured,
			wire.Control{Nom: "lint", OK: true, Message: "eslint is not installed: skipped"}},
		{"no linter for rust", Lint{}, wire.Request{Sortie: "a.rs"}, "fn main() {}\n", "",
			wire.Control{Nom: "lint", OK: true, Message: "no linter for this language: skipped"}},
		{"go outside std", Lint{}, wire.Request{Sortie: "a.go"}, "package a\n\nimport \"github.com/x/y\"\n\nvar _ = y.Z\n", "",
			wire.Control{Nom: "lint", OK: true, Message: "go vet cannot load \"github.com/x/y\" offline: skipped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := NewInput(tt.req, tt.code, nil)
			in.Dir = tt.dir
			got := tt.lint.Check(context.Background(), in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLintPython(t *testing.T) {
	if _, err := exec.LookPath("pyflakes3"); err != nil {
		if _, err := exec.LookPath("pyflakes"); err != nil {
			if _, err := exec.LookPath("ruff"); err != nil {
				t.Skip("no Python linter installed (.ci/test.sh installs pyflakes3)")
			}
		}
	}
	joined := map[string][]byte{"pkg/m.py": []byte("def helper():\n    return 1\n")}
	tests := []struct {
		name   string
		code   string
		ok     bool
		substr string
	}{
		{"clean", "import os\n\nprint(os.sep)\n", true, ""},
		{"unused import", "import os\n", false, "line 1: 'os' imported but unused"},
		{"undefined name", "print(nope)\n", false, "undefined name"},
		{"name from a joined file", "def f():\n    return helper()\n", true, ""},
		{"indented method alone", "    def f(self):\n        return helper()\n", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Lint{}.Check(context.Background(), NewInput(wire.Request{Sortie: "pkg/m.py", Fichiers: []string{"pkg/m.py"}}, tt.code, joined))
			if got.OK != tt.ok || !strings.Contains(got.Message, tt.substr) {
				t.Errorf("got %+v, want ok=%v with %q", got, tt.ok, tt.substr)
			}
		})
	}
}

func TestLintGoVet(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	joined := map[string][]byte{"kv/store.go": []byte("package kv\n\n// Store stores.\ntype Store struct{ m map[string]int }\n\n// Get gets.\nfunc (s *Store) Get(k string) int { return s.m[k] }\n")}
	tests := []struct {
		name string
		code string
		want wire.Control
	}{
		{"clean with joined package file", "package kv\n\n// Two gets twice.\nfunc Two(s *Store) int { return s.Get(\"a\") + s.Get(\"b\") }\n", wire.Control{Nom: "lint", OK: true, Message: "go vet: clean"}},
		{"invented method", "package kv\n\n// Two gets twice.\nfunc Two(s *Store) int { return s.Fetch(\"a\") }\n", wire.Control{Nom: "lint", Message: "go vet: line 4: s.Fetch undefined (type *Store has no field or method Fetch)"}},
		{"no package clause", "// Three is 3.\nfunc Three() int { return 3 }\n", wire.Control{Nom: "lint", OK: true, Message: "go vet: clean"}},
		{"undefined helper not judged", "package kv\n\n// Four is 4.\nfunc Four() int { return helper() }\n", wire.Control{Nom: "lint", OK: true, Message: "go vet: clean"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Lint{}.Check(context.Background(), NewInput(wire.Request{Sortie: "kv/two.go", Fichiers: []string{"kv/store.go"}}, tt.code, joined))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
