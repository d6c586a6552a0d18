package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"miam/budgets"
)

// TestPolicies: status shows the counters and warns under 10 % left;
// reset-session clears the session's policy counters and nothing else.
func TestPolicies(t *testing.T) {
	proj := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proj, ".miam"), 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := "rules:\n  - id: calls\n    verdict_on_match: block\n    tool_pattern: Bash\n    per_session: {max_tool_calls: 20, max_writes: 10}\n"
	if err := os.WriteFile(filepath.Join(proj, ".miam", "policies.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	store := budgets.Store{Dir: filepath.Join(proj, ".miam", "state")}
	err := store.Update("sess-1", func(st *budgets.State) error {
		st.Turn = 3
		st.Policies = &budgets.PolicyState{StartedAt: time.Now().Add(-time.Hour),
			Rules: map[string]budgets.RuleCounters{"calls": {ToolCalls: 19, Writes: 4}}}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	miam := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"policies"}, args...), strings.NewReader(""), &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}

	out, errOut, code := miam("status", "--dir", proj)
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, errOut)
	}
	t.Logf("status:\n%s", out)
	for _, w := range []string{"session sess-1", "max_tool_calls", "19", "WARNING: rule calls: max_tool_calls has 1 of 20 left", "reset-session"} {
		if !strings.Contains(out, w) {
			t.Errorf("status lacks %q", w)
		}
	}
	if strings.Contains(out, "max_writes has") {
		t.Errorf("max_writes has half left, no warning expected:\n%s", out)
	}

	out, _, code = miam("status", "--dir", proj, "--session-id", "sess-1", "--json")
	var rep statusReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("status --json: exit %d: %s", code, out)
	}
	if len(rep.Budgets) != 2 || rep.Budgets[0].Left != 1 || !rep.Budgets[0].Low || len(rep.Warnings) != 1 {
		t.Errorf("json report: %+v", rep)
	}

	out, errOut, code = miam("reset-session", "--dir", proj)
	if code != 0 || !strings.Contains(out, "sess-1") || !strings.Contains(out, filepath.Join(".miam", "state", "session-sess-1.json")) {
		t.Fatalf("reset-session: exit %d: %s %s", code, out, errOut)
	}
	st := store.Load("sess-1")
	if st.Policies != nil || st.Turn != 3 {
		t.Errorf("after reset: policies %+v, turn %d (the delegation counters must stay)", st.Policies, st.Turn)
	}
	if _, errOut, code = miam("frobnicate", "--dir", proj); code == 0 || !strings.Contains(errOut, "status or reset-session") {
		t.Errorf("unknown subcommand: exit %d, %s", code, errOut)
	}
}

func TestPoliciesBrokenFile(t *testing.T) {
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, ".miam"), 0o755)
	os.WriteFile(filepath.Join(proj, ".miam", "policies.yaml"), []byte("rules:\n  - id: a\n    verdict_on_match: block\n    per_sesion: {}\n"), 0o644)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"policies", "status", "--dir", proj, "--session-id", "x"}, strings.NewReader(""), &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), `line 4: unknown key "per_sesion"`) {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
