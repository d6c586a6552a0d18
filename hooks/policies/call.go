package policies

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// Call is one tool call as the policies see it. The caller fills it: it
// owns the shell parser, the command classifier and the project's paths.
type Call struct {
	Tool string
	// Command is a Bash command line; Commands are its simple commands as
	// written (after && ; | …), for prefix patterns.
	Command  string
	Commands []string
	// Path is a file tool's target, project-relative when inside the
	// project; AbsPath is the same path absolute.
	Path, AbsPath string
	// Mutating is set for calls that may change something (a file tool that
	// writes, a Bash command not known to be read-only); ReadOnly for calls
	// known not to (Read, Grep, Glob, a read-only Bash command). A call may
	// be neither (an MCP tool, Agent, WebFetch).
	Mutating, ReadOnly bool
	// Repair is set for the calls that lift a budget: an edit of the
	// policies file or of the session state, or `miam policies …` itself.
	Repair bool
	// Fingerprint is Fingerprint(tool, input).
	Fingerprint string
	ToolUseID   string
}

// commands is what a command pattern is matched against: the whole line,
// whitespace folded, then each simple command.
func (c Call) commands() []string {
	if c.Command == "" && len(c.Commands) == 0 {
		return nil
	}
	out := make([]string, 0, 1+len(c.Commands))
	out = append(out, fold(c.Command))
	for _, s := range c.Commands {
		out = append(out, fold(s))
	}
	return out
}

// Fingerprint identifies a call for approvals: the tool and its whole
// input, a Bash command's whitespace folded outside quotes, its
// description and timeout left out (they change nothing the command does).
// A call whose input is not a JSON object is fingerprinted as sent.
func Fingerprint(tool string, input json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(input)))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		h.Write(input)
	} else {
		if tool == "Bash" {
			delete(m, "description")
			delete(m, "timeout")
			if cmd, ok := m["command"].(string); ok {
				m["command"] = NormalizeCommand(cmd)
			}
		}
		canon, err := json.Marshal(m) // map keys come out sorted
		if err != nil {
			h.Write(input)
		} else {
			h.Write(canon)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// NormalizeCommand folds runs of blanks outside quotes into one space and
// trims the ends. It leaves the command as it is when the shell itself
// reads its blanks or the quoting cannot be told plainly: ${…}, $[, [,
// extended globs, or any character outside ASCII (typographic quotes).
func NormalizeCommand(cmd string) string {
	// A here-doc's body, or any text past a newline, may be data whose
	// blanks matter (Python's indentation): such a command is kept whole.
	for _, s := range []string{"${", "$[", "[", "?(", "*(", "+(", "@(", "!(", "<<", "\n"} {
		if strings.Contains(cmd, s) {
			return cmd
		}
	}
	for i := 0; i < len(cmd); i++ {
		if cmd[i] >= 0x80 {
			return cmd
		}
	}
	var b strings.Builder
	var quote byte
	blank := false
	for i := 0; i < len(cmd); i++ {
		ch := cmd[i]
		switch {
		case quote != 0:
			b.WriteByte(ch)
			if ch == '\\' && quote == '"' && i+1 < len(cmd) {
				i++
				b.WriteByte(cmd[i])
			} else if ch == quote {
				quote = 0
			}
			continue
		case ch == ' ' || ch == '\t':
			blank = true
			continue
		}
		if blank && b.Len() > 0 {
			b.WriteByte(' ')
		}
		blank = false
		b.WriteByte(ch)
		switch ch {
		case '\\':
			if i+1 < len(cmd) {
				i++
				b.WriteByte(cmd[i])
			}
		case '\'', '"':
			quote = ch
		}
	}
	return b.String()
}

// fold is NormalizeCommand for matching: blanks folded even where the
// fingerprint keeps them, since a looser match only asks more often.
func fold(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
