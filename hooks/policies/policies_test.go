package policies

import (
	"errors"
	"strings"
	"testing"
)

const example = `rules:
  - id: rm-requires-approval
    description: "rm asks once per session"
    verdict_on_match: warn
    reason_template: "Deleting needs an explicit approval ({target})"
    tool_pattern: "Bash(rm:*)"
    require_approval: true
    cooldown_after: {pattern: "Bash(rm:*)", count: 5, minutes: 10}
  - id: session-write-budget
    verdict_on_match: block
    tool_pattern: Write
    per_session: {max_writes: 50, max_tool_calls: 200, max_cost_usd: 2.0, max_duration_min: 60, subagents: shared}
  - id: approve-push
    tool_pattern: "Bash(git push:*)"
    require_approval: true
`

func TestDecodeExample(t *testing.T) {
	set, err := Decode(".miam/policies.yaml", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Rules) != 3 {
		t.Fatalf("%d rules, want 3", len(set.Rules))
	}
	r := set.Rules[0]
	if r.ID != "rm-requires-approval" || r.Verdict != Warn || !r.RequireApproval || r.Cooldown == nil ||
		r.Cooldown.Count != 5 || r.Cooldown.Minutes != 10 || r.Line != 2 {
		t.Errorf("rule 0 = %+v", r)
	}
	ps := set.Rules[1].PerSession
	if ps == nil || *ps != (PerSession{MaxToolCalls: 200, MaxWrites: 50, MaxCostUSD: 2, MaxDurationMin: 60}) {
		t.Errorf("per_session = %+v", ps)
	}
	if set.Rules[2].Verdict != Ask {
		t.Errorf("a require_approval-only rule defaults to ask, got %q", set.Rules[2].Verdict)
	}
	if !set.NeedsCost() {
		t.Error("NeedsCost = false with a max_cost_usd cap")
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // every one must appear in the error
	}{
		{"unknown rule key", "rules:\n  - id: a\n    verdict_on_match: block\n    tool_patern: Bash\n", []string{".miam/policies.yaml", "line 4", `unknown key "tool_patern"`}},
		{"unknown per_session key", "rules:\n  - id: a\n    verdict_on_match: block\n    per_session:\n      max_calls: 3\n", []string{"line 5", `"max_calls"`}},
		{"unknown cooldown key", "rules:\n  - id: a\n    verdict_on_match: block\n    cooldown_after: {count: 1, minutes: 1, every: 2}\n", []string{"line 4", `"every"`}},
		{"unknown top key", "rule:\n  - id: a\n", []string{"line 1", `"rule"`}},
		{"separate refused", "rules:\n  - id: a\n    verdict_on_match: block\n    per_session:\n      max_tool_calls: 3\n      subagents: separate\n", []string{"line 6", "per_session.subagents", "parent's session_id"}},
		{"bad verdict", "rules:\n  - id: a\n    verdict_on_match: maybe\n", []string{"line 3", "verdict_on_match", "maybe"}},
		{"missing verdict", "rules:\n  - id: a\n    per_session: {max_writes: 2}\n", []string{"line 2", "verdict_on_match", "missing"}},
		{"missing id", "rules:\n  - verdict_on_match: block\n", []string{"line 2", "no id"}},
		{"duplicate id", "rules:\n  - id: a\n    verdict_on_match: warn\n  - id: a\n    verdict_on_match: warn\n", []string{"line 4", "already used"}},
		{"bad pattern", "rules:\n  - id: a\n    verdict_on_match: block\n    tool_pattern: \"Bash(\"\n", []string{"line 4", "tool_pattern"}},
		{"zero count", "rules:\n  - id: a\n    verdict_on_match: block\n    cooldown_after: {count: 0, minutes: 3}\n", []string{"cooldown_after.count"}},
		{"negative cap", "rules:\n  - id: a\n    verdict_on_match: block\n    per_session: {max_writes: -1}\n", []string{"per_session.max_writes"}},
		{"empty per_session", "rules:\n  - id: a\n    verdict_on_match: block\n    per_session: {subagents: shared}\n", []string{"sets no cap"}},
		{"bad placeholder", "rules:\n  - id: a\n    verdict_on_match: block\n    reason_template: \"{nope}\"\n", []string{"line 4", "{nope}"}},
		{"not yaml", "rules: [\n", []string{".miam/policies.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(".miam/policies.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestDecodeEmpty(t *testing.T) {
	for _, s := range []string{"", "\n  \n", "rules: []\n"} {
		set, err := Decode("p", []byte(s))
		if err != nil || len(set.Rules) != 0 {
			t.Errorf("Decode(%q) = %+v, %v", s, set, err)
		}
	}
}

// FuzzDecode: the decoder never panics, and whatever it accepts evaluates
// without panicking; a file it refuses yields no rule at all.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(example))
	f.Add([]byte("rules:\n  - id: a\n    verdict_on_match: block\n    tool_pattern: \"Write(src/**)\"\n"))
	f.Add([]byte("rules: [{id: x, verdict_on_match: ask, tool_pattern: '*', per_session: {max_tool_calls: 1}}]"))
	f.Add([]byte("rules:\n  - id: a\n    reason_template: \"{id} {"))
	f.Add([]byte("x: &a {rules: *a}\nrules: [*a, {id: b, per_session: &p {max_writes: 1}}, {id: c, per_session: *p}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := Decode("fuzz.yaml", data)
		if err != nil {
			if len(set.Rules) != 0 {
				t.Fatalf("refused file yields rules: %v", err)
			}
			return
		}
		c := Call{Tool: "Bash", Command: "rm -rf x", Commands: []string{"rm -rf x"}, Mutating: true, Fingerprint: "f", ToolUseID: "t"}
		_, st := Pre(&set, c, nil, Inputs{})
		_ = Post(&set, c, st)
		_ = Status(&set, st, st.StartedAt, 0)
	})
}
