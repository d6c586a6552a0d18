package hooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeClaude(t *testing.T) {
	tests := []encodeCase{
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
	runEncodeCases(t, EncodeClaude, tests)
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

// encodeCase is one verdict an encoder turns into a host's answer; want is
// stdout without its final newline, "" for no output at all.
type encodeCase struct {
	name string
	ev   EventName
	v    Verdict
	want string
}

// runEncodeCases checks an encoder on cases: the expected bytes, and exit 0
// always (every host reads a non-zero exit as a failure or a deny).
func runEncodeCases(t *testing.T, encode func(EventName, Verdict) ([]byte, int), cases []encodeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, code := encode(tc.ev, tc.v)
			if code != 0 {
				t.Errorf("exit code %d, want 0", code)
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
