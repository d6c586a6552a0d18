package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"miam/budgets"
	"miam/fixtures/fakeapi"
)

// The temporal policies (.miam/policies.yaml) through the real Claude Code
// CLI.
//
// require_approval needs a real ask, so that run is in --permission-mode
// default. Under -p with nobody to answer, a hook's "ask" is simply a
// refusal (observed: the model gets the reason as an error, and no
// PermissionRequest hook fires), so nothing would ever be approved. The
// user's "yes" is played by --permission-prompt-tool: a tiny stdio MCP
// server (testdata/grant_mcp.py) that Claude Code asks at each prompt, which
// grants and logs it. Claude Code never prompts for echo by itself (checked:
// without the rule, no prompt at all), so every prompt it logs comes from
// miam's ask. The proof: the first call is
// prompted, runs, and its PostToolUse records the approval; the identical
// second call (blanks aside) is not prompted, miam allowed it silently; a
// different call is prompted again.
func TestE2EPolicies(t *testing.T) {
	root := repoRoot(t)
	claude := claudeBin(t, root)
	bindir := buildBinaries(t, root)

	t.Run("require_approval_asks_once", func(t *testing.T) {
		t.Parallel()
		s := newSandbox(t)
		installMiam(t, s, bindir)
		writeFile(t, filepath.Join(s.proj, ".miam", "policies.yaml"), []byte(`rules:
  - id: approve-echo
    description: "echo asks once per session"
    tool_pattern: "Bash(echo:*)"
    require_approval: true
`))
		permlog := filepath.Join(s.root, "permission-prompts")
		grant, err := filepath.Abs(filepath.Join("testdata", "grant_mcp.py"))
		if err != nil {
			t.Fatal(err)
		}
		mcpConfig, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
			"grant": map[string]any{"type": "stdio", "command": "python3", "args": []string{grant, permlog}}}})
		api := fakeapi.New([]fakeapi.Step{
			{Name: "touch 1", When: fakeapi.FirstUserContains("SCENARIO-POL-APPROVE"), Reply: []fakeapi.Block{
				fakeapi.ToolUse("toolu_pol_a1", "Bash", map[string]any{"command": "echo approved-once", "description": "Say it"}),
			}},
			{Name: "touch 2", When: fakeapi.AfterToolResult("toolu_pol_a1"), Reply: []fakeapi.Block{
				fakeapi.ToolUse("toolu_pol_a2", "Bash", map[string]any{"command": "echo   approved-once", "description": "Again"}),
			}},
			{Name: "touch other", When: fakeapi.AfterToolResult("toolu_pol_a2"), Reply: []fakeapi.Block{
				fakeapi.ToolUse("toolu_pol_a3", "Bash", map[string]any{"command": "echo other-call", "description": "Say another"}),
			}},
			done("toolu_pol_a3"),
		})
		defer api.Close()
		out := runClaudeMode(t, claude, s, claudeEnv(s, api.URL()), "SCENARIO-POL-APPROVE: say it", "default",
			"--mcp-config", string(mcpConfig), "--permission-prompt-tool", "mcp__grant__approve")
		if p := api.Pending(); len(p) > 0 {
			t.Fatalf("the model script did not play out; steps never requested: %v\n%s", p, tail(string(out), 3000))
		}
		asked := readGrantLog(t, permlog)
		t.Logf("the permission prompt tool was asked about: %q", asked)
		want := []string{"echo approved-once", "echo other-call"}
		if fmt.Sprint(asked) != fmt.Sprint(want) {
			t.Errorf("prompted for %q, want %q: the first call asked, the identical second one passed silently, the other asked", asked, want)
		}
		for id, out := range map[string]string{"toolu_pol_a1": "approved-once", "toolu_pol_a2": "approved-once", "toolu_pol_a3": "other-call"} {
			if res := toolResult(t, &world{api: api}, id); res.IsError || !strings.Contains(res.ResultText(), out) {
				t.Errorf("%s did not run: %s", id, res.ResultText())
			}
		}
		// miam recorded both approvals (the second call was already approved).
		states, _ := filepath.Glob(filepath.Join(s.proj, ".miam", "state", "session-*.json"))
		if len(states) != 1 {
			t.Fatalf("state files: %v", states)
		}
		var st budgets.State
		if data, err := budgets.ReadStateFile(states[0]); err != nil || json.Unmarshal(data, &st) != nil || st.Policies == nil {
			t.Fatalf("state %s: %v %s", states[0], err, data)
		}
		if n := len(st.Policies.Rules["approve-echo"].Approved); n != 2 {
			t.Errorf("%d approvals recorded, want 2: %+v", n, st.Policies)
		}
	})

	t.Run("per_session_budget_then_reset", func(t *testing.T) {
		t.Parallel()
		miam := filepath.Join(bindir, "miam")
		runScenario(t, root, claude, bindir, scenario{
			name:   "policies_budget_reset",
			prompt: "SCENARIO-POL-BUDGET: create the notes",
			steps: func(proj string) []fakeapi.Step {
				writeFile(t, filepath.Join(proj, ".miam", "policies.yaml"), []byte(`rules:
  - id: bash-budget
    description: "two shell commands per session"
    verdict_on_match: block
    tool_pattern: Bash
    per_session: {max_tool_calls: 2}
`))
				bash := func(id, cmd string) fakeapi.Block {
					return fakeapi.ToolUse(id, "Bash", map[string]any{"command": cmd, "description": "Run"})
				}
				return []fakeapi.Step{
					{Name: "a", When: fakeapi.FirstUserContains("SCENARIO-POL-BUDGET"), Reply: []fakeapi.Block{bash("toolu_pol_b1", "touch a.txt")}},
					{Name: "b", When: fakeapi.AfterToolResult("toolu_pol_b1"), Reply: []fakeapi.Block{bash("toolu_pol_b2", "touch b.txt")}},
					{Name: "c denied", When: fakeapi.AfterToolResult("toolu_pol_b2"), Reply: []fakeapi.Block{bash("toolu_pol_b3", "touch c.txt")}},
					{Name: "reset", When: fakeapi.AfterToolResult("toolu_pol_b3"), Reply: []fakeapi.Block{bash("toolu_pol_b4", miam+" policies reset-session")}},
					{Name: "c again", When: fakeapi.AfterToolResult("toolu_pol_b4"), Reply: []fakeapi.Block{bash("toolu_pol_b5", "touch c.txt")}},
					done("toolu_pol_b5"),
				}
			},
			check: func(t *testing.T, w *world) {
				for _, id := range []string{"toolu_pol_b1", "toolu_pol_b2"} {
					if res := toolResult(t, w, id); res.IsError {
						t.Errorf("%s was refused: %s", id, res.ResultText())
					}
				}
				refused(t, w, "toolu_pol_b3", "miam policy bash-budget", "max_tool_calls budget is spent (2 of 2)", "miam policies reset-session")
				res := toolResult(t, w, "toolu_pol_b4")
				t.Logf("miam policies reset-session printed: %s", res.ResultText())
				if res.IsError || !strings.Contains(res.ResultText(), "reset the policy counters") {
					t.Errorf("reset-session did not run: %s", res.ResultText())
				}
				if res := toolResult(t, w, "toolu_pol_b5"); res.IsError {
					t.Errorf("the call after the reset was refused: %s", res.ResultText())
				}
				wantFile(t, w, "c.txt", true)
			},
		})
	})
}

// installMiam runs miam install in the sandbox's project.
func installMiam(t *testing.T, s sandbox, bindir string) {
	t.Helper()
	install := exec.Command(filepath.Join(bindir, "miam"), "install", "--dir", s.proj)
	install.Env = claudeEnv(s, "")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("miam install --dir %s: %v\n%s", s.proj, err, out)
	}
}

// readGrantLog returns the Bash commands the permission prompt tool was
// asked about, in order.
func readGrantLog(t *testing.T, logfile string) []string {
	t.Helper()
	data, err := os.ReadFile(logfile)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var p struct {
			ToolName  string `json:"tool_name"`
			ToolInput struct {
				Command string `json:"command"`
			} `json:"tool_input"`
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("%s: %v\n%s", logfile, err, data)
		}
		cmds = append(cmds, p.ToolInput.Command)
	}
	return cmds
}
