package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/fixtures/fakeopenai"
	"miam/hooks/trace"
)

// copilotVersion is the GitHub Copilot CLI release hosts-cli/FINDINGS.md
// observed offline (BYOK mode against a fake Chat Completions API).
const copilotVersion = "1.0.102"

// TestE2ECopilotGuard is the tool policy through the real GitHub Copilot
// CLI: `miam install --host copilot` writes .github/hooks/miam.json, a
// scripted model's `rm -rf build` is refused before bash runs it, and the
// model reads "Denied by preToolUse hook: " and then exactly the words
// miam-hook gives Claude Code for the same command.
//
// The CLI is not installed by .ci/test.sh: the test runs when
// MIAM_COPILOT_BIN names one (npm install @github/copilot@1.0.102) and skips
// otherwise, in CI too.
func TestE2ECopilotGuard(t *testing.T) {
	copilot := os.Getenv("MIAM_COPILOT_BIN")
	if copilot == "" {
		t.Skipf("MIAM_COPILOT_BIN is unset: npm install @github/copilot@%s and point it at node_modules/.bin/copilot", copilotVersion)
	}
	root := repoRoot(t)
	bindir := buildBinaries(t, root)
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.proj, "build", "keep.o"), []byte("object\n"))

	const callID = "call_cp_rm"
	srv := fakeopenai.NewScript(func(r fakeopenai.Request) fakeopenai.Reply {
		for _, m := range r.Messages {
			if m.Role == "tool" && m.ToolCallID == callID {
				return fakeopenai.Answer("FINAL: the cleanup was refused.")
			}
		}
		if r.Tools == 0 {
			return fakeopenai.Answer("Nothing to do.")
		}
		return fakeopenai.Reply{Text: "Cleaning.", ToolCalls: []fakeopenai.ToolCall{
			{ID: callID, Name: "bash", Arguments: `{"command":"rm -rf build","description":"Clean the build"}`}}}
	})
	defer srv.Close()

	// Both installs: Copilot runs .claude/settings.json's hooks besides its
	// own, and each event must still be judged and traced once.
	install := exec.Command(filepath.Join(bindir, "miam"), "install", "--dir", s.proj, "--host", "claude,copilot")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("miam install --host claude,copilot: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, copilot, "-p", "SCENARIO-CP: clean the build", "--allow-all-tools", "--trust-folder",
		"--disable-client-telemetry", "--output-format", "json")
	cmd.Dir = s.proj
	cmd.Env = hostEnv(s,
		"COPILOT_HOME="+filepath.Join(s.home, ".copilot"),
		"COPILOT_OFFLINE=true",
		"COPILOT_AUTO_UPDATE=false",
		"COPILOT_PROVIDER_BASE_URL="+srv.URL()+"/v1",
		"COPILOT_PROVIDER_API_KEY=dummy-key",
		"COPILOT_MODEL=gpt-5.4",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("copilot -p: %v (ctx: %v)\nstdout tail:\n%s\nstderr tail:\n%s", err, ctx.Err(),
			tail(stdout.String(), 4000), tail(stderr.String(), 4000))
	}
	t.Logf("copilot -p took %s", time.Since(start).Round(time.Millisecond))

	if _, err := os.Stat(filepath.Join(s.proj, "build", "keep.o")); err != nil {
		t.Errorf("build/ was deleted although rm -rf was denied: %v", err)
	}
	// One decision per event: the ledger has the Copilot entry's lines only
	// (read before claudeReason below adds its own). Without the Claude
	// entry standing aside, the Stop is traced twice.
	ledger, _ := os.ReadFile(filepath.Join(s.proj, ".miam", trace.FileName))
	var seen []string
	for _, line := range strings.SplitAfter(strings.TrimSpace(string(ledger)), "\n") {
		if r, err := trace.Decode([]byte(line)); err == nil {
			seen = append(seen, r.Host+" "+r.Event)
		}
	}
	if d := cmp.Diff([]string{"copilot PreToolUse", "copilot Stop"}, seen); d != "" {
		t.Errorf("events judged (-want +got):\n%s\n%s", d, ledger)
	}
	var got string
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" && m.ToolCallID == callID {
				got = m.Content
			}
		}
	}
	t.Logf("the model was told:\n%s", got)
	if want := "Denied by preToolUse hook: " + claudeReason(t, bindir, s.proj, "rm -rf build"); got != want {
		t.Errorf("Copilot's model read other words than Claude Code's would:\n got: %s\nwant: %s\nstdout tail:\n%s",
			got, want, tail(stdout.String(), 3000))
	}
}
