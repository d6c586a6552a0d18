package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"miam/fixtures/fakeapi"
	"miam/hooks/trace"
)

// TestE2EGovernance is the tool policy through the real Claude Code CLI: a
// scripted model's `rm -rf build` is denied before bash runs it (build/ is
// still there afterwards), and `cat .env` and a Read of .env are denied with
// the reason — the secret's value never reaches the API.
func TestE2EGovernance(t *testing.T) {
	const secret = "sk-live-GOVSECRET-7f3a9c"
	root := repoRoot(t)
	claude := claudeBin(t, root)
	bindir := buildBinaries(t, root)
	runScenario(t, root, claude, bindir, scenario{
		name:   "governance_rm_rf_and_env_denied",
		prompt: "SCENARIO-GOV: clean the build and show me the API key",
		steps: func(proj string) []fakeapi.Step {
			writeFile(t, filepath.Join(proj, "build", "keep.o"), []byte("object\n"))
			writeFile(t, filepath.Join(proj, ".env"), []byte("API_KEY="+secret+"\n"))
			return []fakeapi.Step{
				{Name: "rm -rf", When: fakeapi.FirstUserContains("SCENARIO-GOV"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_gov_rm", "Bash", map[string]any{"command": "rm -rf build", "description": "Clean the build"}),
				}},
				{Name: "cat .env", When: fakeapi.AfterToolResult("toolu_gov_rm"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_gov_cat", "Bash", map[string]any{"command": "cat .env", "description": "Show the env"}),
				}},
				{Name: "Read .env", When: fakeapi.AfterToolResult("toolu_gov_cat"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_gov_read", "Read", map[string]any{"file_path": filepath.Join(proj, ".env")}),
				}},
				done("toolu_gov_read"),
			}
		},
		check: func(t *testing.T, w *world) {
			wantPolicyDeny(t, w, "toolu_gov_rm", "miam tool policy (destructive)", "rm -r (recursive deletion)", "`rm -rf build`")
			if _, err := os.Stat(w.path("build/keep.o")); err != nil {
				t.Errorf("build/ was deleted although rm -rf was denied: %v", err)
			}
			wantPolicyDeny(t, w, "toolu_gov_cat", "miam tool policy (secrets)", "reads .env, a dotenv file")
			wantPolicyDeny(t, w, "toolu_gov_read", "miam tool policy (secrets)", "a dotenv file")
			for i, r := range w.api.Requests() {
				if bytes.Contains(r.Raw, []byte(secret)) {
					t.Errorf("request %d to the API carries the secret from .env", i)
				}
			}
			wantLedger(t, w, bindir, secret)
		},
	})
}

// wantLedger checks the trace ledger the real session left: the three
// denies by the tool policy and the closing Stop, no argument in clear, and
// `miam stats` reading it.
func wantLedger(t *testing.T, w *world, bindir, secret string) {
	t.Helper()
	data, err := os.ReadFile(w.path(filepath.Join(".miam", trace.FileName)))
	if err != nil {
		t.Fatalf("no trace ledger: %v", err)
	}
	t.Logf("ledger:\n%s", data)
	tally, err := trace.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if tally.Denied != 3 || tally.Corrupt != 0 || tally.Stops < 1 || len(tally.Rules) == 0 ||
		tally.Rules[0] != (trace.RuleCount{Rule: "tool_policy", Denies: 3}) {
		t.Errorf("ledger tally %+v: want 3 tool_policy denies, a stop, no corrupt line", tally)
	}
	for _, leak := range []string{secret, ".env", "rm -rf", "build"} {
		if bytes.Contains(data, []byte(leak)) {
			t.Errorf("the ledger holds %q", leak)
		}
	}
	cmd := exec.Command(filepath.Join(bindir, "miam"), "stats", "--dir", w.proj)
	cmd.Env = []string{"HOME=" + t.TempDir(), "XDG_STATE_HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("denied           3")) || !bytes.Contains(out, []byte("tool_policy")) {
		t.Errorf("miam stats: %v\n%s", err, out)
	}
}

// wantPolicyDeny asserts that a tool call was refused through PreToolUse
// JSON with a reason holding every one of want.
func wantPolicyDeny(t *testing.T, w *world, id string, want ...string) {
	t.Helper()
	res := toolResult(t, w, id)
	text := res.ResultText()
	t.Logf("the model was told, for %s:\n%s", id, text)
	if !res.IsError {
		t.Errorf("%s was not refused; the model got: %s", id, text)
	}
	for _, s := range want {
		if !strings.Contains(text, s) {
			t.Errorf("deny text for %s lacks %q:\n%s", id, s, text)
		}
	}
	if strings.Contains(text, w.hookBin) {
		t.Errorf("deny for %s came through exit 2, not JSON:\n%s", id, text)
	}
}
