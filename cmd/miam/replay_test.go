package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestReplayGolden replays a hand-made transcript covering the rules (a
// test file, the budget, a refund, a delegation reset, a subagent, a task
// notification, garbage lines) and the real recorded one; the text report is
// compared with a golden file.
func TestReplayGolden(t *testing.T) {
	for _, tc := range []struct{ name, transcript string }{
		{"rich", "testdata/rich.jsonl"},
		{"recorded", "../../fixtures/transcripts/claude-2.1.328-budget.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := runReplay(context.Background(), []string{tc.transcript}, &stdout, &stderr); err != nil {
				t.Fatalf("replay: %v (%s)", err, stderr.String())
			}
			golden := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), stdout.String()); d != "" {
				t.Errorf("replay report (-want +got):\n%s", d)
			}
		})
	}
}

func TestReplayJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := runReplay(context.Background(), []string{"testdata/rich.jsonl", "--json"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var rep ReplayReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json output is not a report: %v", err)
	}
	want := ReplayTotals{ToolCalls: 10, Denied: 2, Prompts: 2, CodeLinesByHand: 38, Delegations: 1, SubagentCalls: 1, UnreadableLines: 1}
	if d := cmp.Diff(want, rep.Totals); d != "" {
		t.Errorf("totals (-want +got):\n%s", d)
	}
	var denied []string
	for _, c := range rep.Calls {
		if c.Decision == "deny" {
			denied = append(denied, c.Path+" "+c.Rule)
		}
	}
	if d := cmp.Diff([]string{"tests/test_calc.py tests", "src/more.py write_budget"}, denied); d != "" {
		t.Errorf("denied calls (-want +got):\n%s", d)
	}
	if rep.State.SinceDelegation != 12 {
		t.Errorf("since_delegation after the reset and one 12-line write = %d, want 12", rep.State.SinceDelegation)
	}
}

func TestReplayErrors(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	for _, args := range [][]string{{}, {"/nonexistent/x.jsonl"}, {empty}} {
		var stdout, stderr bytes.Buffer
		if err := runReplay(context.Background(), args, &stdout, &stderr); err == nil {
			t.Errorf("replay %v succeeded", args)
		}
	}
}
