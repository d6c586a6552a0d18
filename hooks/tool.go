package hooks

import (
	"encoding/json"
	"strings"
)

// Tool is a tool call's name and its decoded input.
type Tool struct {
	Name string // as the host sent it, e.g. "Write" or "mcp__miam__deleguer"
	// Input is one of the *…Input types below, or nil for tools no rule
	// reads and for inputs that do not match their tool's shape.
	Input any
	// Raw is the input as sent, for rules and traces that need it whole.
	Raw json.RawMessage
}

// WriteInput is the input of Write.
type WriteInput struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

// EditInput is the input of Edit.
type EditInput struct {
	FilePath   string `json:"file_path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// MultiEditInput is the input of MultiEdit: edits applied in order.
type MultiEditInput struct {
	FilePath string     `json:"file_path"`
	Edits    []EditStep `json:"edits"`
}

// EditStep is one edit of a MultiEdit.
type EditStep struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// NotebookEditInput is the input of NotebookEdit.
type NotebookEditInput struct {
	NotebookPath string `json:"notebook_path"`
	CellID       string `json:"cell_id"`
	NewSource    string `json:"new_source"`
	CellType     string `json:"cell_type"`
	EditMode     string `json:"edit_mode"` // replace (default), insert, delete
}

// BashInput is the input of Bash.
type BashInput struct {
	Command         string `json:"command"`
	Description     string `json:"description"`
	Timeout         int    `json:"timeout"`
	RunInBackground bool   `json:"run_in_background"`
}

// ReadInput is the input of Read.
type ReadInput struct {
	FilePath string `json:"file_path"`
	Offset   int    `json:"offset"`
	Limit    int    `json:"limit"`
}

// GrepInput is the input of Grep.
type GrepInput struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	OutputMode string `json:"output_mode"`
	Type       string `json:"type"`
}

// GlobInput is the input of Glob.
type GlobInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

// AgentInput is the input of Agent (formerly Task), which starts a subagent.
type AgentInput struct {
	Description     string `json:"description"`
	Prompt          string `json:"prompt"`
	SubagentType    string `json:"subagent_type"`
	Model           string `json:"model"`
	RunInBackground *bool  `json:"run_in_background"` // nil: the host's default (background)
}

// MCPInput is a call to an MCP tool, named `mcp__<server>__<tool>` or, for a
// server shipped in a plugin, `mcp__plugin_<plugin>_<server>__<tool>`.
type MCPInput struct {
	Plugin    string // empty unless plugin-scoped
	Server    string
	Tool      string
	Arguments json.RawMessage
}

// DecodeTool decodes a tool input by tool name. It never fails: an input
// that does not match leaves Input nil.
func DecodeTool(name string, raw json.RawMessage) Tool {
	t := Tool{Name: name, Raw: raw}
	var in any
	switch name {
	case "Write":
		in = new(WriteInput)
	case "Edit":
		in = new(EditInput)
	case "MultiEdit":
		in = new(MultiEditInput)
	case "NotebookEdit":
		in = new(NotebookEditInput)
	case "Bash":
		in = new(BashInput)
	case "Read":
		in = new(ReadInput)
	case "Grep":
		in = new(GrepInput)
	case "Glob":
		in = new(GlobInput)
	case "Agent", "Task":
		in = new(AgentInput)
	default:
		if m, ok := ParseMCPName(name); ok {
			m.Arguments = raw
			t.Input = &m
		}
		return t
	}
	if len(raw) == 0 || json.Unmarshal(raw, in) != nil {
		return t
	}
	t.Input = in
	return t
}

// ParseMCPName splits an MCP tool name. Server names may contain single
// underscores, so the tool is what follows the last "__".
func ParseMCPName(name string) (MCPInput, bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return MCPInput{}, false
	}
	i := strings.LastIndex(rest, "__")
	if i <= 0 || i+2 >= len(rest) {
		return MCPInput{}, false
	}
	m := MCPInput{Server: rest[:i], Tool: rest[i+2:]}
	if p, ok := strings.CutPrefix(m.Server, "plugin_"); ok {
		// plugin_<plugin>_<server>: a plugin name has no underscore in
		// practice, so the first one separates plugin from server.
		if j := strings.IndexByte(p, '_'); j > 0 && j+1 < len(p) {
			m.Plugin, m.Server = p[:j], p[j+1:]
		}
	}
	return m, true
}

// Path returns the file a file tool acts on, or "".
func (t Tool) Path() string {
	switch in := t.Input.(type) {
	case *WriteInput:
		return in.FilePath
	case *EditInput:
		return in.FilePath
	case *MultiEditInput:
		return in.FilePath
	case *NotebookEditInput:
		return in.NotebookPath
	case *ReadInput:
		return in.FilePath
	}
	return ""
}
