package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// opencode has no command hooks: a plugin (.opencode/plugin/miam-guard.js,
// written by `miam install --host opencode`) runs inside opencode and hands
// miam-hook one of its hook calls as it received it, the shape of the
// captures in fixtures/hosts/opencode/1.18.33:
//
//	{"hook": "tool.execute.before", "input": {"tool", "sessionID", "callID"},
//	 "output": {"args": {…}}, "directory": "<project>"}
//
// and turns the answer into a throw (opencode-1.18.33/FINDINGS.md §b: the
// model receives exactly the thrown message).

// opencodePayload is what the plugin sends. Unknown fields are ignored.
type opencodePayload struct {
	Hook  string `json:"hook"`
	Input struct {
		Tool      string          `json:"tool"`
		SessionID string          `json:"sessionID"`
		CallID    string          `json:"callID"`
		Args      json.RawMessage `json:"args"` // tool.execute.after
	} `json:"input"`
	Output json.RawMessage `json:"output"`
	// Directory is the plugin's ctx.directory, the project root, where
	// opencode runs bash unless the call names a workdir.
	Directory string `json:"directory"`
}

// The opencode hooks miam-guard.js forwards, and the events they are.
var opencodeEvents = map[string]EventName{
	"tool.execute.before": PreToolUse,
	"tool.execute.after":  PostToolUse,
	"chat.message":        UserPromptSubmit,
}

// opencodeTools maps opencode 1.18.33's built-in tools (lowercase names,
// camelCase arguments; FINDINGS.md §a) onto Claude Code's.
var opencodeTools = map[string]hostTool{
	"bash":  {claude: "Bash"},
	"read":  {claude: "Read", rename: map[string]string{"filePath": "file_path"}},
	"write": {claude: "Write", rename: map[string]string{"filePath": "file_path"}},
	"edit": {claude: "Edit", rename: map[string]string{"filePath": "file_path", "oldString": "old_string",
		"newString": "new_string", "replaceAll": "replace_all"}},
	"glob":     {claude: "Glob"},
	"grep":     {claude: "Grep", rename: map[string]string{"include": "glob"}},
	"task":     {claude: "Agent"},
	"webfetch": {claude: "WebFetch"},
}

