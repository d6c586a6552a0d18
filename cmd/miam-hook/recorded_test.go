package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"miam/budgets"
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
			tmp := t.TempDir()
			// The project config the session was recorded under, if any.
			if cfg, err := os.ReadFile(filepath.Join(dir, "config.yaml")); err == nil {
				writeFile(t, filepath.Join(proj, ".miam", "config.yaml"), cfg)
			}
			payloads := make([][]byte, len(files))
			for i, f := range files {
				raw, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				payloads[i] = unscrub(raw, proj, home, tmp)
			}
			materializeTaskOutputs(t, payloads, tmp)
			for i, f := range files {
				payload := payloads[i]
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
			if want, ok := expect["since_delegation"]; ok {
				delete(expect, "since_delegation")
				st := budgets.Store{Dir: filepath.Join(proj, ".miam", "state")}.Load("0b9e4c1a-5d2f-4e8b-9a7c-3f6d2e1b8a90")
				if got := strconv.Itoa(st.SinceDelegation); got != want {
					t.Errorf("since_delegation at the end = %s, want %s", got, want)
				}
			}
			for f := range expect {
				t.Errorf("expect.txt names %s, which is not a payload of this session", f)
			}
		})
	}
}

// unscrub puts back values of the real shape for the fixtures'
// placeholders; some would otherwise read as shell redirections.
func unscrub(raw []byte, proj, home, tmp string) []byte {
	r := strings.NewReplacer("<PROJ>", proj, "<HOME>", home, "<CLAUDE_TMPDIR>", tmp, "<PROJ_SLUG>", "proj-slug",
		"<SESSION_ID>", "0b9e4c1a-5d2f-4e8b-9a7c-3f6d2e1b8a90", "<DEMANDE_ID>", "d01m8mf1b685stw75z3", "<TASK_ID>", "b7x2k9q")
	return []byte(r.Replace(string(raw)))
}

// materializeTaskOutputs writes the background task output files the
// session later Read (their content is in the Read's tool_response), so the
// wake-up can read them as the hook did.
func materializeTaskOutputs(t *testing.T, payloads [][]byte, tmp string) {
	for _, p := range payloads {
		var r struct {
			Event        string `json:"hook_event_name"`
			Tool         string `json:"tool_name"`
			ToolResponse struct {
				File struct {
					FilePath string `json:"filePath"`
					Content  string `json:"content"`
				} `json:"file"`
			} `json:"tool_response"`
		}
		if json.Unmarshal(p, &r) != nil || r.Event != "PostToolUse" || r.Tool != "Read" {
			continue
		}
		if fp := r.ToolResponse.File.FilePath; strings.HasPrefix(fp, tmp+string(os.PathSeparator)) {
			writeFile(t, fp, []byte(r.ToolResponse.File.Content))
		}
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
		SystemMessage      string `json:"systemMessage"`
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
			AdditionalContext        string `json:"additionalContext"`
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
	case o.SystemMessage != "" && o.HookSpecificOutput.AdditionalContext == "":
		return "notice" // shown to the user only
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
