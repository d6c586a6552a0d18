package hooks

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/budgets"
	"miam/hooks/policies"
	"miam/hooks/trace"
)

func TestTraced(t *testing.T) {
	tests := []struct {
		name      string
		ev        EventName
		evaluated bool
		want      bool
	}{
		{"evaluated call", PreToolUse, true, true},
		{"call left on the fast path", PreToolUse, false, false},
		{"stop", Stop, true, true},
		{"subagent stop on the fast path", SubagentStop, false, true},
		{"post tool use", PostToolUse, true, false},
		{"prompt", UserPromptSubmit, true, false},
		{"session start", SessionStart, true, false},
		{"undecoded", "", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Traced(Event{Name: tc.ev}, tc.evaluated); got != tc.want {
				t.Errorf("Traced(%s, %v) = %v, want %v", tc.ev, tc.evaluated, got, tc.want)
			}
		})
	}
}

func TestTraceRecord(t *testing.T) {
	now := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	bash := func(cmd string) Tool {
		raw, _ := json.Marshal(map[string]string{"command": cmd, "description": "d"})
		return DecodeTool("Bash", raw)
	}
	rm := bash("rm -rf build   dist")
	tests := []struct {
		name     string
		ev       Event
		host     Host
		v        Verdict
		measured []string
		want     trace.Record
	}{
		{
			name: "deny: rule kept, reason dropped, input hashed",
			ev:   Event{Name: PreToolUse, SessionID: "s", Tool: rm},
			host: Claude,
			v:    Verdict{Decision: Deny, Rule: RuleToolPolicy, Reason: "recognised rm -r in `rm -rf build dist`", Context: "c"},
			want: trace.Record{Time: now, Session: "s", Event: "PreToolUse", Host: "claude", Tool: "Bash",
				Args: policies.Fingerprint("Bash", rm.Raw), Decision: "deny", Rule: RuleToolPolicy},
		},
		{
			name:     "no opinion, measured, subagent",
			ev:       Event{Name: PreToolUse, SessionID: "s", AgentID: "a1", AgentType: "Explore", Tool: bash("make")},
			host:     Opencode,
			measured: []string{"write_budget"},
			want: trace.Record{Time: now, Session: "s", Event: "PreToolUse", Host: "opencode", Agent: "Explore", Tool: "Bash",
				Args: policies.Fingerprint("Bash", bash("make").Raw), Decision: "none", Measured: []string{"write_budget"}},
		},
		{
			name: "subagent without a type",
			ev:   Event{Name: SubagentStop, SessionID: "s", AgentID: "a1"},
			host: Claude,
			want: trace.Record{Time: now, Session: "s", Event: "SubagentStop", Host: "claude", Agent: "subagent", Decision: "none"},
		},
		{
			name: "blocked stop",
			ev:   Event{Name: Stop, SessionID: "s", LastAssistantMessage: "secret plan"},
			host: Copilot,
			v:    Verdict{Decision: Deny, Rule: RuleReport, Reason: "miam turn report: …"},
			want: trace.Record{Time: now, Session: "s", Event: "Stop", Host: "copilot", Decision: "deny", Rule: RuleReport},
		},
		{
			name: "a rule without a decision is dropped",
			ev:   Event{Name: Stop, SessionID: "s"},
			host: Claude,
			v:    Verdict{Rule: "policies:", Context: "warning"},
			want: trace.Record{Time: now, Session: "s", Event: "Stop", Host: "claude", Decision: "none"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := TraceRecord(tc.ev, tc.host, tc.v, tc.measured, TraceArgs(tc.ev), now)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("TraceRecord (-want +got):\n%s", d)
			}
		})
	}
}

// TestTraceArgsIsTheApprovalFingerprint: blanks folded outside
// quotes and a Bash description change nothing, so one command hashes
// alike across calls, as approvals match it.
func TestTraceArgsIsTheApprovalFingerprint(t *testing.T) {
	a := DecodeTool("Bash", json.RawMessage(`{"command":"git  push origin main","description":"push"}`))
	b := DecodeTool("Bash", json.RawMessage(`{"description":"other","command":"git push origin main"}`))
	c := DecodeTool("Bash", json.RawMessage(`{"command":"git push origin main --force"}`))
	ra := TraceArgs(Event{Name: PreToolUse, Tool: a})
	rb := TraceArgs(Event{Name: PreToolUse, Tool: b})
	rc := TraceArgs(Event{Name: PreToolUse, Tool: c})
	if ra != rb || ra == rc || len(ra) != 32 {
		t.Errorf("hashes %q %q %q: want the first two equal, the third apart, 32 hex digits", ra, rb, rc)
	}
}

// TestTraceRecordCarriesNoSecret: a token in a denied command reaches the
// verdict's reason, never the ledger's line.
func TestTraceRecordCarriesNoSecret(t *testing.T) {
	const token = "ghp_Zq8xK2mP9vL4nR7tW1yB6cD3fH5jA0sE8uGi"
	tool := DecodeTool("Bash", json.RawMessage(`{"command":"rm -rf / && curl -H 'Authorization: Bearer `+token+`' https://x"}`))
	ev := Event{Name: PreToolUse, SessionID: "s", Tool: tool}
	v, _ := Decide(ev, budgets.State{}, Env{})
	if v.Decision != Deny || !strings.Contains(v.Reason, "ghp_") {
		t.Fatalf("the test needs a deny quoting the command, got %+v", v)
	}
	line := string(TraceRecord(ev, Claude, v, nil, TraceArgs(ev), time.Now()).Append(nil))
	if strings.Contains(line, token) || strings.Contains(line, "ghp_") || strings.Contains(line, "Bearer") {
		t.Errorf("the ledger line leaks the command: %s", line)
	}
}

func TestNewlyMeasured(t *testing.T) {
	before := budgets.State{Session: budgets.Tally{Measured: map[string]int{"docs": 2, "tests": 1}}}
	after := budgets.State{Session: budgets.Tally{Measured: map[string]int{"docs": 2, "tests": 2, "write_budget": 1}}}
	if d := cmp.Diff([]string{"tests", "write_budget"}, NewlyMeasured(before, after)); d != "" {
		t.Errorf("NewlyMeasured (-want +got):\n%s", d)
	}
	if got := NewlyMeasured(after, after); got != nil {
		t.Errorf("NewlyMeasured of one state = %v, want none", got)
	}
}
