package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"miam/budgets"
)

// buildHook builds the real miam-hook binary once per test binary run.
var buildHook = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "miam-hook-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "miam-hook")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

func hookBinary(t *testing.T) string {
	t.Helper()
	bin, err := buildHook()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func writePayload(session, path string, codeLines int) []byte {
	var b strings.Builder
	for i := 0; i < codeLines; i++ {
		fmt.Fprintf(&b, "V%d = %d\n", i, i)
	}
	p, _ := json.Marshal(map[string]any{
		"session_id": session, "hook_event_name": "PreToolUse", "cwd": "/",
		"tool_name": "Write", "tool_use_id": "toolu_" + filepath.Base(path),
		"tool_input": map[string]any{"file_path": path, "content": b.String()},
	})
	return p
}

// TestConcurrentProcessesNeverLoseACount runs 32 hook processes charging one
// session at once: the final count must be the exact sum.
func TestConcurrentProcessesNeverLoseACount(t *testing.T) {
	bin := hookBinary(t)
	proj := t.TempDir()
	writeFile(t, filepath.Join(proj, ".miam", "config.yaml"), []byte("budgets:\n  code_lines: 1000000\nrules:\n  plan: off # every process writes; none carries a plan\n"))
	const n = 32
	want := 0
	payloads := make([][]byte, n)
	for i := range payloads {
		lines := 5 + i // distinct sizes, so a lost update shows in the sum
		want += lines
		payloads[i] = writePayload("s-concurrent", filepath.Join(proj, "src", fmt.Sprintf("m%02d.py", i)), lines)
	}
	for i, out := range runParallel(t, bin, proj, payloads) {
		if len(out) != 0 {
			t.Errorf("process %d: stdout %q", i, out)
		}
	}
	st := budgets.Store{Dir: filepath.Join(proj, ".miam", "state")}.Load("s-concurrent")
	if st.SinceDelegation != want || st.Session.Written.Code != want || len(st.Pending) != n {
		t.Errorf("after %d parallel hooks: since_delegation %d, written %d, pending %d; want %d, %d, %d",
			n, st.SinceDelegation, st.Session.Written.Code, len(st.Pending), want, want, n)
	}
}

// runParallel runs bin once per payload, all at once, in project proj,
// and returns each process's stdout; a process that fails is an error.
func runParallel(t *testing.T, bin, proj string, payloads [][]byte) [][]byte {
	t.Helper()
	outs := make([][]byte, len(payloads))
	var wg sync.WaitGroup
	for i, payload := range payloads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin)
			cmd.Env = []string{"CLAUDE_PROJECT_DIR=" + proj, "HOME=" + proj}
			cmd.Stdin = bytes.NewReader(payload)
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("process %d: err %v, stdout %q", i, err, out)
			}
			outs[i] = out
		}()
	}
	wg.Wait()
	return outs
}

// TestProcessFailsOpen checks the real binary's contract on bad days: a
// broken config, garbage, or no project never gives exit 1 or 2 nor a deny.
func TestProcessFailsOpen(t *testing.T) {
	bin := hookBinary(t)
	proj := t.TempDir()
	writeFile(t, filepath.Join(proj, ".miam", "config.yaml"), []byte("rules:\n  tests: nope\n"))
	big := writePayload("s1", filepath.Join(proj, "tests", "test_x.py"), 50)
	tests := []struct {
		name       string
		env        []string
		stdin      []byte
		wantNotice string // substring of systemMessage; "" means empty stdout
	}{
		{"broken config", []string{"CLAUDE_PROJECT_DIR=" + proj}, big, "config.yaml: line 2"},
		{"garbage", []string{"CLAUDE_PROJECT_DIR=" + proj}, []byte("\x00\xffnot json"), ""},
		{"empty stdin", []string{"CLAUDE_PROJECT_DIR=" + proj}, nil, ""},
		{"no project dir", nil, big, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin)
			cmd.Env = append(tc.env, "HOME="+proj)
			cmd.Stdin = bytes.NewReader(tc.stdin)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("exit: %v (must be 0)", err)
			}
			if tc.wantNotice == "" {
				if len(out) != 0 {
					t.Errorf("stdout %q, want empty", out)
				}
				return
			}
			var o struct {
				SystemMessage      string `json:"systemMessage"`
				HookSpecificOutput *struct {
					PermissionDecision string `json:"permissionDecision"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal(out, &o); err != nil {
				t.Fatalf("stdout %q: %v", out, err)
			}
			if o.HookSpecificOutput != nil && o.HookSpecificOutput.PermissionDecision != "" {
				t.Errorf("failing open gave a decision: %s", out)
			}
			if !strings.Contains(o.SystemMessage, tc.wantNotice) || !strings.Contains(o.SystemMessage, "failed open") {
				t.Errorf("notice %q does not say it failed open with %q", o.SystemMessage, tc.wantNotice)
			}
		})
	}
}
