package delegate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func TestWriteOutputAtomicAndDiff(t *testing.T) {
	proj := t.TempDir()
	d, err := WriteOutput(proj, "src/new/calc.py", []byte("a\nb\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire.Diff{Files: []string{"src/new/calc.py"}, Added: 2}, d); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}
	d, err = WriteOutput(proj, "src/new/calc.py", []byte("a\nc\nd\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire.Diff{Files: []string{"src/new/calc.py"}, Added: 2, Removed: 1}, d); diff != "" {
		t.Errorf("second diff (-want +got):\n%s", diff)
	}
	got, _ := os.ReadFile(filepath.Join(proj, "src/new/calc.py"))
	if string(got) != "a\nc\nd\n" {
		t.Errorf("content %q", got)
	}
	entries, _ := os.ReadDir(filepath.Join(proj, "src/new"))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestWriteOutputRefusesEscapes(t *testing.T) {
	proj := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(proj, "link")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"../x.py", "a/../../x.py", "/etc/x.py", "link/x.py", "", "."} {
		_, err := WriteOutput(proj, rel, []byte("x\n"))
		if !errors.Is(err, ErrOutsideProject) {
			t.Errorf("WriteOutput(%q): err %v, want ErrOutsideProject", rel, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("a write escaped the project: %v", entries)
	}
}

func TestReadRange(t *testing.T) {
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "f.py"), []byte("1\n2\n3\n4\n"), 0o644)
	root, _ := os.OpenRoot(proj)
	defer root.Close()
	tests := []struct {
		spec, want string
		bad        bool
	}{
		{"f.py", "1\n2\n3\n4\n", false},
		{"f.py:2-3", "2\n3\n", false},
		{"f.py:3-99", "3\n4\n", false},
		{"f.py:3-2", "", true},
		{"f.py:x", "", true},
		{"../f.py", "", true},
		{"missing.py", "", true},
	}
	for _, tc := range tests {
		_, got, err := readRange(root, tc.spec)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("readRange(%q) = %q, %v; want %q, bad=%v", tc.spec, got, err, tc.want, tc.bad)
		}
	}
}

func TestRetryPromptCarriesFailures(t *testing.T) {
	msgs := retryMessages([]Message{{Role: "user", Content: "task"}}, "def f(:", []wire.Control{
		{Nom: "syntaxe", OK: false, Message: "line 1:7: syntax error near `def f(:`"},
		{Nom: "complet", OK: true},
	})
	last := msgs[len(msgs)-1]
	if len(msgs) != 3 || msgs[1].Content != "def f(:" || !strings.Contains(last.Content, "line 1:7: syntax error") || strings.Contains(last.Content, "- complet") {
		t.Errorf("retry messages wrong: %+v", msgs)
	}
}
