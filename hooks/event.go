package hooks

import (
	"encoding/json"
	"fmt"
	"strings"
)

// EventName is the host-neutral name of a hook event. The values are Claude
// Code's event names, which the other hosts' names are mapped onto.
type EventName string

// The events Claude Code 2.1.328 emits (FINDINGS.md, event table). Any other
// name decodes fine and gets no opinion.
const (
	SessionStart       EventName = "SessionStart"
	SessionEnd         EventName = "SessionEnd"
	InstructionsLoaded EventName = "InstructionsLoaded"
	UserPromptSubmit   EventName = "UserPromptSubmit"
	PreToolUse         EventName = "PreToolUse"
	PermissionRequest  EventName = "PermissionRequest"
	PostToolUse        EventName = "PostToolUse"
	PostToolUseFailure EventName = "PostToolUseFailure"
	PostToolBatch      EventName = "PostToolBatch"
	MessageDisplay     EventName = "MessageDisplay"
	Stop               EventName = "Stop"
	SubagentStart      EventName = "SubagentStart"
	SubagentStop       EventName = "SubagentStop"
	PreCompact         EventName = "PreCompact"
	PostCompact        EventName = "PostCompact"
	CwdChanged         EventName = "CwdChanged"
	Notification       EventName = "Notification"
)

// Event is one hook call, decoded from the host's payload. Fields a given
// event does not carry are zero.
type Event struct {
	Name           EventName
	SessionID      string
	TranscriptPath string
	Cwd            string // follows `cd`: never used to locate the project
	PromptID       string
	PermissionMode string

	// AgentID is set only inside a subagent; the main agent has none.
	AgentID   string
	AgentType string

	// Tool events.
	Tool      Tool
	ToolUseID string
	// Response is tool_response as sent: an object for built-in tools, a
	// string holding compact JSON for MCP tools with structured content, or an
	// MCP content array.
	Response json.RawMessage
	Error    string // PostToolUseFailure
	// Interrupted is a PostToolUseFailure of a call the user interrupted.
	Interrupted bool

	Prompt               string // UserPromptSubmit
	Source               string // SessionStart
	Reason               string // SessionEnd
	StopHookActive       bool   // Stop, SubagentStop
	LastAssistantMessage string // Stop, SubagentStop
}

// Subagent reports whether the call comes from a subagent rather than the
// main agent.
func (e Event) Subagent() bool { return e.AgentID != "" }

// IsTaskNotification reports whether a UserPromptSubmit is Claude Code waking
// the model for a finished background task rather than a human prompt.
func (e Event) IsTaskNotification() bool {
	return strings.HasPrefix(strings.TrimSpace(e.Prompt), "<task-notification>")
}

// payload mirrors Claude Code's stdin JSON (snake_case). Unknown fields are
// ignored: new ones appear with every release.
type payload struct {
	SessionID            string          `json:"session_id"`
	TranscriptPath       string          `json:"transcript_path"`
	Cwd                  string          `json:"cwd"`
	PromptID             string          `json:"prompt_id"`
	PermissionMode       string          `json:"permission_mode"`
	HookEventName        string          `json:"hook_event_name"`
	AgentID              string          `json:"agent_id"`
	AgentType            string          `json:"agent_type"`
	ToolName             string          `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	ToolUseID            string          `json:"tool_use_id"`
	ToolResponse         json.RawMessage `json:"tool_response"`
	Error                string          `json:"error"`
	IsInterrupt          bool            `json:"is_interrupt"`
	Prompt               string          `json:"prompt"`
	Source               string          `json:"source"`
	Reason               string          `json:"reason"`
	StopHookActive       bool            `json:"stop_hook_active"`
	LastAssistantMessage string          `json:"last_assistant_message"`
}

// Decode reads one Claude Code hook payload. It fails only when the bytes are
// not a JSON object naming an event; a tool input that does not match its
// tool's shape leaves Tool.Input nil, which no rule acts on.
func Decode(data []byte) (Event, error) {
	var p payload
	if err := json.Unmarshal(data, &p); err != nil {
		return Event{}, fmt.Errorf("decode hook payload: %w", err)
	}
	if p.HookEventName == "" {
		return Event{}, fmt.Errorf("decode hook payload: field hook_event_name is missing")
	}
	ev := Event{
		Name:                 EventName(p.HookEventName),
		SessionID:            p.SessionID,
		TranscriptPath:       p.TranscriptPath,
		Cwd:                  p.Cwd,
		PromptID:             p.PromptID,
		PermissionMode:       p.PermissionMode,
		AgentID:              p.AgentID,
		AgentType:            p.AgentType,
		ToolUseID:            p.ToolUseID,
		Response:             p.ToolResponse,
		Error:                p.Error,
		Interrupted:          p.IsInterrupt,
		Prompt:               p.Prompt,
		Source:               p.Source,
		Reason:               p.Reason,
		StopHookActive:       p.StopHookActive,
		LastAssistantMessage: p.LastAssistantMessage,
	}
	if p.ToolName != "" {
		ev.Tool = DecodeTool(p.ToolName, p.ToolInput)
	}
	return ev, nil
}
