package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGoldenHostDialects runs the hook binary's run() on captured payloads
// of each host, selected by --host and the event argument, and checks the
// exact bytes each host is answered with.
func TestGoldenHostDialects(t *testing.T) {
	const reason = "miam tool policy (destructive): recognised rm -r (recursive deletion) in `rm -rf build`. " +
		"Destructive commands are refused on profile default. Use a narrower command (delete the files you made by name, " +
		"push without force), or ask the user to run it themselves."
	tests := []struct {
		name    string
		args    []string
		fixture string
		want    string
	}{
		{"copilot camelCase deny is flat", []string{"--host", "copilot", "preToolUse"},
			"copilot/1.0.102/a_allow_baseline/003-preToolUse-bash.json",
			`{"permissionDecision":"deny","permissionDecisionReason":"` + reason + `"}`},
		{"copilot PascalCase is answered as Claude", []string{"--host", "copilot", "PreToolUse"},
			"copilot/1.0.102/f_pascal_claude_output/001-PreToolUse-Bash.json",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"` + reason + `"}}`},
		{"copilot without its event is no opinion", []string{"--host", "copilot"},
			"copilot/1.0.102/a_allow_baseline/003-preToolUse-bash.json", ""},
		{"copilot agentStop, nothing to block", []string{"--host", "copilot", "agentStop"},
			"copilot/1.0.102/a_allow_baseline/006-agentStop.json", ""},
		{"opencode deny", []string{"--host", "opencode"},
			"opencode/1.18.33/s2_deny_throw/002-tool.execute.before-bash.json",
			`{"decision":"deny","reason":"` + reason + `"}`},
		{"opencode subagent deny", []string{"--host", "opencode"},
			"opencode/1.18.33/s8_subagent/004-tool.execute.before-bash.json",
			`{"decision":"deny","reason":"` + reason + `"}`},
		{"opencode echo untouched", []string{"--host", "opencode"},
			"opencode/1.18.33/s1_hooks_allow/002-tool.execute.before-bash.json", ""},
		{"opencode chat message", []string{"--host", "opencode"},
			"opencode/1.18.33/s1_hooks_allow/001-chat.message.json", ""},
		{"unknown host answers nothing", []string{"--host", "cursor"},
			"opencode/1.18.33/s2_deny_throw/002-tool.execute.before-bash.json", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			proj := t.TempDir()
			data, err := os.ReadFile(filepath.Join("../../fixtures/hosts", tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			data = bytes.ReplaceAll(data, []byte("<PROJ>"), []byte(proj))
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, bytes.NewReader(data), &stdout, &stderr,
				Env{ProjectDir: proj, ConfigHome: filepath.Join(proj, "no-user-config"), StateHome: t.TempDir(), Now: goldenNow})
			if code != 0 {
				t.Errorf("exit code %d: miam-hook must always exit 0", code)
			}
			want := tc.want
			if want != "" {
				want += "\n"
			}
			if d := cmp.Diff(want, stdout.String()); d != "" {
				t.Errorf("stdout (-want +got):\n%s\nstderr: %s", d, stderr.String())
			}
		})
	}
}

// TestClaudeEntryStandsAsideUnderCopilot: the Copilot CLI also runs the
// hooks of .claude/settings.json; when miam's own Copilot hooks are
// installed, that Claude Code entry keeps no opinion (the Copilot entry
// decides), so a call is charged and judged once. Without them it decides.
func TestClaudeEntryStandsAsideUnderCopilot(t *testing.T) {
	decide := func(proj string, underCopilot bool, args ...string) string {
		var stdout, stderr bytes.Buffer
		env := Env{ProjectDir: proj, UnderCopilot: underCopilot}
		run(context.Background(), args, bytes.NewReader(bashPayload("s1", "rm -rf build")), &stdout, &stderr, env)
		return stdout.String()
	}
	proj := t.TempDir()
	if out := decide(proj, true); !strings.Contains(out, "deny") {
		t.Errorf("under Copilot without its install, the Claude entry must decide: %q", out)
	}
	writeFile(t, filepath.Join(proj, ".github", "hooks", "miam.json"), []byte(`{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"/x/miam-hook --host copilot preToolUse"}]}}`))
	if out := decide(proj, true); out != "" {
		t.Errorf("under Copilot with its install, the Claude entry answered %q, want no opinion", out)
	}
	if out := decide(proj, false); !strings.Contains(out, "deny") {
		t.Errorf("under Claude Code the Claude entry must decide: %q", out)
	}
}
