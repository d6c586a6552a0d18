package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordedDir holds payloads captured from the real Claude Code CLI by the
// end-to-end tests (-update), one directory per session, one file per hook
// call in the order they fired.
const recordedDir = "../../fixtures/hosts/claude/2.1.328"

// TestRecordedSessions feeds every recorded session, payload by payload,
// through the hook as Claude Code did, and checks each decision against the
// session's expect.txt ("<payload file> <decision> <rule>"); every payload
// not listed there must get no decision.
func TestRecordedSessions(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(recordedDir, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recorded sessions in %s", recordedDir)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			expect := readExpect(t, filepath.Join(dir, "expect.txt"))
			files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
			if len(files) == 0 {
				t.Fatal("no payloads")
			}
			proj := t.TempDir()
			home := t.TempDir()
			for _, f := range files {
				raw, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				payload := bytes.ReplaceAll(raw, []byte("<PROJ>"), []byte(proj))
				payload = bytes.ReplaceAll(payload, []byte("<HOME>"), []byte(home))
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), nil, bytes.NewReader(payload), &stdout, &stderr, Env{ProjectDir: proj})
				if code != 0 {
					t.Fatalf("%s: exit %d", filepath.Base(f), code)
				}
				got := decisionOf(t, stdout.Bytes())
				want := expect[filepath.Base(f)]
				if want == "" {
					want = "none"
				}
				if got != want {
					t.Errorf("%s: decision %q, want %q (stdout %s)", filepath.Base(f), got, want, stdout.String())
				}
				delete(expect, filepath.Base(f))
				// Replay what the host did after an allowed Write, so later
				// payloads see the file on disk as Claude Code's hooks did.
				applyWrite(t, payload, got)
			}
			for f := range expect {
				t.Errorf("expect.txt names %s, which is not a payload of this session", f)
			}
		})
	}
}

func readExpect(t *testing.T, path string) map[string]string {
	t.Helper()
	m := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("every recorded session needs an expect.txt: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		m[name] = strings.TrimSpace(rest)
	}
	return m
}

// decisionOf summarises a hook's stdout as "none", "deny <rule words>" etc.
func decisionOf(t *testing.T, stdout []byte) string {
	t.Helper()
	if len(bytes.TrimSpace(stdout)) == 0 {
		return "none"
	}
	var o struct {
		Decision           string `json:"decision"`
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(stdout, &o); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	switch {
	case o.HookSpecificOutput.PermissionDecision != "":
		rule := ""
		if _, after, ok := strings.Cut(o.HookSpecificOutput.PermissionDecisionReason, "("); ok {
			rule, _, _ = strings.Cut(after, ")")
		}
		return o.HookSpecificOutput.PermissionDecision + " " + rule
	case o.Decision != "":
		return o.Decision
	}
	return "context"
}

func applyWrite(t *testing.T, payload []byte, decision string) {
	var p struct {
		Event     string `json:"hook_event_name"`
		Tool      string `json:"tool_name"`
		AgentID   string `json:"agent_id"`
		ToolInput struct {
			FilePath string `json:"file_path"`
			Content  string `json:"content"`
		} `json:"tool_input"`
	}
	if json.Unmarshal(payload, &p) != nil || p.Event != "PostToolUse" || p.Tool != "Write" || decision != "none" {
		return
	}
	writeFile(t, p.ToolInput.FilePath, []byte(p.ToolInput.Content))
}
