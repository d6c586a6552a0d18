package hooks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"miam/budgets"
	"miam/hooks/config"
)

func pythonLines(n int) string {
	var b strings.Builder
	for i := 0; b.Len() == 0 || strings.Count(b.String(), "\n") < n; i++ {
		fmt.Fprintf(&b, "def f%d(x):\n    \"\"\"Return x plus %d.\"\"\"\n    return x + %d\n\n", i, i, i)
	}
	return b.String()
}

// BenchmarkDecideWrite400 is the decision on a PreToolUse Write of a
// 400-line Python file over an existing 200-line version, allowed (the
// common case) and denied (which also builds the ready deleguer call).
func BenchmarkDecideWrite400(b *testing.B) {
	content := pythonLines(400)
	raw, _ := json.Marshal(WriteInput{FilePath: "/p/src/big.py", Content: content})
	ev := Event{Name: PreToolUse, SessionID: "s", ToolUseID: "t", Tool: DecodeTool("Write", raw)}
	files := fstest.MapFS{"src/big.py": {Data: []byte(pythonLines(200))}}
	for _, bc := range []struct {
		name   string
		budget int
		want   Decision
	}{{"allowed", 1_000_000, None}, {"denied", 0, Deny}} {
		b.Run(bc.name, func(b *testing.B) {
			env := Env{Project: "/p", Files: files}
			env.Config.Budgets.CodeLines = bc.budget
			env.Config.Rules.Plan = config.Off // the write budget's cost, not rule 6's
			st := budgets.Fresh("s")
			if v, _ := Decide(ev, st, env); v.Decision != bc.want {
				b.Fatalf("decision %v, want %v", v.Decision, bc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				Decide(ev, st, env)
			}
		})
	}
}

// BenchmarkDecideNoOpinion is the cost of an event no rule reads.
func BenchmarkDecideNoOpinion(b *testing.B) {
	raw := []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`)
	st := budgets.Fresh("s")
	for b.Loop() {
		ev, _ := Decode(raw)
		Decide(ev, st, Env{})
	}
}
