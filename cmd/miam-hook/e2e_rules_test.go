package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"miam/budgets"
	"miam/fixtures/fakeapi"
)

// TestE2ERules drives rules 5 and 3 and the CLI exception through the real
// Claude Code CLI: a 500-line file read in ranges of 120 lines has its
// fourth range denied with a ready extraction call; `git commit` without a
// delegation is denied; `miam exception` then lets a 40-line Write through
// on the file it names, and the session state counts the exception.
func TestE2ERules(t *testing.T) {
	root := repoRoot(t)
	claude := claudeBin(t, root)
	bindir := buildBinaries(t, root)
	miam := filepath.Join(bindir, "miam")
	runScenario(t, root, claude, bindir, scenario{
		name:   "rules_read_commit_exception",
		prompt: "SCENARIO-RULES: study big.txt, commit, then write the lock by hand",
		steps: func(proj string) []fakeapi.Step {
			var big strings.Builder
			for i := 1; i <= 500; i++ {
				fmt.Fprintf(&big, "line %03d of the big module, with words in it....\n", i)
			}
			writeFile(t, filepath.Join(proj, "src", "big.txt"), []byte(big.String()))
			readStep := func(id, after string, offset int) fakeapi.Step {
				when := fakeapi.FirstUserContains("SCENARIO-RULES")
				if after != "" {
					when = fakeapi.AfterToolResult(after)
				}
				return fakeapi.Step{Name: id, When: when, Reply: []fakeapi.Block{
					fakeapi.ToolUse(id, "Read", map[string]any{"file_path": filepath.Join(proj, "src", "big.txt"), "offset": offset, "limit": 120}),
				}}
			}
			return []fakeapi.Step{
				readStep("toolu_rd_1", "", 1),
				readStep("toolu_rd_2", "toolu_rd_1", 121),
				readStep("toolu_rd_3", "toolu_rd_2", 241),
				readStep("toolu_rd_4", "toolu_rd_3", 361),
				{Name: "commit", When: fakeapi.AfterToolResult("toolu_rd_4"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_commit", "Bash", map[string]any{"command": "git add -A && git commit -q -m 'study'", "description": "Commit"}),
				}},
				{Name: "exception", When: fakeapi.AfterToolResult("toolu_commit"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_exc", "Bash", map[string]any{
						"command": miam + " exception concurrence --fichiers src/lock.py --lignes 40", "description": "Open an exception"}),
				}},
				{Name: "write", When: fakeapi.AfterToolResult("toolu_exc"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_lock", "Write", map[string]any{"file_path": filepath.Join(proj, "src", "lock.py"), "content": python("lock", 40, 0, 0)}),
				}},
				done("toolu_lock"),
			}
		},
		check: func(t *testing.T, w *world) {
			for _, id := range []string{"toolu_rd_1", "toolu_rd_2", "toolu_rd_3"} {
				if res := toolResult(t, w, id); res.IsError {
					t.Errorf("%s was refused: %s", id, res.ResultText())
				}
			}
			refused(t, w, "toolu_rd_4", "miam rule 5 (read budget)", "360 lines of src/big.txt", `"type":"extraction"`, "mcp__miam__deleguer")
			refused(t, w, "toolu_commit", "miam rule 3 (commit)")
			if res := toolResult(t, w, "toolu_exc"); res.IsError {
				t.Errorf("miam exception failed: %s", res.ResultText())
			}
			wantAllowed(t, w, "toolu_lock", "src/lock.py")
			st := (budgets.Store{Dir: filepath.Join(w.proj, ".miam", "state")}).Load(sessionID(t, w.payloads))
			if st.Session.Exceptions != 1 || len(st.Exceptions) != 1 || st.Exceptions[0].Used != 40 {
				t.Errorf("exceptions in the state: %d, %+v", st.Session.Exceptions, st.Exceptions)
			}
			if _, err := os.Stat(filepath.Join(w.proj, ".miam", "state", "exceptions-pending.json")); err == nil {
				t.Error("the pending exception request was not claimed")
			}
		},
	})
}

// refused asserts that a call was denied through PreToolUse JSON with a
// reason containing every one of want.
func refused(t *testing.T, w *world, id string, want ...string) {
	t.Helper()
	res := toolResult(t, w, id)
	text := res.ResultText()
	t.Logf("the model was told, for %s:\n%s", id, text)
	if !res.IsError {
		t.Errorf("%s was not refused; the model got: %s", id, text)
	}
	for _, s := range want {
		if !strings.Contains(text, s) {
			t.Errorf("deny text for %s lacks %q:\n%s", id, s, text)
		}
	}
	if strings.Contains(text, w.hookBin) {
		t.Errorf("deny for %s came through exit 2, not JSON:\n%s", id, text)
	}
}
