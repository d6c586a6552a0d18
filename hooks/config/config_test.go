package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeErrorsNameFileLineAndKey(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"unknown top key", "rules:\n  tests: deny\nbudgetz:\n  code_lines: 3\n", []string{".miam/config.yaml", "line 3", `unknown key "budgetz"`}},
		{"unknown nested key", "budgets:\n  code_lines: 30\n  code_line: 3\n", []string{"line 3", `unknown key "code_line"`}},
		{"bad mode", "rules:\n  tests: maybe\n", []string{"line 2", `"maybe" is not a rule mode`}},
		{"bad type", "budgets:\n  code_lines: lots\n", []string{"line 2", "lots"}},
		{"broken yaml", "rules: [\n", []string{".miam/config.yaml", "line"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(Config{}, ".miam/config.yaml", []byte(tc.data))
			if err == nil {
				t.Fatal("Decode succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadProjectWinsKeyByKey(t *testing.T) {
	user := []byte("rules:\n  tests: measure\n  write_budget: off\nbudgets:\n  code_lines: 50\nsandbox:\n  allow_unsandboxed: true\n")
	project := []byte("rules:\n  tests: deny\nbudgets:\n  tests_lines: 5\nsandbox:\n  allow_unsandboxed: false\n")
	got, err := Load("user.yaml", user, "project.yaml", project)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Rules:   Rules{Tests: Deny, WriteBudget: Off},
		Budgets: Budgets{CodeLines: 50, TestsLines: 5},
		Sandbox: Sandbox{AllowUnsandboxed: true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Load (-want +got):\n%s", d)
	}
}

func TestProjectCannotAllowUnsandboxed(t *testing.T) {
	got, err := Load("user.yaml", nil, "project.yaml", []byte("sandbox:\n  allow_unsandboxed: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Sandbox.AllowUnsandboxed {
		t.Error("a project config turned allow_unsandboxed on")
	}
}

func TestDefaults(t *testing.T) {
	var b Budgets
	got := []int{b.TestsLinesOr(), b.CodeLinesOr(), b.SmallEditLinesOr(), b.ReadCharsPerTurnOr(), b.ReadLinesPerFileOr()}
	if d := cmp.Diff([]int{10, 30, 3, 40000, 400}, got); d != "" {
		t.Error(d)
	}
}
