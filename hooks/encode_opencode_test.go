package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/budgets"
)

// opencodeFixtures are payloads of the real opencode 1.18.33, as its capture
// plugin received them (opencode-1.18.33/captures, paths under <PROJ>).
const opencodeFixtures = "../fixtures/hosts/opencode/1.18.33"

// decoded is what a test compares of an Event: the fields the rules read.
type decoded struct {
	Name      EventName
	SessionID string
	ToolUseID string
	Cwd       string
	Tool      string
	Input     any
	Prompt    string
	Response  bool // a tool response is present
	Error     string
	Stop      bool // stop_hook_active
}

func project(ev Event) decoded {
	return decoded{Name: ev.Name, SessionID: ev.SessionID, ToolUseID: ev.ToolUseID, Cwd: ev.Cwd,
		Tool: ev.Tool.Name, Input: ev.Tool.Input, Prompt: ev.Prompt, Response: len(ev.Response) > 0,
		Error: ev.Error, Stop: ev.StopHookActive}
}

func readFixture(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDecodeOpencodeCaptures(t *testing.T) {
	const sid = "<SESSION_ID_1>"
	tests := []struct {
		file string
		want decoded
	}{
		{"s1_hooks_allow/001-chat.message.json", decoded{Name: UserPromptSubmit, SessionID: sid,
			Prompt: `"SCEN-S1: exercise bash, read, write, edit"`}},
		{"s1_hooks_allow/002-tool.execute.before-bash.json", decoded{Name: PreToolUse, SessionID: sid, ToolUseID: "call_000002_0",
			Tool: "Bash", Input: &BashInput{Command: "echo hello-from-bash && pwd"}}},
		{"s1_hooks_allow/003-tool.execute.after-bash.json", decoded{Name: PostToolUse, SessionID: sid, ToolUseID: "call_000002_0",
			Tool: "Bash", Input: &BashInput{Command: "echo hello-from-bash && pwd"}, Response: true}},
		{"s1_hooks_allow/004-tool.execute.before-read.json", decoded{Name: PreToolUse, SessionID: sid, ToolUseID: "call_000003_0",
			Tool: "Read", Input: &ReadInput{FilePath: "<PROJ>/build/keep.txt"}}},
		{"s1_hooks_allow/006-tool.execute.before-write.json", decoded{Name: PreToolUse, SessionID: sid, ToolUseID: "call_000004_0",
			Tool: "Write", Input: &WriteInput{FilePath: "<PROJ>/notes/new.txt", Content: "new file\n"}}},
		{"s1_hooks_allow/008-tool.execute.before-edit.json", decoded{Name: PreToolUse, SessionID: sid, ToolUseID: "call_000005_0",
			Tool: "Edit", Input: &EditInput{FilePath: "<PROJ>/notes/new.txt", OldString: "new file", NewString: "edited file"}}},
		{"s2_deny_throw/002-tool.execute.before-bash.json", decoded{Name: PreToolUse, SessionID: sid, ToolUseID: "call_000002_0",
			Tool: "Bash", Input: &BashInput{Command: "rm -rf build"}}},
		{"s2_deny_throw/003-tool.execute.before-write.json", decoded{Name: PreToolUse, SessionID: sid, ToolUseID: "call_000003_0",
			Tool: "Write", Input: &WriteInput{FilePath: "<PROJ>/tests/test_x.py", Content: "def test_x():\n    assert True\n"}}},
		{"s5_mcp/004-tool.execute.before-miam-stub_bout_status.json", decoded{Name: PreToolUse, SessionID: sid, ToolUseID: "call_000003_0",
			Tool: "miam-stub_bout_status"}},
		{"s8_subagent/002-tool.execute.before-task.json", decoded{Name: PreToolUse, SessionID: sid, ToolUseID: "call_000002_0",
			Tool: "Agent", Input: &AgentInput{Description: "Clean build", Prompt: "SUB-S8: remove the build directory", SubagentType: "general"}}},
		// The subagent's own call: another session, and no agent id to tell.
		{"s8_subagent/004-tool.execute.before-bash.json", decoded{Name: PreToolUse, SessionID: "<SESSION_ID_2>", ToolUseID: "call_000003_0",
			Tool: "Bash", Input: &BashInput{Command: "rm -rf build"}}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			ev, err := DecodeOpencode(readFixture(t, filepath.Join(opencodeFixtures, tc.file)))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, project(ev)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// Every captured payload decodes, names its event and translates every
// built-in tool it carries.
func TestDecodeOpencodeEveryCapture(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(opencodeFixtures, "*", "*.json"))
	if len(files) == 0 {
		t.Fatal("no opencode fixtures")
	}
	for _, f := range files {
		ev, err := DecodeOpencode(readFixture(t, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if ev.Name != PreToolUse && ev.Name != PostToolUse && ev.Name != UserPromptSubmit {
			t.Errorf("%s: event %q", f, ev.Name)
		}
		var p struct {
			Input struct{ Tool string } `json:"input"`
		}
		_ = json.Unmarshal(readFixture(t, f), &p)
		if _, builtin := opencodeTools[p.Input.Tool]; builtin && ev.Tool.Input == nil {
			t.Errorf("%s: %s decoded no input", f, p.Input.Tool)
		}
	}
}

// TestOpencodeDelegationSeen: the answer of miam's deleguer under opencode
// (the raw MCP result, {"content": [...]}) is read as Claude Code's: a
// success resets the write budget and counts a delegation.
func TestOpencodeDelegationSeen(t *testing.T) {
	answer, _ := json.Marshal(`{"ok":true,"demande_id":"d1","fin":"valide","sortie":"src/a.py","diff":{"files":["src/a.py"],"added":3}}`)
	payload := `{"hook":"tool.execute.after","input":{"tool":"miam_deleguer","sessionID":"s","callID":"c1","args":{"consigne":"c"}},` +
		`"output":{"content":[{"type":"text","text":` + string(answer) + `}]}}`
	ev, err := DecodeOpencode([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	if !isDelegation(ev.Tool) || !delegationOK(ev.Response) {
		t.Fatalf("not seen as a successful delegation: tool %+v, response %s", ev.Tool, ev.Response)
	}
	st := budgets.Fresh("s")
	st.Turn, st.TurnOpen, st.SinceDelegation = 1, true, 25
	_, next := Decide(ev, st, Env{Project: "/p"})
	if next.SinceDelegation != 0 || next.ThisTurn.Delegations != 1 {
		t.Errorf("since_delegation %d, delegations %d: want 0 and 1", next.SinceDelegation, next.ThisTurn.Delegations)
	}
}

func TestDecodeOpencode(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		want    decoded
		err     string
	}{
		{"bash workdir is the cwd", `{"hook":"tool.execute.before","input":{"tool":"bash","callID":"c"},"output":{"args":{"command":"ls","workdir":"sub"}},"directory":"/p"}`,
			decoded{Name: PreToolUse, ToolUseID: "c", Cwd: "/p/sub", Tool: "Bash", Input: &BashInput{Command: "ls"}}, ""},
		{"absolute workdir", `{"hook":"tool.execute.before","input":{"tool":"bash"},"output":{"args":{"command":"ls","workdir":"/q"}},"directory":"/p"}`,
			decoded{Name: PreToolUse, Cwd: "/q", Tool: "Bash", Input: &BashInput{Command: "ls"}}, ""},
		{"grep include is the glob", `{"hook":"tool.execute.before","input":{"tool":"grep"},"output":{"args":{"pattern":"KEY","include":"*.env"}}}`,
			decoded{Name: PreToolUse, Tool: "Grep", Input: &GrepInput{Pattern: "KEY", Glob: "*.env"}}, ""},
		{"edit replaceAll", `{"hook":"tool.execute.before","input":{"tool":"edit"},"output":{"args":{"filePath":"/p/a","oldString":"a","newString":"b","replaceAll":true}}}`,
			decoded{Name: PreToolUse, Tool: "Edit", Input: &EditInput{FilePath: "/p/a", OldString: "a", NewString: "b", ReplaceAll: true}}, ""},
		{"a Claude key wins over its renamed twin", `{"hook":"tool.execute.before","input":{"tool":"read"},"output":{"args":{"filePath":"/x","file_path":"/y"}}}`,
			decoded{Name: PreToolUse, Tool: "Read", Input: &ReadInput{FilePath: "/y"}}, ""},
		{"args of the wrong shape", `{"hook":"tool.execute.before","input":{"tool":"write"},"output":{"args":{"filePath":7}}}`,
			decoded{Name: PreToolUse, Tool: "Write"}, ""},
		{"args not an object", `{"hook":"tool.execute.before","input":{"tool":"bash"},"output":{"args":"rm -rf /"}}`,
			decoded{Name: PreToolUse, Tool: "Bash"}, ""},
		{"miam's MCP tool gets its Claude name", `{"hook":"tool.execute.before","input":{"tool":"miam_deleguer"},"output":{"args":{"consigne":"c"}}}`,
			decoded{Name: PreToolUse, Tool: "mcp__miam__deleguer", Input: &MCPInput{Server: "miam", Tool: "deleguer", Arguments: json.RawMessage(`{"consigne":"c"}`)}}, ""},
		{"a server name with an underscore", `{"hook":"tool.execute.after","input":{"tool":"my_miam_suivre","args":{}},"output":{}}`,
			decoded{Name: PostToolUse, Tool: "mcp__my_miam__suivre", Input: &MCPInput{Server: "my_miam", Tool: "suivre", Arguments: json.RawMessage(`{}`)}, Response: true}, ""},
		{"another server's tool is left alone", `{"hook":"tool.execute.before","input":{"tool":"github_create_issue"},"output":{"args":{}}}`,
			decoded{Name: PreToolUse, Tool: "github_create_issue"}, ""},
		{"unknown hook keeps its name", `{"hook":"permission.ask","input":{}}`, decoded{Name: "permission.ask"}, ""},
		{"no hook", `{"input":{"tool":"bash"}}`, decoded{}, "field hook is missing"},
		{"not JSON", `tool.execute.before`, decoded{}, "decode opencode payload"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := DecodeOpencode([]byte(tc.payload))
			wantDecoded(t, ev, err, tc.want, tc.err)
		})
	}
}

// A bash output reaches the rules where Claude Code puts it: stdout.
func TestDecodeOpencodeBashOutput(t *testing.T) {
	ev, err := DecodeOpencode(readFixture(t, filepath.Join(opencodeFixtures, "s1_hooks_allow/003-tool.execute.after-bash.json")))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff("hello-from-bash\n<PROJ>\n", stdout(t, ev.Response)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	ev, _ = DecodeOpencode(readFixture(t, filepath.Join(opencodeFixtures, "s1_hooks_allow/007-tool.execute.after-write.json")))
	if !strings.Contains(string(ev.Response), "Wrote file successfully.") {
		t.Errorf("write output not kept as sent: %s", ev.Response)
	}
}

func stdout(t *testing.T, resp json.RawMessage) string {
	t.Helper()
	var r struct{ Stdout string }
	if err := json.Unmarshal(resp, &r); err != nil {
		t.Fatalf("response %s: %v", resp, err)
	}
	return r.Stdout
}

func TestEncodeOpencode(t *testing.T) {
	tests := []encodeCase{
		{"no opinion is empty", PreToolUse, Verdict{}, ""},
		{"pre deny", PreToolUse, Verdict{Decision: Deny, Rule: "tests", Reason: "R"}, `{"decision":"deny","reason":"R"}`},
		{"pre deny needs a reason", PreToolUse, Verdict{Decision: Deny}, `{"decision":"deny","reason":"miam: blocked"}`},
		{"pre ask", PreToolUse, Verdict{Decision: Ask, Reason: "R"}, `{"decision":"ask","reason":"R"}`},
		{"pre context and notice", PreToolUse, Verdict{Context: "C", Notice: "N"}, `{"context":"C","notice":"N"}`},
		{"post context", PostToolUse, Verdict{Context: "C"}, `{"context":"C"}`},
		{"prompt context has no channel", UserPromptSubmit, Verdict{Context: "C"}, ""},
		{"notice anywhere", UserPromptSubmit, Verdict{Notice: "N"}, `{"notice":"N"}`},
		{"stop cannot block", Stop, Verdict{Decision: Deny, Reason: "R"}, ""},
		{"html kept readable", PreToolUse, Verdict{Decision: Deny, Reason: "a < b && c > d"}, `{"decision":"deny","reason":"a < b && c > d"}`},
	}
	runEncodeCases(t, EncodeOpencode, tests)
}

// TestSameDenyEveryHost: the captured `rm -rf build` of each host, decided
// by the one Decide, reads the same words in each host's answer.
func TestSameDenyEveryHost(t *testing.T) {
	proj := t.TempDir()
	env := Env{Project: proj, Files: os.DirFS(proj)}
	payload := func(path string) []byte {
		return []byte(strings.ReplaceAll(string(readFixture(t, path)), "<PROJ>", proj))
	}
	claude := []byte(`{"session_id":"s","cwd":"` + proj + `","hook_event_name":"PreToolUse","tool_name":"Bash",` +
		`"tool_input":{"command":"rm -rf build","description":"Clean"},"tool_use_id":"toolu_1"}`)
	cases := []struct {
		host   Host
		event  string
		data   []byte
		answer Host
		reason func(out []byte) string
	}{
		{Claude, "", claude, Claude, func(out []byte) string {
			var v struct {
				HookSpecificOutput struct{ PermissionDecisionReason string }
			}
			_ = json.Unmarshal(out, &v)
			return v.HookSpecificOutput.PermissionDecisionReason
		}},
		{Copilot, "preToolUse", payload(filepath.Join(copilotFixtures, "a_allow_baseline/003-preToolUse-bash.json")), Copilot, func(out []byte) string {
			var v struct{ PermissionDecision, PermissionDecisionReason string }
			_ = json.Unmarshal(out, &v)
			if v.PermissionDecision != "deny" {
				return ""
			}
			return v.PermissionDecisionReason
		}},
		{Copilot, "PreToolUse", payload(filepath.Join(copilotFixtures, "f_pascal_claude_output/001-PreToolUse-Bash.json")), Claude, func(out []byte) string {
			var v struct {
				HookSpecificOutput struct{ PermissionDecisionReason string }
			}
			_ = json.Unmarshal(out, &v)
			return v.HookSpecificOutput.PermissionDecisionReason
		}},
		{Opencode, "", payload(filepath.Join(opencodeFixtures, "s2_deny_throw/002-tool.execute.before-bash.json")), Opencode, func(out []byte) string {
			var v struct{ Decision, Reason string }
			_ = json.Unmarshal(out, &v)
			if v.Decision != "deny" {
				return ""
			}
			return v.Reason
		}},
	}
	var words string
	for _, c := range cases {
		ev, answer, err := DecodeHost(c.host, c.event, c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.host, err)
		}
		if answer != c.answer {
			t.Errorf("%s %s: answered as %s, want %s", c.host, c.event, answer, c.answer)
		}
		v, _ := Decide(ev, budgets.State{}, env)
		out, code, err := Encode(answer, ev.Name, v)
		if err != nil || code != 0 {
			t.Fatalf("%s: encode: %v, exit %d", c.host, err, code)
		}
		got := c.reason(out)
		if got == "" {
			t.Errorf("%s %s: no deny in %s", c.host, c.event, out)
			continue
		}
		if words == "" {
			words = got
			if !strings.Contains(words, "rm -r (recursive deletion)") {
				t.Errorf("unexpected deny words: %s", words)
			}
		} else if got != words {
			t.Errorf("%s %s reads other words:\n got: %s\nwant: %s", c.host, c.event, got, words)
		}
	}
}

func FuzzDecodeOpencode(f *testing.F) {
	f.Add([]byte(`{"hook":"tool.execute.before","input":{"tool":"bash","sessionID":"s","callID":"c"},"output":{"args":{"command":"rm -rf build"}},"directory":"/p"}`))
	f.Add([]byte(`{"hook":"tool.execute.after","input":{"tool":"edit","args":{"filePath":"/p/a","oldString":"a","newString":"b"}},"output":{"output":"ok"}}`))
	f.Add([]byte(`{"hook":"chat.message","input":{},"output":{"parts":[{"type":"text","text":"hi"}]}}`))
	f.Add([]byte(`{"hook":"tool.execute.before","input":{"tool":"grep"},"output":{"args":{"include":"*","glob":"x"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := DecodeOpencode(data)
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("DecodeOpencode accepted invalid JSON %q", data)
		}
		checkDecoded(t, ev, Opencode)
	})
}

// wantDecoded checks a decoder's result: an error holding wantErr when it
// is set, else ev's projection equal to want.
func wantDecoded(t *testing.T, ev Event, err error, want decoded, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err %v, want one with %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, project(ev)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// checkDecoded asserts what every decoder owes: the event can be decided
// and answered, and garbage never yields allow.
func checkDecoded(t *testing.T, ev Event, h Host) {
	t.Helper()
	_ = ev.Tool.Path()
	_ = NeedsState(ev)
	v, _ := Decide(ev, budgets.State{}, Env{})
	if v.Decision == Allow {
		t.Fatalf("decoded payload yields allow: %+v", ev)
	}
	out, code, err := Encode(h, ev.Name, v)
	if err != nil || code != 0 || (len(out) > 0 && !json.Valid(out)) {
		t.Fatalf("answer %q, exit %d, err %v", out, code, err)
	}
}

// TestOpencodeReadyCallNames: the ready deleguer call of a deny names the
// tool as the opencode model calls it; the rest of the words are the same.
func TestOpencodeReadyCallNames(t *testing.T) {
	v := Verdict{Decision: Deny, Rule: RuleWriteBudget, Reason: "miam rule 2 (write budget): …\n" +
		`Delegate it instead: mcp__miam__deleguer {"consigne": "…"}` + "\nor open an exception: mcp__miam__exception {…}; mcp__github__create_issue stays."}
	out, _ := EncodeOpencode(PreToolUse, v)
	var got struct {
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := "miam rule 2 (write budget): …\n" + `Delegate it instead: miam_deleguer {"consigne": "…"}` +
		"\nor open an exception: miam_exception {…}; mcp__github__create_issue stays."
	if got.Reason != want {
		t.Errorf("reason\n%s\nwant\n%s", got.Reason, want)
	}
}
