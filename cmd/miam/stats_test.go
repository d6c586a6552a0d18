package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/store"
	"miam/hooks/trace"
)

// statsProject makes a project holding ledger (nil: none) and a state home
// without daemon state; it returns both.
func statsProject(t *testing.T, ledger []byte) (proj, stateHome string) {
	t.Helper()
	proj, stateHome = t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", stateHome)
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	if ledger != nil {
		writeTestFile(t, filepath.Join(proj, ".miam", trace.FileName), string(ledger))
	}
	return proj, stateHome
}

// runStatsIn runs miam stats and returns its stdout with the temporary
// directories named <PROJ> and <STATE>.
func runStatsIn(t *testing.T, proj, stateHome string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := runStats(context.Background(), append([]string{"--dir", proj}, args...), &stdout, &stderr)
	out := strings.ReplaceAll(stdout.String(), proj, "<PROJ>")
	return strings.ReplaceAll(out, stateHome, "<STATE>"), err
}

// TestStatsGolden tallies testdata/traces.jsonl (calls of three hosts, a
// subagent, stops, a measured rule, an unchecked call, three corrupt lines)
// with no daemon state, in text and in JSON.
func TestStatsGolden(t *testing.T) {
	ledger, err := os.ReadFile("testdata/traces.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{{"stats", nil}, {"stats.json", []string{"--json"}}} {
		t.Run(tc.name, func(t *testing.T) {
			proj, stateHome := statsProject(t, ledger)
			got, err := runStatsIn(t, proj, stateHome, tc.args...)
			if err != nil {
				t.Fatalf("stats: %v", err)
			}
			if tc.args != nil {
				var buf bytes.Buffer
				if err := json.Indent(&buf, []byte(got), "", "  "); err != nil {
					t.Fatalf("--json printed no JSON: %v\n%s", err, got)
				}
				got = buf.String()
			}
			golden := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("miam stats %v (-want +got):\n%s", tc.args, d)
			}
		})
	}
}

// TestStatsParts: each part is printed whatever becomes of the other.
func TestStatsParts(t *testing.T) {
	line := string(trace.Record{Event: trace.PreToolUse, Decision: trace.Deny, Rule: "tool_policy", Host: "claude"}.Append(nil))
	line = strings.Replace(line, `"0001-01-01T00:00:00Z"`, `"2026-11-29T21:00:00Z"`, 1)

	t.Run("no ledger", func(t *testing.T) {
		proj, stateHome := statsProject(t, nil)
		got, err := runStatsIn(t, proj, stateHome)
		want := "engines: no daemon state yet (<STATE>/miam): no delegation recorded\n\n" +
			"governance: no trace ledger yet (<PROJ>/.miam/traces.jsonl): no call evaluated\n"
		if err != nil || got != want {
			t.Errorf("got %q, %v; want %q", got, err, want)
		}
	})
	t.Run("daemon state present", func(t *testing.T) {
		proj, stateHome := statsProject(t, []byte(line))
		st, err := store.Open(filepath.Join(stateHome, "miam"), nil)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		got, err := runStatsIn(t, proj, stateHome)
		if err != nil || !strings.HasPrefix(got, "ENGINE  MODEL") || !strings.Contains(got, "block rate 100.0 %") {
			t.Errorf("got %q, %v; want the engines' header, then the ledger", got, err)
		}
	})
	t.Run("daemon state unreadable", func(t *testing.T) {
		proj, stateHome := statsProject(t, []byte(line))
		writeTestFile(t, filepath.Join(stateHome, "miam", store.FileName), "not a database, not at all, no.")
		got, err := runStatsIn(t, proj, stateHome)
		if err == nil || !strings.HasPrefix(got, "engines: daemon state unreadable") || !strings.Contains(got, "block rate 100.0 %") {
			t.Errorf("got %q, %v; want the engines' error, the ledger, and a failure", got, err)
		}
	})
	t.Run("ledger unreadable", func(t *testing.T) {
		proj, stateHome := statsProject(t, nil)
		if err := os.MkdirAll(filepath.Join(proj, ".miam", trace.FileName), 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := runStatsIn(t, proj, stateHome, "--json")
		var rep statsReport
		if jerr := json.Unmarshal([]byte(got), &rep); jerr != nil {
			t.Fatalf("--json: %v: %s", jerr, got)
		}
		if err == nil || rep.Governance.Error == "" || rep.EnginesNote == "" {
			t.Errorf("got %s, %v; want the engines' note, the ledger's error, and a failure", got, err)
		}
	})
}
