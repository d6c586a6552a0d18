package hooks

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// copilotFixtures are payloads of the real GitHub Copilot CLI 1.0.102
// (hosts-cli/captures/copilot), one file each, named
// NNN-<event>[-<tool>].json after the event the hook was registered for.
const copilotFixtures = "../fixtures/hosts/copilot/1.0.102"

// copilotEvent is the event a fixture's file name carries, as the hook's
// command line would.
func copilotEvent(file string) string {
	parts := strings.SplitN(strings.TrimSuffix(filepath.Base(file), ".json"), "-", 3)
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

func TestDecodeCopilotCaptures(t *testing.T) {
	const sid = "<ID_1>"
	tests := []struct {
		file   string
		want   decoded
		answer Host
	}{
		{"a_allow_baseline/001-sessionStart.json", decoded{Name: SessionStart, SessionID: sid, Cwd: "<PROJ>"}, Copilot},
		{"a_allow_baseline/002-userPromptSubmitted.json", decoded{Name: UserPromptSubmit, SessionID: sid, Cwd: "<PROJ>",
			Prompt: "MIAM-E2E: clean the build directory"}, Copilot},
		{"a_allow_baseline/003-preToolUse-bash.json", decoded{Name: PreToolUse, SessionID: sid, Cwd: "<PROJ>",
			Tool: "Bash", Input: &BashInput{Command: "rm -rf build", Description: "remove build dir"}}, Copilot},
		{"a_allow_baseline/004-permissionRequest-bash.json", decoded{Name: PermissionRequest, SessionID: sid, Cwd: "<PROJ>",
			Tool: "Bash", Input: &BashInput{Command: "rm -rf build"}}, Copilot},
		{"a_allow_baseline/005-postToolUse-bash.json", decoded{Name: PostToolUse, SessionID: sid, Cwd: "<PROJ>",
			Tool: "Bash", Input: &BashInput{Command: "rm -rf build", Description: "remove build dir"}, Response: true}, Copilot},
		{"a_allow_baseline/006-agentStop.json", decoded{Name: Stop, SessionID: sid, Cwd: "<PROJ>"}, Copilot},
		{"a_allow_baseline/007-sessionEnd.json", decoded{Name: SessionEnd, SessionID: sid, Cwd: "<PROJ>"}, Copilot},
		{"e_write_deny_json/003-preToolUse-create.json", decoded{Name: PreToolUse, SessionID: sid, Cwd: "<PROJ>",
			Tool: "Write", Input: &WriteInput{FilePath: "<PROJ>/tests/test_x.py", Content: "def test_x():\n    assert True\n"}}, Copilot},
		// permissionRequest names the permission kind ("edit") with
		// another input: no Edit fields to read, so no rule acts.
		{"h_write_allow_baseline/004-permissionRequest-edit.json", decoded{Name: PermissionRequest, SessionID: sid, Cwd: "<PROJ>",
			Tool: "Edit", Input: &EditInput{FilePath: "<PROJ>/tests/test_x.py"}}, Copilot},
		{"h_write_allow_baseline/005-postToolUse-create.json", decoded{Name: PostToolUse, SessionID: sid, Cwd: "<PROJ>",
			Tool: "Write", Input: &WriteInput{FilePath: "<PROJ>/tests/test_x.py", Content: "def test_x():\n    assert True\n"}, Response: true}, Copilot},
		// A PascalCase hook gets Claude Code's payload and is answered as Claude.
		{"f_pascal_claude_output/001-PreToolUse-Bash.json", decoded{Name: PreToolUse, SessionID: sid, Cwd: "<PROJ>",
			Tool: "Bash", Input: &BashInput{Command: "rm -rf build", Description: "remove build dir"}}, Claude},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			ev, answer, err := DecodeCopilot(copilotEvent(tc.file), readFixture(t, filepath.Join(copilotFixtures, tc.file)))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, project(ev)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if answer != tc.answer {
				t.Errorf("answered as %s, want %s", answer, tc.answer)
			}
		})
	}
}

