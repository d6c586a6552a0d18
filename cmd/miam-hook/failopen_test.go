package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"miam/budgets"
	"miam/hooks"
)

// TestPanicFailsOpen injects a panic into the decision: the hook must exit 0
// with no decision and a notice, never the exit 2 a Go panic would give.
func TestPanicFailsOpen(t *testing.T) {
	proj := t.TempDir()
	h := hook{decide: func(hooks.Event, budgets.State, hooks.Env) (hooks.Verdict, budgets.State) {
		panic("injected")
	}}
	payload := writePayload("s-panic", filepath.Join(proj, "tests", "test_p.py"), 40)
	var stdout, stderr bytes.Buffer
	code := h.run(context.Background(), nil, bytes.NewReader(payload), &stdout, &stderr, Env{ProjectDir: proj})
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	var o map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &o); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if _, ok := o["hookSpecificOutput"]; ok {
		t.Errorf("a panic produced a decision: %s", stdout.String())
	}
	if msg, _ := o["systemMessage"].(string); !strings.Contains(msg, "failed open") || !strings.Contains(msg, "injected") {
		t.Errorf("systemMessage %q does not report the failure", msg)
	}
}

func FuzzRun(f *testing.F) {
	proj := f.TempDir()
	f.Add(writePayload("s", filepath.Join(proj, "tests", "test_a.py"), 30))
	f.Add([]byte(`{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"mcp__miam__deleguer","tool_use_id":"t","tool_response":"{\"ok\":true}"}`))
	f.Add([]byte(`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"<task-notification>"}`))
	f.Add([]byte(`{"hook_event_name":"Stop"}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), nil, bytes.NewReader(payload), &stdout, &stderr, Env{ProjectDir: proj})
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		if stdout.Len() == 0 {
			return
		}
		if !json.Valid(payload) {
			t.Fatalf("garbage payload %q produced output %q", payload, stdout.String())
		}
		if !json.Valid(stdout.Bytes()) {
			t.Fatalf("stdout is not JSON: %q", stdout.String())
		}
	})
}
