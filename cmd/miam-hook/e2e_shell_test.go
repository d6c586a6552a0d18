package main

import (
	"strings"
	"testing"

	"miam/fixtures/fakeapi"
)

// TestE2EShell is rule 4 through the real Claude Code CLI: a 40-line
// here-doc into a source file is denied before bash runs it, with the ready
// deleguer call; a one-line echo into a source file then goes through.
func TestE2EShell(t *testing.T) {
	root := repoRoot(t)
	claude := claudeBin(t, root)
	bindir := buildBinaries(t, root)
	runScenario(t, root, claude, bindir, scenario{
		name:   "shell_heredoc_denied",
		prompt: "SCENARIO-SHELL: write the helpers with the shell",
		steps: func(proj string) []fakeapi.Step {
			return []fakeapi.Step{
				{Name: "heredoc", When: fakeapi.FirstUserContains("SCENARIO-SHELL"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_sh_heredoc", "Bash", map[string]any{
						"command":     "mkdir -p src && cat > src/x.py <<'EOF'\n" + python("helper", 40, 0, 0) + "EOF",
						"description": "Write src/x.py",
					}),
				}},
				{Name: "echo", When: fakeapi.AfterToolResult("toolu_sh_heredoc"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_sh_echo", "Bash", map[string]any{
						"command":     "mkdir -p src && echo 'VERSION = 1' > src/version.py",
						"description": "Write the version",
					}),
				}},
				done("toolu_sh_echo"),
			}
		},
		check: func(t *testing.T, w *world) {
			text := wantDenied(t, w, "toolu_sh_heredoc", "src/x.py", "miam rule 4 (shell writes)", "mcp__miam__deleguer", `"sortie":"src/x.py"`)
			if !strings.Contains(text, "40 code lines to src/x.py") {
				t.Errorf("deny text does not count the here-doc's 40 code lines:\n%s", text)
			}
			wantAllowed(t, w, "toolu_sh_echo", "src/version.py")
		},
	})
}