// Every captured payload decodes under the event its hook was registered
// for, to a known event.
func TestDecodeCopilotEveryCapture(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(copilotFixtures, "*", "*.json"))
	if len(files) == 0 {
		t.Fatal("no copilot fixtures")
	}
	known := map[EventName]bool{}
	for _, n := range copilotEvents {
		known[n] = true
	}
	for _, f := range files {
		ev, _, err := DecodeCopilot(copilotEvent(f), readFixture(t, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if !known[ev.Name] {
			t.Errorf("%s: event %q", f, ev.Name)
		}
	}
}

func TestDecodeCopilot(t *testing.T) {
	tests := []struct {
		name    string
		event   string
		payload string
		want    decoded
		err     string
	}{
		{"toolArgs as a JSON string", "preToolUse", `{"sessionId":"s","toolName":"bash","toolArgs":"{\"command\":\"rm -rf /\"}"}`,
			decoded{Name: PreToolUse, SessionID: "s", Tool: "Bash", Input: &BashInput{Command: "rm -rf /"}}, ""},
		{"edit", "preToolUse", `{"toolName":"edit","toolArgs":{"path":"/p/a","old_str":"x","new_str":"y"}}`,
			decoded{Name: PreToolUse, Tool: "Edit", Input: &EditInput{FilePath: "/p/a", OldString: "x", NewString: "y"}}, ""},
		{"view", "preToolUse", `{"toolName":"view","toolArgs":{"path":"/p/.env"}}`,
			decoded{Name: PreToolUse, Tool: "Read", Input: &ReadInput{FilePath: "/p/.env"}}, ""},
		{"unmapped tool keeps its name", "preToolUse", `{"toolName":"apply_patch","toolArgs":"*** Begin Patch"}`,
			decoded{Name: PreToolUse, Tool: "apply_patch"}, ""},
		{"failure error string", "postToolUseFailure", `{"toolName":"bash","toolArgs":{"command":"false"},"error":"Exit code 1"}`,
			decoded{Name: PostToolUseFailure, Tool: "Bash", Input: &BashInput{Command: "false"}, Error: "Exit code 1"}, ""},
		{"failure error object", "postToolUseFailure", `{"error":{"message":"boom"}}`,
			decoded{Name: PostToolUseFailure, Error: "boom"}, ""},
		{"stop hook active", "agentStop", `{"stop_hook_active":true,"stopReason":"end_turn"}`,
			decoded{Name: Stop, Stop: true}, ""},
		{"subagent stop", "subagentStop", `{"agentId":"a1","agentType":"general","response":"done"}`,
			decoded{Name: SubagentStop}, ""},
		{"unknown event keeps its name", "errorOccurred", `{"sessionId":"s"}`, decoded{Name: "errorOccurred", SessionID: "s"}, ""},
		{"no event", "", `{"toolName":"bash"}`, decoded{}, "no event named"},
		{"not JSON", "preToolUse", `rm -rf`, decoded{}, "decode copilot payload"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, _, err := DecodeCopilot(tc.event, []byte(tc.payload))
			wantDecoded(t, ev, err, tc.want, tc.err)
		})
	}
	ev, _, _ := DecodeCopilot("subagentStop", []byte(`{"agentId":"a1","agentType":"general","response":"done"}`))
	if !ev.Subagent() || ev.AgentType != "general" || ev.LastAssistantMessage != "done" {
		t.Errorf("subagentStop decoded %+v", ev)
	}
}

// A bash result reaches the rules where Claude Code puts it: stdout.
func TestDecodeCopilotBashOutput(t *testing.T) {
	ev, _, err := DecodeCopilot("postToolUse", readFixture(t, filepath.Join(copilotFixtures, "a_allow_baseline/005-postToolUse-bash.json")))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff("\n<shellId: 0 completed with exit code 0>", stdout(t, ev.Response)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestEncodeCopilot(t *testing.T) {
	tests := []encodeCase{
		{"no opinion is empty", PreToolUse, Verdict{}, ""},
		{"pre deny is flat", PreToolUse, Verdict{Decision: Deny, Rule: "tests", Reason: "R"},
			`{"permissionDecision":"deny","permissionDecisionReason":"R"}`},
		{"pre deny needs a reason", PreToolUse, Verdict{Decision: Deny}, `{"permissionDecision":"deny","permissionDecisionReason":"miam: blocked"}`},
		{"pre ask", PreToolUse, Verdict{Decision: Ask, Reason: "R"}, `{"permissionDecision":"ask","permissionDecisionReason":"R"}`},
		{"pre context has no channel", PreToolUse, Verdict{Context: "C", Notice: "N"}, ""},
		{"post context", PostToolUse, Verdict{Context: "C"}, `{"additionalContext":"C"}`},
		{"post failure context", PostToolUseFailure, Verdict{Context: "C"}, `{"additionalContext":"C"}`},
		{"stop block", Stop, Verdict{Decision: Deny, Reason: "finish"}, `{"decision":"block","reason":"finish"}`},
		{"subagent stop block", SubagentStop, Verdict{Decision: Deny}, `{"decision":"block","reason":"miam: blocked"}`},
		{"session start context has no channel", SessionStart, Verdict{Context: "C"}, ""},
		{"html kept readable", PreToolUse, Verdict{Decision: Deny, Reason: "`a` < b"}, "{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"`a` < b\"}"},
	}
	runEncodeCases(t, EncodeCopilot, tests)
}

func FuzzDecodeCopilot(f *testing.F) {
	f.Add("preToolUse", []byte(`{"sessionId":"s","timestamp":1,"cwd":"/p","toolName":"bash","toolArgs":{"command":"rm -rf build"}}`))
	f.Add("preToolUse", []byte(`{"toolName":"create","toolArgs":"{\"path\":\"/p/a\",\"file_text\":\"x\"}"}`))
	f.Add("postToolUse", []byte(`{"toolName":"edit","toolArgs":{"path":"/p/a"},"toolResult":{"resultType":"success"}}`))
	f.Add("", []byte(`{"hookName":"permissionRequest","toolName":"bash","toolInput":{"command":"ls"}}`))
	f.Add("PreToolUse", []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}`))
	f.Fuzz(func(t *testing.T, event string, data []byte) {
		ev, answer, err := DecodeCopilot(event, data)
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("DecodeCopilot accepted invalid JSON %q", data)
		}
		checkDecoded(t, ev, answer)
	})
}
