package main

import (
	"strings"
	"testing"
	"time"

	"miam/fixtures/fakeapi"
	"miam/fixtures/fakeollama"
)

// TestE2EException drives the MCP exception tool and the turn report
// through the real Claude Code CLI and `miam mcp`: 28 code lines by hand,
// then an exception for src/lock.py lets a 24-line Write through where rule
// 2 would deny; a delegation answered ok: null is left without its wait,
// so the Stop is blocked once with the turn report, and the next Stop
// passes.
func TestE2EException(t *testing.T) {
	root := repoRoot(t)
	claude := claudeBin(t, root)
	bindir := buildBinaries(t, root)
	sc := delegateScenario{
		name:    "exception_and_report",
		prompt:  "SCENARIO-X: lock by hand under an exception",
		replies: []fakeollama.Reply{fakeollama.Delayed(3*time.Second, calcAnswer)},
		steps: func(d *delegation) []fakeapi.Step {
			return []fakeapi.Step{
				{Name: "write by hand", When: fakeapi.FirstUserContains("SCENARIO-X"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_x_hand", "Write", write(d.path("src/helpers.py"), python("helper", 28, 0, 0))),
				}},
				{Name: "load exception and deleguer", When: d.after("toolu_x_hand"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_x_search", "ToolSearch", map[string]any{"query": "select:mcp__miam__exception,mcp__miam__deleguer", "max_results": 5}),
				}},
				{Name: "open an exception", When: d.after("toolu_x_search"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_x_exc", "mcp__miam__exception", map[string]any{"raison": "concurrence", "fichiers": []string{"src/lock.py"}, "lignes": 30}),
				}},
				{Name: "write the lock by hand", When: d.after("toolu_x_exc"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_x_lock", "Write", write(d.path("src/lock.py"), python("lock", 24, 0, 0))),
				}},
				{Name: "delegate calc", When: d.after("toolu_x_lock"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_x_deleguer", deleguerTool, calcCall),
				}},
				{Name: "end turn without waiting", When: d.after("toolu_x_deleguer"), Reply: []fakeapi.Block{
					fakeapi.Text("Done."),
				}},
				{Name: "told by the report", When: fakeapi.LastUserContains("miam turn report"), Reply: []fakeapi.Block{
					fakeapi.Text("Understood; ending anyway."),
				}},
			}
		},
		check: func(t *testing.T, d *delegation) {
			wantAllowed(t, d.w(), "toolu_x_hand", "src/helpers.py")
			res := toolResult(t, d.w(), "toolu_x_exc")
			if res.IsError || !strings.Contains(res.ResultText(), `"ok":true`) {
				t.Fatalf("the exception tool did not grant: %s", res.ResultText())
			}
			wantAllowed(t, d.w(), "toolu_x_lock", "src/lock.py")
			st := d.finalState(t)
			if st.Session.Exceptions != 1 || len(st.Exceptions) != 1 || st.Exceptions[0].Used != 24 {
				t.Errorf("exceptions in the state: %d, %+v", st.Session.Exceptions, st.Exceptions)
			}
			if st.SinceDelegation != 28 {
				t.Errorf("since_delegation %d, want 28: lines under an exception do not count towards the budget", st.SinceDelegation)
			}
			var report string
			for _, r := range d.api.Requests() {
				for _, m := range r.Messages {
					if m.Role == "user" && strings.Contains(m.Text(), "miam turn report") {
						report = m.Text()
					}
				}
			}
			t.Logf("the model was told at Stop:\n%s", report)
			for _, w := range []string{"52 code lines by you", "exceptions: 1 (concurrence 24/30 lines on src/lock.py)", "miam attendre"} {
				if !strings.Contains(report, w) {
					t.Errorf("the Stop report the model got lacks %q", w)
				}
			}
			if st.TurnOpen {
				t.Error("the second Stop did not close the turn")
			}
		},
	}
	runDelegate(t, root, claude, bindir, sc)
}
