package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/budgets"
	"miam/hooks"
	"miam/hooks/trace"
)

func bashPayload(session, cmd string) []byte {
	p, _ := json.Marshal(map[string]any{
		"session_id": session, "hook_event_name": "PreToolUse", "cwd": "/",
		"tool_name": "Bash", "tool_use_id": "toolu_" + session,
		"tool_input": map[string]any{"command": cmd, "description": "run it"},
	})
	return p
}

// readLedger decodes every line of a project's ledger, failing on any that
// does not decode.
func readLedger(t *testing.T, proj string) []trace.Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(proj, ".miam", trace.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var recs []trace.Record
	for i, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		if !strings.HasSuffix(line, "\n") {
			t.Fatalf("line %d is torn: %q", i+1, line)
		}
		r, err := trace.Decode([]byte(line))
		if err != nil {
			t.Fatalf("line %d: %v: %q", i+1, err, line)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestParallelWritersOnTheLedger runs 32 hook processes at once, each
// evaluating one call of its own session: the ledger holds exactly 32
// whole lines, one per process.
func TestParallelWritersOnTheLedger(t *testing.T) {
	bin := hookBinary(t)
	proj := t.TempDir()
	writeFile(t, filepath.Join(proj, ".miam", "config.yaml"), []byte("budgets:\n  code_lines: 1000000\nrules:\n  plan: off\n"))
	const n = 32
	want := map[string]string{}
	payloads := make([][]byte, n)
	for i := range payloads {
		session := fmt.Sprintf("s-%02d", i)
		payload, decision := writePayload(session, filepath.Join(proj, "src", fmt.Sprintf("m%02d.py", i)), 5+i), trace.None
		if i%2 == 1 {
			payload, decision = bashPayload(session, fmt.Sprintf("rm -rf build%d", i)), trace.Deny
		}
		want[session] = decision
		payloads[i] = payload
	}
	runParallel(t, bin, proj, payloads)
	got := map[string]string{}
	for _, r := range readLedger(t, proj) {
		if _, dup := got[r.Session]; dup {
			t.Errorf("session %s traced twice", r.Session)
		}
		got[r.Session] = r.Decision
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ledger after %d parallel hooks, session → decision (-want +got):\n%s", n, d)
	}
}

// TestAppendTraceNeverInterleaves hammers the ledger from goroutines, each
// with its own descriptor as separate processes have, with lines near
// MaxLine: every line comes out whole.
func TestAppendTraceNeverInterleaves(t *testing.T) {
	proj := t.TempDir()
	const writers, each = 16, 100
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				// A control byte escapes to six (\u0001): the line nears MaxLine.
				c := strings.Repeat("\x01", 128)
				rec := trace.Record{Time: time.Now(), Session: fmt.Sprintf("w%02d-%03d", w, i) + c[:60],
					Event: trace.PreToolUse, Host: "claude", Tool: c, Agent: c, Rule: c, Decision: trace.Deny, Measured: []string{c}}
				if n := len(rec.Append(nil)); n < 3500 || n > trace.MaxLine {
					t.Errorf("line of %d bytes, want near MaxLine", n)
					return
				}
				if err := appendTrace(proj, rec); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	recs := readLedger(t, proj)
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Session[:7]] = true
	}
	if len(recs) != writers*each || len(seen) != writers*each {
		t.Errorf("%d lines, %d distinct, want %d", len(recs), len(seen), writers*each)
	}
}

