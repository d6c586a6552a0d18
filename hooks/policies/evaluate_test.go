package policies

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/budgets"
)

var t0 = time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)

func mustDecode(t *testing.T, y string) *Set {
	t.Helper()
	set, err := Decode(".miam/policies.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return &set
}

func bashCall(id, cmd string, mutating bool) Call {
	return Call{Tool: "Bash", Command: cmd, Commands: []string{cmd}, Mutating: mutating, ReadOnly: !mutating,
		Fingerprint: "fp:" + NormalizeCommand(cmd), ToolUseID: id}
}

// step is one call of a session and the verdict expected for it.
type step struct {
	call Call
	at   time.Duration // after t0
	want Verdict
	// post runs PostToolUse after the Pre, with this call (zero: the same).
	post     bool
	postCall *Call
}

func play(t *testing.T, set *Set, steps []step) *budgets.PolicyState {
	t.Helper()
	var st *budgets.PolicyState
	for i, s := range steps {
		before := fmt.Sprintf("%+v", st)
		out, next := Pre(set, s.call, st, Inputs{Now: t0.Add(s.at)})
		if fmt.Sprintf("%+v", st) != before {
			t.Fatalf("step %d: Pre modified its input state", i)
		}
		if out.Verdict != s.want {
			t.Errorf("step %d (%s %s): verdict %q, want %q (reason %q)", i, s.call.Tool, s.call.Command, out.Verdict, s.want, out.Reason)
		}
		st = next
		if s.post {
			c := s.call
			if s.postCall != nil {
				c = *s.postCall
			}
			st = Post(set, c, st)
		}
	}
	return st
}

func TestRequireApproval(t *testing.T) {
	set := mustDecode(t, "rules:\n  - id: push\n    tool_pattern: \"Bash(git push:*)\"\n    require_approval: true\n")
	push := bashCall("t1", "git push origin main", true)
	again := bashCall("t2", "git  push origin   main", true) // same call, blanks aside
	other := bashCall("t3", "git push origin dev", true)
	st := play(t, set, []step{
		{call: bashCall("t0", "ls", false), want: ""},
		{call: push, want: Ask, post: true},
		{call: again, want: Allow, post: true},
		{call: other, want: Ask},
	})
	if got := st.Rules["push"].Approved; len(got) != 1 || got[0] != push.Fingerprint {
		t.Errorf("approved = %v, want the one pushed call", got)
	}
	if _, ok := st.Pending["t3"]; !ok {
		t.Errorf("the asked call is not pending: %+v", st.Pending)
	}
}

// An ask is no approval: a call asked then never run (no PostToolUse, or a
// failure) asks again.
func TestAskIsNoApproval(t *testing.T) {
	set := mustDecode(t, "rules:\n  - id: push\n    tool_pattern: \"Bash(git push:*)\"\n    require_approval: true\n")
	push := bashCall("t1", "git push", true)
	_, st := Pre(set, push, nil, Inputs{Now: t0})
	st = Failed(push, st)
	if len(st.Pending) != 0 {
		t.Errorf("pending after failure: %v", st.Pending)
	}
	push.ToolUseID = "t2"
	if out, _ := Pre(set, push, st, Inputs{Now: t0}); out.Verdict != Ask {
		t.Errorf("replayed call: %q, want ask", out.Verdict)
	}
}

// A hook may rewrite the input between PreToolUse and PostToolUse (RTK
// turns `git status` into `rtk git status`): the approval goes to the
// fingerprint asked in PreToolUse, found by tool_use_id, so the identical
// call passes next time; without a tool_use_id, Post falls back to its own
// input, and the original call asks again, never the looser way.
func TestApprovalAcrossRewrittenInput(t *testing.T) {
	set := mustDecode(t, "rules:\n  - id: push\n    tool_pattern: \"Bash(git push:*)\"\n    require_approval: true\n")
	orig := bashCall("t1", "git push origin main", true)
	rewritten := bashCall("t1", "rtk git push origin main", true)
	st := play(t, set, []step{
		{call: orig, want: Ask, post: true, postCall: &rewritten},
		{call: bashCall("t2", "git push origin main", true), want: Allow},
	})
	if got := st.Rules["push"].Approved; len(got) != 1 || got[0] != orig.Fingerprint {
		t.Errorf("approved %v, want the fingerprint asked in PreToolUse", got)
	}
	noID := orig
	noID.ToolUseID = ""
	rewrittenNoID := rewritten
	rewrittenNoID.ToolUseID = ""
	play(t, set, []step{
		{call: noID, want: Ask, post: true, postCall: &rewrittenNoID},
		{call: noID, want: Ask},
	})
}

// TestNoApprovalWithoutAsk: a call that ran without PreToolUse having
// asked (the hook failed open, or the rule came later) approves nothing:
// the next identical call is still asked.
func TestNoApprovalWithoutAsk(t *testing.T) {
	set := mustDecode(t, "rules:\n  - id: push\n    tool_pattern: \"Bash(git push:*)\"\n    require_approval: true\n")
	c := bashCall("t1", "git push origin main", true)
	st := Post(set, c, nil)
	if st != nil && len(st.Rules["push"].Approved) != 0 {
		t.Fatalf("approved %v without an ask", st.Rules["push"].Approved)
	}
	if out, _ := Pre(set, bashCall("t2", "git push origin main", true), st, Inputs{Now: t0}); out.Verdict != Ask {
		t.Errorf("verdict %q after an unasked run, want ask", out.Verdict)
	}
}

func TestApprovalsKeepAtMost64(t *testing.T) {
	set := mustDecode(t, "rules:\n  - id: any\n    tool_pattern: Bash\n    require_approval: true\n")
	var st *budgets.PolicyState
	for i := range 70 {
		c := bashCall(fmt.Sprint("t", i), fmt.Sprint("echo ", i), true)
		_, st = Pre(set, c, st, Inputs{Now: t0})
		st = Post(set, c, st)
	}
	got := st.Rules["any"].Approved
	if len(got) != MaxApprovals || got[0] != "fp:echo 6" || got[63] != "fp:echo 69" {
		t.Errorf("kept %d approvals, from %q to %q", len(got), got[0], got[len(got)-1])
	}
}

func TestPerSession(t *testing.T) {
	set := mustDecode(t, `rules:
  - id: calls
    verdict_on_match: block
    tool_pattern: Bash
    per_session: {max_tool_calls: 3}
  - id: writes
    verdict_on_match: block
    tool_pattern: Write
    per_session: {max_writes: 1}
`)
	write := func(id, p string) Call {
		return Call{Tool: "Write", Path: p, Mutating: true, ToolUseID: id, Fingerprint: id}
	}
	repair := write("r", ".miam/policies.yaml")
	repair.Repair = true
	st := play(t, set, []step{
		{call: bashCall("1", "ls", false), want: ""},
		{call: bashCall("2", "touch a", true), want: ""},
		{call: bashCall("3", "touch b", true), want: ""},
		{call: bashCall("4", "touch c", true), want: Block}, // the 4th call, not before
		{call: bashCall("5", "cat a", false), want: ""},     // read-only calls are never blocked
		{call: write("6", "a.go"), want: ""},
		{call: write("7", "b.go"), want: Block},
		{call: repair, want: ""},
		{call: repair, want: ""},
	})
	want := map[string]budgets.RuleCounters{"calls": {ToolCalls: 4, Writes: 2}, "writes": {ToolCalls: 1, Writes: 1}}
	if d := cmp.Diff(want, st.Rules); d != "" {
		t.Errorf("counters (-want +got):\n%s", d)
	}
	_, next := Pre(set, bashCall("8", "touch d", true), st, Inputs{Now: t0})
	if d := cmp.Diff(st.Rules, next.Rules); d != "" {
		t.Errorf("a blocked call was counted:\n%s", d)
	}
}

func TestBudgetReasonNamesTheRemedy(t *testing.T) {
	set := mustDecode(t, "rules:\n  - id: calls\n    verdict_on_match: block\n    reason_template: \"{id}: {budget} {used}/{limit} on {target}\"\n    per_session: {max_tool_calls: 1}\n")
	_, st := Pre(set, bashCall("1", "touch a", true), nil, Inputs{Now: t0})
	out, _ := Pre(set, bashCall("2", "touch b", true), st, Inputs{Now: t0})
	for _, w := range []string{"calls: max_tool_calls 1/1 on touch b", "miam policies reset-session", ".miam/policies.yaml"} {
		if !strings.Contains(out.Reason, w) {
			t.Errorf("reason %q lacks %q", out.Reason, w)
		}
	}
}

func TestDurationAndCost(t *testing.T) {
	set := mustDecode(t, "rules:\n  - id: long\n    verdict_on_match: block\n    per_session: {max_duration_min: 60}\n  - id: dear\n    verdict_on_match: ask\n    per_session: {max_cost_usd: 1.5}\n")
	st := Start(nil, t0)
	c := bashCall("1", "make", true)
	cost := 1.0
	in := Inputs{Now: t0.Add(59 * time.Minute), Cost: func(tc budgets.TranscriptCost) (float64, budgets.TranscriptCost) {
		tc.USD = cost
		return cost, tc
	}}
	if out, _ := Pre(set, c, st, in); out.Verdict != "" {
		t.Errorf("59 min, $1: %q %s", out.Verdict, out.Reason)
	}
	cost = 1.5
	out, next := Pre(set, c, st, in)
	if out.Verdict != Ask || out.Rule != "dear" || next.Cost.USD != 1.5 {
		t.Errorf("$1.5: %q %s (cost kept %v)", out.Verdict, out.Rule, next.Cost)
	}
	in.Now = t0.Add(60 * time.Minute)
	if out, _ := Pre(set, c, st, in); out.Verdict != Block || out.Rule != "long" {
		t.Errorf("60 min: %q %s", out.Verdict, out.Rule)
	}
	in.Cost = nil
	if out, _ := Pre(set, bashCall("2", "cat x", false), st, in); out.Verdict != "" {
		t.Errorf("read-only call after the window: %q", out.Verdict)
	}
}

func TestCooldown(t *testing.T) {
	set := mustDecode(t, "rules:\n  - id: rm\n    verdict_on_match: block\n    tool_pattern: \"Bash(rm:*)\"\n    cooldown_after: {count: 2, minutes: 10}\n")
	rm := func(id string) Call { return bashCall(id, "rm x", true) }
	play(t, set, []step{
		{call: rm("1"), want: ""},
		{call: bashCall("x", "ls", false), want: ""},
		{call: rm("2"), at: time.Minute, want: ""},
		{call: rm("3"), at: 5 * time.Minute, want: Block},
		{call: rm("4"), at: 11*time.Minute + time.Second, want: ""},
		{call: rm("5"), at: 12 * time.Minute, want: ""},
		{call: rm("6"), at: 13 * time.Minute, want: Block},
	})
}

func TestPlainRulesAndWarnings(t *testing.T) {
	set := mustDecode(t, `rules:
  - id: no-prod
    verdict_on_match: block
    tool_pattern: "Bash(kubectl --context prod:*)"
  - id: note-src
    verdict_on_match: warn
    reason_template: "{tool} writes {target}"
    tool_pattern: "Write(src/*)"
  - id: tests-ok
    verdict_on_match: allow
    tool_pattern: "Bash(go test:*)"
`)
	out, _ := Pre(set, bashCall("1", "kubectl --context prod get pods", false), nil, Inputs{Now: t0})
	if out.Verdict != Block || out.Rule != "no-prod" {
		t.Errorf("plain block: %+v", out)
	}
	out, _ = Pre(set, Call{Tool: "Write", Path: "src/a.go", Mutating: true}, nil, Inputs{Now: t0})
	if out.Verdict != "" || len(out.Warnings) != 1 || out.Warnings[0] != "Write writes src/a.go" {
		t.Errorf("warn: %+v", out)
	}
	out, _ = Pre(set, bashCall("2", "go test ./...", true), nil, Inputs{Now: t0})
	if out.Verdict != Allow {
		t.Errorf("allow: %+v", out)
	}
}

func TestStatus(t *testing.T) {
	set := mustDecode(t, `rules:
  - id: b
    verdict_on_match: block
    per_session: {max_tool_calls: 20, max_writes: 10, max_duration_min: 100, max_cost_usd: 2}
    cooldown_after: {count: 3, minutes: 5}
`)
	st := &budgets.PolicyState{StartedAt: t0, Rules: map[string]budgets.RuleCounters{"b": {ToolCalls: 19, Writes: 5, CooldownCount: 1}}}
	got := Status(set, st, t0.Add(95*time.Minute), 0.5)
	want := []Budget{
		{Rule: "b", Pattern: "*", What: "max_tool_calls", Limit: 20, Used: 19, Left: 1, Low: true},
		{Rule: "b", Pattern: "*", What: "max_writes", Limit: 10, Used: 5, Left: 5},
		{Rule: "b", Pattern: "*", What: "max_cost_usd", Limit: 2, Used: 0.5, Left: 1.5},
		{Rule: "b", Pattern: "*", What: "max_duration_min", Limit: 100, Used: 95, Left: 5, Low: true},
		{Rule: "b", Pattern: "*", What: "cooldown_after", Limit: 3, Used: 1, Left: 2},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}
}

func TestAddTranscript(t *testing.T) {
	line := func(id string, in, out int) string {
		return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"model":"claude-sonnet-4-5","usage":{"input_tokens":%d,"output_tokens":%d}}}`+"\n", id, in, out)
	}
	data := line("m1", 1_000_000, 0) + line("m1", 1_000_000, 0) + `{"type":"user","message":{"content":"hi"}}` + "\n" + line("m2", 0, 1_000_000)
	c := AddTranscript(budgets.TranscriptCost{}, []byte(data+`{"type":"assis`))
	if c.Total() != 18 || c.Offset != int64(len(data)) {
		t.Errorf("cost %v at offset %d, want 18 at %d", c.Total(), c.Offset, len(data))
	}
	// The same message continued on the next read is not counted twice.
	c = AddTranscript(c, []byte(line("m2", 0, 1_000_000)+line("m3", 1_000_000, 0)))
	if c.Total() != 21 {
		t.Errorf("cost %v, want 21", c.Total())
	}
}
