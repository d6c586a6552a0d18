package hooks

import (
	"encoding/json"
	"fmt"
)

// GitHub Copilot CLI runs command hooks registered in .github/hooks/*.json
// (WIRE.md §3.1; hosts-cli/FINDINGS.md §3, observed on 1.0.102). Under the
// camelCase event names `miam install --host copilot` registers, the payload
// is camelCase and does not name its event, so the registration passes it
// on the command line (`miam-hook --host copilot preToolUse`), and the
// answer is flat: {"permissionDecision": "deny", "permissionDecisionReason":
// R}, which the model reads as "Denied by preToolUse hook: R".

// copilotEvents maps Copilot CLI's camelCase events onto the host-neutral
// names. Others decode under their own name and get no opinion.
var copilotEvents = map[string]EventName{
	"sessionStart":        SessionStart,
	"sessionEnd":          SessionEnd,
	"userPromptSubmitted": UserPromptSubmit,
	"preToolUse":          PreToolUse,
	"postToolUse":         PostToolUse,
	"postToolUseFailure":  PostToolUseFailure,
	"permissionRequest":   PermissionRequest,
	"agentStop":           Stop,
	"subagentStart":       SubagentStart,
	"subagentStop":        SubagentStop,
	"preCompact":          PreCompact,
	"notification":        Notification,
}

// copilotTools maps Copilot CLI's runtime tools onto Claude Code's, as
// Copilot itself does for PascalCase hooks (WIRE.md §3.1's table). bash,
// create and edit are observed; the argument names of view, grep and glob
// are inferred from them.
var copilotTools = map[string]hostTool{
	"bash":   {claude: "Bash"},
	"create": {claude: "Write", rename: map[string]string{"path": "file_path", "file_text": "content"}},
	"edit":   {claude: "Edit", rename: map[string]string{"path": "file_path", "old_str": "old_string", "new_str": "new_string"}},
	"view":   {claude: "Read", rename: map[string]string{"path": "file_path"}},
	"grep":   {claude: "Grep"},
	"glob":   {claude: "Glob"},
	"task":   {claude: "Agent"},
}

// copilotPayload is Copilot CLI's camelCase stdin. Unknown fields are
// ignored. stop_hook_active is snake_case in the captures.
type copilotPayload struct {
	HookEventName  string          `json:"hook_event_name"` // set only by PascalCase hooks
	HookName       string          `json:"hookName"`        // permissionRequest
	SessionID      string          `json:"sessionId"`
	Cwd            string          `json:"cwd"`
	ToolName       string          `json:"toolName"`
	ToolArgs       json.RawMessage `json:"toolArgs"`
	ToolInput      json.RawMessage `json:"toolInput"` // permissionRequest
	ToolResult     json.RawMessage `json:"toolResult"`
	Error          json.RawMessage `json:"error"`
	Prompt         string          `json:"prompt"`
	Source         string          `json:"source"`
	Reason         string          `json:"reason"`
	TranscriptPath string          `json:"transcriptPath"`
	StopHookActive bool            `json:"stop_hook_active"`
	AgentID        string          `json:"agentId"`
	AgentType      string          `json:"agentType"`
	Response       string          `json:"response"` // subagentStop
}

// DecodeCopilot reads one Copilot CLI hook payload. event is the camelCase
// event named on the hook's command line; a permissionRequest payload names
// itself. A PascalCase payload (hook_event_name set) is Claude Code's wire,
// decoded and answered as Claude (Copilot reads Claude's nested deny there).
func DecodeCopilot(event string, data []byte) (Event, Host, error) {
	var p copilotPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return Event{}, Copilot, fmt.Errorf("decode copilot payload: %w", err)
	}
	if p.HookEventName != "" {
		ev, err := Decode(data)
		return ev, Claude, err
	}
	if p.HookName != "" {
		event = p.HookName
	}
	if event == "" {
		return Event{}, Copilot, fmt.Errorf("decode copilot payload: no event named (register the hook as `miam-hook --host copilot <event>`)")
	}
	name, ok := copilotEvents[event]
	if !ok {
		name = EventName(event)
	}
	ev := Event{
		Name:                 name,
		SessionID:            p.SessionID,
		TranscriptPath:       p.TranscriptPath,
		Cwd:                  p.Cwd,
		AgentID:              p.AgentID,
		AgentType:            p.AgentType,
		Response:             p.ToolResult,
		Error:                copilotError(p.Error),
		Prompt:               p.Prompt,
		Source:               p.Source,
		Reason:               p.Reason,
		StopHookActive:       p.StopHookActive,
		LastAssistantMessage: p.Response,
	}
	if p.ToolName != "" {
		args := p.ToolArgs
		if len(args) == 0 {
			args = p.ToolInput
		}
		ev.Tool = translateTool(p.ToolName, unquoteJSON(args), copilotTools)
		var res struct {
			Text *string `json:"textResultForLlm"`
		}
		if ev.Tool.Name == "Bash" && json.Unmarshal(p.ToolResult, &res) == nil && res.Text != nil {
			ev.Response = bashResponse(*res.Text)
		}
	}
	return ev, Copilot, nil
}

// unquoteJSON returns the JSON a string holds when raw is a JSON string:
// the hooks reference shows toolArgs as a string of JSON, 1.0.102 sends an
// object.
func unquoteJSON(raw json.RawMessage) json.RawMessage {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return raw
}

// copilotError reads postToolUseFailure's error, a string or an object with
// a message.
func copilotError(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return obj.Message
	}
	return ""
}

// copilotOutput is Copilot CLI's stdout for camelCase hooks (WIRE.md §3.1):
// flat, never Claude's hookSpecificOutput, which camelCase hooks ignore
// (hosts-cli/FINDINGS.md, l_combined_json_claude_plus_decision).
type copilotOutput struct {
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	Decision                 string `json:"decision,omitempty"`
	Reason                   string `json:"reason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}

// EncodeCopilot maps a verdict to Copilot CLI's stdout and exit code. A
// deny goes through JSON with exit 0: Copilot denies on any non-zero exit
// but drops exit 2's stderr, so the model would not read why. Copilot has
// no channel for notices or for context before a tool runs; they are
// dropped.
func EncodeCopilot(ev EventName, v Verdict) (stdout []byte, code int) {
	var out copilotOutput
	switch ev {
	case PreToolUse:
		if v.Decision != None {
			out.PermissionDecision, out.PermissionDecisionReason = v.Decision.String(), v.Reason
		}
		if v.Decision == Deny || v.Decision == Ask {
			out.PermissionDecisionReason = nonEmpty(v.Reason, "miam: blocked")
		}
	case PostToolUse, PostToolUseFailure:
		out.AdditionalContext = v.Context
	case Stop, SubagentStop:
		if v.Decision == Deny {
			out.Decision, out.Reason = "block", nonEmpty(v.Reason, "miam: blocked")
		}
	}
	return encodeJSON(out, out == copilotOutput{})
}
