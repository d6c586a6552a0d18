package hooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeClaude(t *testing.T) {
	tests := []struct {
		name string
		ev   EventName
		v    Verdict
		want string
	}{
		{"no opinion is empty", PreToolUse, Verdict{}, ""},
		{"pre deny", PreToolUse, Verdict{Decision: Deny, Rule: "tests", Reason: "R"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R"}}`},
		{"pre ask", PreToolUse, Verdict{Decision: Ask, Reason: "R"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"R"}}`},
		{"pre allow with context", PreToolUse, Verdict{Decision: Allow, Context: "C"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","additionalContext":"C"}}`},
		{"pre context only", PreToolUse, Verdict{Context: "C"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"C"}}`},
		{"stop block", Stop, Verdict{Decision: Deny, Reason: "finish"}, `{"decision":"block","reason":"finish"}`},
		{"subagent stop block", SubagentStop, Verdict{Decision: Deny, Reason: "more"}, `{"decision":"block","reason":"more"}`},
		{"stop block needs a reason", Stop, Verdict{Decision: Deny}, `{"decision":"block","reason":"miam: blocked"}`},
		{"stop without block", Stop, Verdict{Context: "ignored"}, ""},
		{"session start context", SessionStart, Verdict{Context: "C"}, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"C"}}`},
		{"prompt context", UserPromptSubmit, Verdict{Context: "C"}, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"C"}}`},
		{"post context", PostToolUse, Verdict{Context: "C"}, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"C"}}`},
		{"notice anywhere", MessageDisplay, Verdict{Notice: "N"}, `{"systemMessage":"N"}`},
		{"unknown event, deny dropped", "Brand", Verdict{Decision: Deny, Reason: "R"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, code := EncodeClaude(tc.ev, tc.v)
			if code != 0 {
				t.Errorf("exit code %d: every answer travels with exit 0", code)
			}
			want := tc.want
			if want != "" {
				want += "\n"
			}
			if d := cmp.Diff(want, string(out)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestCombine(t *testing.T) {
	got := Combine(
		Verdict{Decision: Allow, Rule: "a", Context: "c1"},
		Verdict{Decision: Deny, Rule: "d", Reason: "r"},
		Verdict{Decision: Ask, Rule: "k", Notice: "n"},
		Verdict{Context: "c2"},
	)
	want := Verdict{Decision: Deny, Rule: "d", Reason: "r", Context: "c1\n\nc2", Notice: "n"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Combine (-want +got):\n%s", d)
	}
	if !Combine().IsZero() {
		t.Error("Combine of nothing is not no-opinion")
	}
}