// DecodeOpencode reads one hook call forwarded by miam-guard.js. It fails
// only when the bytes are not a JSON object naming a hook; a hook it does not
// know decodes under its own name, which no rule acts on.
//
// opencode's tool hooks carry no agent id, so a subagent's calls (the task
// tool's child session) decode as the main agent's.
func DecodeOpencode(data []byte) (Event, error) {
	var p opencodePayload
	if err := json.Unmarshal(data, &p); err != nil {
		return Event{}, fmt.Errorf("decode opencode payload: %w", err)
	}
	if p.Hook == "" {
		return Event{}, fmt.Errorf("decode opencode payload: field hook is missing")
	}
	name, ok := opencodeEvents[p.Hook]
	if !ok {
		name = EventName(p.Hook)
	}
	ev := Event{Name: name, SessionID: p.Input.SessionID, ToolUseID: p.Input.CallID, Cwd: p.Directory}
	switch name {
	case PreToolUse:
		var out struct {
			Args json.RawMessage `json:"args"`
		}
		_ = json.Unmarshal(p.Output, &out) // a bad output leaves no args: no rule acts
		ev.Tool = opencodeTool(p.Input.Tool, out.Args, &ev)
	case PostToolUse:
		ev.Tool = opencodeTool(p.Input.Tool, p.Input.Args, &ev)
		ev.Response = p.Output
		if _, mcp := ev.Tool.Input.(*MCPInput); mcp {
			// An MCP tool's output is the raw MCP result (FINDINGS.md §a):
			// its content blocks are the tool_response Claude Code gives.
			var out struct {
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(p.Output, &out) == nil && len(out.Content) > 0 {
				ev.Response = out.Content
			}
		}
		var out struct {
			Output *string `json:"output"`
		}
		if ev.Tool.Name == "Bash" && json.Unmarshal(p.Output, &out) == nil && out.Output != nil {
			ev.Response = bashResponse(*out.Output)
		}
	case UserPromptSubmit:
		ev.ToolUseID = ""
		ev.Prompt = opencodePrompt(p.Output)
	}
	return ev, nil
}

// opencodeTool translates a tool call; bash's workdir becomes the event's
// cwd, where the command runs.
func opencodeTool(name string, args json.RawMessage, ev *Event) Tool {
	if name == "" {
		return Tool{}
	}
	if mcp, ok := opencodeMCPName(name); ok {
		return DecodeTool(mcp, args)
	}
	t := translateTool(name, args, opencodeTools)
	if name == "bash" {
		var in struct {
			Workdir string `json:"workdir"`
		}
		if json.Unmarshal(args, &in) == nil && in.Workdir != "" {
			if filepath.IsAbs(in.Workdir) || ev.Cwd == "" {
				ev.Cwd = in.Workdir
			} else {
				ev.Cwd = filepath.Join(ev.Cwd, in.Workdir)
			}
		}
	}
	return t
}

// miamTools are the MCP tools miam's server offers (delegate/tools).
var miamTools = []string{"deleguer", "suivre", "annuler", "etat", "exception"}

// opencodeMCPName gives miam's MCP tools their Claude Code name. opencode
// names an MCP tool `<server>_<tool>` (FINDINGS.md §f), which cannot be
// split in general, since both parts may hold underscores; miam's own tools
// are known, so `<server>_deleguer` is mcp__<server>__deleguer.
func opencodeMCPName(name string) (string, bool) {
	for _, tool := range miamTools {
		if server, ok := strings.CutSuffix(name, "_"+tool); ok && server != "" {
			return "mcp__" + server + "__" + tool, true
		}
	}
	return "", false
}

// opencodeNames gives miam's tools, in a verdict's text, the names the
// opencode model calls them by (opencodeMCPName's inverse): a ready
// `mcp__miam__deleguer {…}` call becomes `miam_deleguer {…}`, which it can
// copy. The words stay the same on every host; only the tool's name is the
// host's.
func opencodeNames(text string) string {
	if !strings.Contains(text, "mcp__") {
		return text
	}
	re := mcpToolName()
	return re.ReplaceAllStringFunc(text, func(m string) string {
		sub := re.FindStringSubmatch(m)
		return sub[1] + "_" + sub[2]
	})
}

// mcpToolName matches Claude Code's name of one of miam's MCP tools;
// compiled on first use, not in every hook process's start.
var mcpToolName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`mcp__([A-Za-z0-9_-]+?)__(` + strings.Join(miamTools, "|") + `)\b`)
})

// opencodePrompt is the text of a chat.message's parts.
func opencodePrompt(output json.RawMessage) string {
	var out struct {
		Parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"parts"`
	}
	if json.Unmarshal(output, &out) != nil {
		return ""
	}
	var texts []string
	for _, p := range out.Parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// opencodeOutput is miam-hook's answer to miam-guard.js. The plugin throws
// Reason on deny and on ask (a plugin cannot ask the user in opencode
// 1.18.33: there is no permission.ask hook), appends Context to a tool's
// output after it ran, and shows Notice to the user.
type opencodeOutput struct {
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Context  string `json:"context,omitempty"`
	Notice   string `json:"notice,omitempty"`
}

// EncodeOpencode maps a verdict to miam-guard.js's answer. "No opinion" is
// empty stdout; the exit code is always 0, the decision travels in JSON.
func EncodeOpencode(ev EventName, v Verdict) (stdout []byte, code int) {
	v.Reason, v.Context, v.Notice = opencodeNames(v.Reason), opencodeNames(v.Context), opencodeNames(v.Notice)
	out := opencodeOutput{Notice: v.Notice}
	switch ev {
	case PreToolUse:
		if v.Decision != None {
			out.Decision, out.Reason = v.Decision.String(), v.Reason
		}
		if v.Decision == Deny || v.Decision == Ask {
			// The model must read why: never throw an empty message.
			out.Reason = nonEmpty(v.Reason, "miam: blocked")
		}
		out.Context = v.Context
	case PostToolUse:
		out.Context = v.Context
	}
	return encodeJSON(out, out == opencodeOutput{})
}

// encodeJSON writes one JSON object and a newline, < > & kept readable for
// the model; empty gives no bytes at all.
func encodeJSON(v any, empty bool) ([]byte, int) {
	if empty {
		return nil, 0
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, 0 // unreachable with string fields; fail open rather than emit half a protocol
	}
	return b.Bytes(), 0
}
