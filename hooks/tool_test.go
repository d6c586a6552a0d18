package hooks

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeTool(t *testing.T) {
	bg := true
	tests := []struct {
		name  string
		tool  string
		input string
		want  any
	}{
		{"write", "Write", `{"file_path":"/p/a.py","content":"x\n"}`, &WriteInput{FilePath: "/p/a.py", Content: "x\n"}},
		{"edit replace_all", "Edit", `{"file_path":"/p/a.py","old_string":"a","new_string":"b","replace_all":true}`,
			&EditInput{FilePath: "/p/a.py", OldString: "a", NewString: "b", ReplaceAll: true}},
		{"multiedit", "MultiEdit", `{"file_path":"/p/a.py","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d","replace_all":true}]}`,
			&MultiEditInput{FilePath: "/p/a.py", Edits: []EditStep{{OldString: "a", NewString: "b"}, {OldString: "c", NewString: "d", ReplaceAll: true}}}},
		{"notebook", "NotebookEdit", `{"notebook_path":"/p/n.ipynb","cell_id":"c1","new_source":"x=1","edit_mode":"insert"}`,
			&NotebookEditInput{NotebookPath: "/p/n.ipynb", CellID: "c1", NewSource: "x=1", EditMode: "insert"}},
		{"bash background", "Bash", `{"command":"sleep 1","description":"d","run_in_background":true}`,
			&BashInput{Command: "sleep 1", Description: "d", RunInBackground: true}},
		{"read", "Read", `{"file_path":"/p/a.py","offset":10,"limit":20}`, &ReadInput{FilePath: "/p/a.py", Offset: 10, Limit: 20}},
		{"grep", "Grep", `{"pattern":"foo","path":"src","output_mode":"content"}`, &GrepInput{Pattern: "foo", Path: "src", OutputMode: "content"}},
		{"glob", "Glob", `{"pattern":"**/*.go"}`, &GlobInput{Pattern: "**/*.go"}},
		{"agent", "Agent", `{"description":"d","prompt":"p","subagent_type":"general-purpose","run_in_background":true}`,
			&AgentInput{Description: "d", Prompt: "p", SubagentType: "general-purpose", RunInBackground: &bg}},
		{"mcp project", "mcp__miam__deleguer", `{"consigne":"c"}`, &MCPInput{Server: "miam", Tool: "deleguer", Arguments: json.RawMessage(`{"consigne":"c"}`)}},
		{"mcp plugin", "mcp__plugin_miam_miam__suivre", `{}`, &MCPInput{Plugin: "miam", Server: "miam", Tool: "suivre", Arguments: json.RawMessage(`{}`)}},
		{"mcp server with underscores", "mcp__my_server__do_it", `{}`, &MCPInput{Server: "my_server", Tool: "do_it", Arguments: json.RawMessage(`{}`)}},
		{"unknown fields tolerated", "Write", `{"file_path":"/p/a","content":"c","new_field":[1]}`, &WriteInput{FilePath: "/p/a", Content: "c"}},
		{"wrong shape", "Write", `{"file_path":3}`, nil},
		{"not an object", "Edit", `"x"`, nil},
		{"unread tool", "WebFetch", `{"url":"x"}`, nil},
		{"bad mcp name", "mcp__nope", `{}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DecodeTool(tc.tool, json.RawMessage(tc.input)).Input
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("DecodeTool(%s) (-want +got):\n%s", tc.tool, d)
			}
		})
	}
}

func TestDecodeEvent(t *testing.T) {
	in := `{"session_id":"s","transcript_path":"/h/t.jsonl","cwd":"/p/sub","prompt_id":"pr","permission_mode":"default",
	"hook_event_name":"PreToolUse","effort":{"level":"medium"},"agent_id":"a1","agent_type":"general-purpose",
	"tool_name":"Write","tool_input":{"file_path":"/p/x.py","content":"c"},"tool_use_id":"toolu_1","mcp_server":{"name":"miam"}}`
	ev, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Event{
		Name: PreToolUse, SessionID: "s", TranscriptPath: "/h/t.jsonl", Cwd: "/p/sub", PromptID: "pr", PermissionMode: "default",
		AgentID: "a1", AgentType: "general-purpose", ToolUseID: "toolu_1",
		Tool: Tool{Name: "Write", Input: &WriteInput{FilePath: "/p/x.py", Content: "c"}, Raw: json.RawMessage(`{"file_path":"/p/x.py","content":"c"}`)},
	}
	if d := cmp.Diff(want, ev); d != "" {
		t.Errorf("Decode (-want +got):\n%s", d)
	}
	if !ev.Subagent() {
		t.Error("an event with agent_id is a subagent's")
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, in := range []string{``, `[]`, `{}`, `{"hook_event_name":""}`, `nope`} {
		if _, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) succeeded", in)
		}
	}
}

func TestDelegationOK(t *testing.T) {
	tests := []struct {
		name string
		resp string
		want bool
	}{
		{"structured string", `"{\"ok\":true,\"verdict\":\"valide\"}"`, true},
		{"object", `{"ok":true}`, true},
		{"text blocks", `[{"type":"text","text":"{\"ok\": true}"}]`, true},
		{"second block", `[{"type":"text","text":"hello"},{"type":"text","text":"{\"ok\":true}"}]`, true},
		{"ok false", `"{\"ok\":false}"`, false},
		{"ok null", `"{\"ok\":null}"`, false},
		{"no ok", `{"verdict":"valide"}`, false},
		{"plain text", `"done"`, false},
		{"garbage", `[1,2`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := delegationOK(json.RawMessage(tc.resp)); got != tc.want {
				t.Errorf("delegationOK(%s) = %v, want %v", tc.resp, got, tc.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/a","content":"x"}}`))
	f.Add([]byte(`{"hook_event_name":"PostToolUse","tool_name":"mcp__plugin_a_b__c","tool_response":"{}"}`))
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_name":"MultiEdit","tool_input":{"edits":[{}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := Decode(data)
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Decode accepted invalid JSON %q", data)
		}
		_ = ev.Tool.Path()
		_ = NeedsState(ev)
	})
}
