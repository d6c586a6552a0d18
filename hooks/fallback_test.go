package hooks

import (
	"encoding/json"
	"strings"
	"testing"

	"miam/budgets"
	"miam/delegate/wire"
)

// TestFallback: a deleguer call that fails for want of an executor opens
// the delegation rules for the turn (their denies become notices, the calls
// are still charged); a refusal of the request or an interruption does not;
// an answering delegation or the next turn closes them again.
func TestFallback(t *testing.T) {
	deleguer := func(name EventName) Event {
		return toolEvent(name, "mcp__miam__deleguer", "td", map[string]any{"consigne": "c", "sortie": "src/x.py"})
	}
	failure := func(msg string, interrupted bool) Event {
		ev := deleguer(PostToolUseFailure)
		ev.Error, ev.Interrupted = msg, interrupted
		return ev
	}
	answered := deleguer(PostToolUse)
	answered.Response, _ = json.Marshal(`{"ok":true,"demande_id":"d1","fin":"valide"}`)
	// 40 code lines: over the write budget of 30.
	big := toolEvent(PreToolUse, "Write", "tw", map[string]any{"file_path": "/p/src/new.py", "content": pythonLines(80)})
	prompt := Event{Name: UserPromptSubmit, SessionID: "s", Prompt: "next"}
	unreachableErr := "miam: " + wire.UnreachableText + ": the daemon exited at start"

	tests := []struct {
		name     string
		before   []Event
		want     Decision
		opened   int  // write_budget's Opened count after the Write
		fallback bool // the fallback is open after the Write
	}{
		{name: "daemon unreachable: the Write passes", before: []Event{failure(unreachableErr, false)}, want: Allow, opened: 1, fallback: true},
		{name: "MCP server gone (host error)", before: []Event{failure(`MCP server "miam" connection closed`, false)}, want: Allow, opened: 1, fallback: true},
		{name: "bad request: still denied", before: []Event{failure("miam: consigne: required", false)}, want: Deny},
		{name: "host timeout: still denied", before: []Event{failure("MCP error -32001: Request timed out", false)}, want: Deny},
		{name: "permission refused: still denied", before: []Event{failure("Permission to use mcp__miam__deleguer has been denied.", false)}, want: Deny},
		{name: "interrupted: still denied", before: []Event{failure("Interrupted by user", true)}, want: Deny},
		{name: "an answer closes it", before: []Event{failure(unreachableErr, false), answered}, want: Deny},
		{name: "the next turn closes it", before: []Event{failure(unreachableErr, false), prompt}, want: Deny},
		{name: "no failure: denied", want: Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := Env{Project: "/p", Files: rulesProject()}
			st := budgets.Fresh("s")
			st.Turn, st.TurnOpen = 1, true
			for _, ev := range tt.before {
				_, st = Decide(ev, st, env)
			}
			v, next := Decide(big, st, env)
			got := v.Decision
			if got == None {
				got = Allow
			}
			if got != tt.want {
				t.Fatalf("decision %q, want %q (%s)", v.Decision, tt.want, v.Reason)
			}
			if n := next.ThisTurn.Opened[RuleWriteBudget]; n != tt.opened {
				t.Errorf("opened[write_budget] = %d, want %d", n, tt.opened)
			}
			if next.Fallback() != tt.fallback {
				t.Errorf("fallback open = %v, want %v", next.Fallback(), tt.fallback)
			}
			if tt.opened > 0 {
				if !strings.Contains(v.Notice, "no executor answers") || !strings.Contains(v.Context, RuleWriteBudget) {
					t.Errorf("no notice for the opened rule: notice %q, context %q", v.Notice, v.Context)
				}
				if next.ThisTurn.Written.Code != 40 {
					t.Errorf("the Write was not charged: %+v", next.ThisTurn.Written)
				}
			}
		})
	}
}
