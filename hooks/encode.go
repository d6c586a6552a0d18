package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Host names the agent host whose wire format a verdict is encoded in.
type Host string

// Hosts miam speaks to.
const (
	Claude   Host = "claude"
	Copilot  Host = "copilot"  // GitHub Copilot CLI, camelCase hooks (encode_copilot.go)
	Opencode Host = "opencode" // opencode, through miam-guard.js (encode_opencode.go)
)

// claudeOutput is Claude Code's hook stdout (camelCase, WIRE.md §1.6).
// Every field is omitempty: schema-invalid JSON is silently ignored by the
// host, which would fail open.
type claudeOutput struct {
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	SystemMessage      string          `json:"systemMessage,omitempty"`
	HookSpecificOutput *claudeSpecific `json:"hookSpecificOutput,omitempty"`
}

type claudeSpecific struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}

// EncodeClaude maps a verdict to Claude Code's stdout and exit code. A deny
// goes through JSON with exit 0, never exit 2: exit 2 shows the model our
// command line (FINDINGS.md §a). "No opinion" is empty stdout, exit 0.
func EncodeClaude(ev EventName, v Verdict) (stdout []byte, code int) {
	var out claudeOutput
	out.SystemMessage = v.Notice
	switch ev {
	case PreToolUse:
		s := &claudeSpecific{HookEventName: string(ev), AdditionalContext: v.Context}
		if v.Decision != None {
			s.PermissionDecision = v.Decision.String()
			s.PermissionDecisionReason = v.Reason
		}
		if *s != (claudeSpecific{HookEventName: string(ev)}) {
			out.HookSpecificOutput = s
		}
	case Stop, SubagentStop:
		if v.Decision == Deny {
			// Claude Code requires a reason with a block.
			out.Decision, out.Reason = "block", nonEmpty(v.Reason, "miam: blocked")
		}
	case SessionStart, UserPromptSubmit, PostToolUse, PostToolUseFailure:
		if v.Context != "" {
			out.HookSpecificOutput = &claudeSpecific{HookEventName: string(ev), AdditionalContext: v.Context}
		}
	}
	if out == (claudeOutput{}) {
		return nil, 0
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep < > & readable in what the model reads
	if err := enc.Encode(out); err != nil {
		// Unreachable with these field types; fail open rather than emit
		// half a protocol.
		return nil, 0
	}
	return b.Bytes(), 0
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Encode maps a verdict to the given host's wire format.
func Encode(h Host, ev EventName, v Verdict) ([]byte, int, error) {
	switch h {
	case Claude, "":
		b, code := EncodeClaude(ev, v)
		return b, code, nil
	case Copilot:
		b, code := EncodeCopilot(ev, v)
		return b, code, nil
	case Opencode:
		b, code := EncodeOpencode(ev, v)
		return b, code, nil
	}
	return nil, 0, fmt.Errorf("encode verdict: unknown host %q", h)
}
