package hooks

import (
	"encoding/json"
	"fmt"
)

// DecodeHost reads one payload in host h's wire format. event is the event
// named on the hook's command line, for hosts whose payload does not name
// its own (Copilot CLI's camelCase hooks); it is ignored otherwise.
//
// The Host returned is the dialect to answer in: usually h, but Copilot CLI
// runs PascalCase hooks with Claude Code's payload and reads Claude Code's
// answer (hosts-cli/FINDINGS.md §3), so such a payload is answered as
// Claude.
func DecodeHost(h Host, event string, data []byte) (Event, Host, error) {
	switch h {
	case Claude, "":
		ev, err := Decode(data)
		return ev, Claude, err
	case Copilot:
		return DecodeCopilot(event, data)
	case Opencode:
		ev, err := DecodeOpencode(data)
		return ev, Opencode, err
	}
	return Event{}, h, fmt.Errorf("decode hook payload: unknown host %q", h)
}

// bashResponse is a Bash tool_response in Claude Code's shape, where the
// rules read a command's output, from another host's output text.
func bashResponse(text string) json.RawMessage {
	raw, err := json.Marshal(struct {
		Stdout string `json:"stdout"`
	}{text})
	if err != nil {
		return nil
	}
	return raw
}

// hostTool is how one of another host's tools maps onto the Claude Code tool
// the rules know: its Claude name and the renaming of its argument keys.
// Keys absent from rename are kept as they are.
type hostTool struct {
	claude string
	rename map[string]string
}

// translateTool turns a host's tool call into the Claude Code tool the rules
// read, so one rule reads the same call the same way on every host. A tool
// without a mapping keeps its host name and its raw input, which no rule
// acts on; an input that is not a JSON object decodes as DecodeTool does.
func translateTool(name string, args json.RawMessage, table map[string]hostTool) Tool {
	ht, ok := table[name]
	if !ok {
		return Tool{Name: name, Raw: args}
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return DecodeTool(ht.claude, args)
	}
	out := make(map[string]json.RawMessage, len(obj))
	for k, v := range obj {
		if _, renamed := ht.rename[k]; !renamed {
			out[k] = v
		}
	}
	for k, v := range obj {
		if to, renamed := ht.rename[k]; renamed {
			if _, taken := out[to]; !taken {
				// A key the host also sent under the Claude name keeps
				// that value: the outcome never depends on map order.
				out[to] = v
			}
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return Tool{Name: name, Raw: args}
	}
	return DecodeTool(ht.claude, raw)
}