// TestLedgerNeverInterrupts: a ledger that cannot be written leaves the
// verdict as it was, and says nothing (no notice, no log by default).
func TestLedgerNeverInterrupts(t *testing.T) {
	payload := bashPayload("s1", "rm -rf build")
	runIn := func(proj string) (string, string) {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), nil, bytes.NewReader(payload), &stdout, &stderr, Env{ProjectDir: proj}); code != 0 {
			t.Fatalf("exit %d", code)
		}
		return stdout.String(), stderr.String()
	}
	good := t.TempDir()
	wantOut, _ := runIn(good)
	if !strings.Contains(wantOut, `"deny"`) {
		t.Fatalf("the test needs a deny, got %s", wantOut)
	}
	for name, breakIt := range map[string]func(proj string){
		"ledger is a directory": func(proj string) {
			if err := os.MkdirAll(filepath.Join(proj, ".miam", trace.FileName), 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"ledger links into nowhere": func(proj string) {
			if err := os.MkdirAll(filepath.Join(proj, ".miam"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(proj, "gone", "traces.jsonl"), filepath.Join(proj, ".miam", trace.FileName)); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			proj := t.TempDir()
			breakIt(proj)
			gotOut, gotErr := runIn(proj)
			if gotOut != wantOut || gotErr != "" {
				t.Errorf("with a broken ledger: stdout %q, stderr %q; want %q and nothing", gotOut, gotErr, wantOut)
			}
		})
	}
}

// TestLedgerNeverFollowsASymlink: a repository shipping .miam/traces.jsonl
// as a link to another file gets nothing appended there.
func TestLedgerNeverFollowsASymlink(t *testing.T) {
	proj := t.TempDir()
	target := filepath.Join(t.TempDir(), "bashrc")
	writeFile(t, target, []byte("# the user's file\n"))
	if err := os.MkdirAll(filepath.Join(proj, ".miam"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(proj, ".miam", trace.FileName)); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	run(context.Background(), nil, bytes.NewReader(bashPayload("s1", "rm -rf build")), &stdout, &stderr, Env{ProjectDir: proj})
	if !strings.Contains(stdout.String(), `"deny"`) {
		t.Fatalf("the decision changed: %s", stdout.String())
	}
	if data, _ := os.ReadFile(target); string(data) != "# the user's file\n" {
		t.Errorf("the link's target was written:\n%s", data)
	}
}

// TestSecretsNeverReachTheLedger runs Bash commands holding a token through
// the hook, one denied (its reason quotes the command), one let through:
// the ledger holds neither the token nor the command.
func TestSecretsNeverReachTheLedger(t *testing.T) {
	const token = "ghp_Zq8xK2mP9vL4nR7tW1yB6cD3fH5jA0sE8uGi"
	proj := t.TempDir()
	for i, cmd := range []string{
		"rm -rf dist && curl -H 'Authorization: Bearer " + token + "' https://api.example.com/x",
		"GITHUB_TOKEN=" + token + " gh release create v1 > out.txt",
	} {
		var stdout, stderr bytes.Buffer
		run(context.Background(), nil, bytes.NewReader(bashPayload(fmt.Sprintf("s%d", i), cmd)), &stdout, &stderr, Env{ProjectDir: proj})
		if i == 0 && !strings.Contains(stdout.String(), token) {
			t.Fatalf("the test needs a reason quoting the token, got %s", stdout.String())
		}
	}
	data, err := os.ReadFile(filepath.Join(proj, ".miam", trace.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n != 2 {
		t.Fatalf("%d lines, want 2:\n%s", n, data)
	}
	for _, leak := range []string{token, "ghp_", "Bearer", "curl", "GITHUB_TOKEN", "gh release"} {
		if bytes.Contains(data, []byte(leak)) {
			t.Errorf("the ledger holds %q:\n%s", leak, data)
		}
	}
}

// TestWhatIsTraced runs events through the hook and reads what the ledger
// got: evaluated calls and stops, nothing else.
func TestWhatIsTraced(t *testing.T) {
	proj := t.TempDir()
	now := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	payloads := []string{
		string(bashPayload("s", "make build")),
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Read","agent_id":"a1","agent_type":"Explore","tool_input":{"file_path":"src/a.py"}}`,
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"WebFetch","tool_input":{"url":"https://example.com"}}`,
		`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_s","tool_input":{"command":"make build"},"tool_response":{"stdout":""}}`,
		`{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"hello"}`,
		`{"session_id":"s","hook_event_name":"SubagentStop","agent_id":"a1","agent_type":"Explore"}`,
		`{"session_id":"s","hook_event_name":"Stop"}`,
		`not json`,
	}
	for _, p := range payloads {
		var stdout, stderr bytes.Buffer
		run(context.Background(), nil, strings.NewReader(p), &stdout, &stderr, Env{ProjectDir: proj, Now: now})
	}
	// The panic of a decision leaves an unchecked line.
	h := hook{decide: func(hooks.Event, budgets.State, hooks.Env) (hooks.Verdict, budgets.State) { panic("injected") }}
	var stdout, stderr bytes.Buffer
	h.run(context.Background(), nil, bytes.NewReader(bashPayload("s", "make")), &stdout, &stderr, Env{ProjectDir: proj, Now: now})

	var got []string
	for _, r := range readLedger(t, proj) {
		got = append(got, fmt.Sprintf("%s %s %s agent=%s unchecked=%v", r.Event, r.Tool, r.Decision, r.Agent, r.Unchecked))
	}
	want := []string{
		"PreToolUse Bash none agent= unchecked=false",
		"SubagentStop  none agent=Explore unchecked=false",
		"Stop  none agent= unchecked=false",
		"PreToolUse Bash none agent= unchecked=true",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ledger (-want +got):\n%s", d)
	}
}
