package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPoliciesWarnings(t *testing.T) {
	tests := []struct {
		name string
		yaml string // "" leaves no file
		want []string
	}{
		{"no file", "", nil},
		{"fine", "rules:\n  - id: push\n    verdict_on_match: block\n    tool_pattern: \"Bash(git push:*)\"\n" +
			"  - id: long\n    verdict_on_match: block\n    tool_pattern: Bash\n    per_session: {max_duration_min: 2880}\n", nil},
		{"block without pattern", "rules:\n  - id: all\n    verdict_on_match: block\n    per_session: {max_tool_calls: 100}\n",
			[]string{`.miam/policies.yaml:2: rule "all" blocks without a tool_pattern`}},
		{"short sessions", "rules:\n  - id: short\n    verdict_on_match: warn\n    tool_pattern: Bash\n    per_session: {max_duration_min: 60}\n",
			[]string{`.miam/policies.yaml:2: rule "short" caps sessions at 60 min (< 2880`}},
		{"broken", "rules:\n  - id: a\n    verdict_on_match: maybe\n", []string{"verdict_on_match", "ignores the file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proj := t.TempDir()
			if tt.yaml != "" {
				writeTestFile(t, filepath.Join(proj, ".miam", "policies.yaml"), tt.yaml)
			}
			got := policiesWarnings(proj)
			if len(tt.want) == 0 {
				if len(got) != 0 {
					t.Errorf("warnings %q, want none", got)
				}
				return
			}
			all := strings.Join(got, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("warnings %q lack %q", got, w)
				}
			}
		})
	}
}

// TestManagedWarnings: right after `miam install` for every host, doctor
// has nothing to say; a hand edit of miam's part of each file is reported.
func TestManagedWarnings(t *testing.T) {
	for _, dir := range []string{"/opt/miam", "/opt/my tools/miam"} {
		t.Run(dir, func(t *testing.T) { testManagedWarnings(t, dir+"/miam-hook", dir+"/miam") })
	}
}

func testManagedWarnings(t *testing.T, hook, miamBin string) {
	proj := t.TempDir()
	installers, err := hostInstallers("claude,copilot,opencode")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range installers {
		if _, err := in(proj, hook, miamBin); err != nil {
			t.Fatal(err)
		}
	}
	if got := managedWarnings(proj); len(got) != 0 {
		t.Fatalf("fresh install: warnings %q, want none", got)
	}
	edit := func(rel, old, new string) {
		t.Helper()
		name := filepath.Join(proj, filepath.FromSlash(rel))
		data, err := os.ReadFile(name)
		if err != nil || !strings.Contains(string(data), old) {
			t.Fatalf("%s lacks %q (%v)", rel, old, err)
		}
		writeTestFile(t, name, strings.Replace(string(data), old, new, 1))
	}
	edit(".claude/settings.json", `"PreToolUse"`, `"PreToolUseX"`)
	edit(".github/hooks/miam.json", `preToolUse`, `preToolUseX`)
	edit(".opencode/plugin/miam-guard.js", `tool.execute.before`, `tool.execute.beforeX`)
	all := strings.Join(managedWarnings(proj), "\n")
	for _, want := range []string{".claude/settings.json", ".github/hooks/miam.json", ".opencode/plugin/miam-guard.js"} {
		if !strings.Contains(all, want+":") {
			t.Errorf("no warning for %s in:\n%s", want, all)
		}
	}
}

// TestHostsWarnings: a host miam is installed for and that never emitted a
// trace is named; before any trace, one line says nothing ran yet.
func TestHostsWarnings(t *testing.T) {
	proj := t.TempDir()
	if got := hostsWarnings(proj); len(got) != 0 {
		t.Errorf("nothing installed: %q", got)
	}
	installers, err := hostInstallers("claude,copilot,opencode")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range installers {
		if _, err := in(proj, "/opt/miam/miam-hook", "/opt/miam/miam"); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(hostsWarnings(proj), "\n"); !strings.Contains(got, "no hook has run yet") {
		t.Errorf("before any trace: %q", got)
	}
	writeTestFile(t, filepath.Join(proj, ".miam", "traces.jsonl"),
		`{"time":"2026-11-29T21:02:11Z","session":"s","event":"PreToolUse","host":"claude","tool":"Bash","decision":"none"}`+"\n"+
			`{"time":"2026-11-29T21:03:11Z","session":"o","event":"PreToolUse","host":"opencode","tool":"Bash","decision":"deny","rule":"tool_policy"}`+"\n")
	got := hostsWarnings(proj)
	if len(got) != 1 || !strings.Contains(got[0], "installed for copilot but copilot never ran miam-hook") || !strings.Contains(got[0], "trusted") {
		t.Errorf("warnings %q, want one for copilot", got)
	}
}
