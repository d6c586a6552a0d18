// Package trace is governance's ledger (SPEC §9): the record of one
// evaluated tool call or stop decision, its encoding as one JSON line of
// <project>/.miam/traces.jsonl, and the decoding and tally `miam stats`
// reads back. It does no I/O of its own beyond an io.Reader: miam-hook
// appends the lines, miam stats opens the file.
//
// A record carries no argument and no reason text, only a hash of the
// arguments: the file lies on disk and may be exported (OTel), and a trace
// that quotes a command becomes a leak — a deny's reason quotes the command
// it refuses, and a command may hold a token.
package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// FileName is the ledger's name inside <project>/.miam/.
//
// The ledger is not rotated: a line is about 250 bytes, so a heavy day of
// 5,000 evaluated calls adds ~1.2 MB, and `miam stats` reads 100 MB in well
// under a second. Rotating from the hook would need a lock or a rename
// race between parallel hook processes on the hottest path; deleting or
// moving the file aside is the user's call, and the next hook starts a new
// one.
const FileName = "traces.jsonl"

// MaxLine bounds an encoded record, newline included: Linux's PIPE_BUF and
// a page. Each record is appended with one write(2) on an O_APPEND
// descriptor, which local filesystems never interleave; staying within a
// page also keeps a short write (a full disk) from tearing more than one
// record.
const MaxLine = 4096

// Decisions, as hooks.Decision spells them.
const (
	None  = "none"
	Allow = "allow"
	Ask   = "ask"
	Deny  = "deny"
)

// Events the ledger records, as hooks.EventName spells them.
const (
	PreToolUse   = "PreToolUse"
	Stop         = "Stop"
	SubagentStop = "SubagentStop"
)

// Record is one line of the ledger.
type Record struct {
	Time    time.Time `json:"time"`    // UTC
	Session string    `json:"session"` // the host's session id; subagents carry their parent's
	Event   string    `json:"event"`   // PreToolUse, Stop or SubagentStop
	Host    string    `json:"host"`    // claude, copilot or opencode
	// Agent is the subagent type ("Explore", …); empty for the main agent.
	Agent string `json:"agent,omitempty"`
	// Tool is the tool's name as the host sent it, for PreToolUse.
	Tool string `json:"tool,omitempty"`
	// Args is the hash of the tool input: the first 128 bits of the
	// SHA-256 of its canonical JSON, in hex (policies.Fingerprint, the
	// fingerprint approvals are kept by, so a ledger line can be matched
	// with an approval). Identical calls hash alike; no argument can be
	// read back. A command short enough to guess can be confirmed by
	// hashing the guess: what the hash hides is what cannot be guessed,
	// a token or a file's content.
	Args string `json:"args,omitempty"`
	// Decision is none, allow, ask or deny; a blocked stop is a deny.
	Decision string `json:"decision"`
	// Rule names the rule that decided ("tool_policy", "write_budget",
	// "policies:<id>", …); empty for no opinion.
	Rule string `json:"rule,omitempty"`
	// Measured names the rules in measure mode that would have denied
	// this call: they count instead of denying, and the ledger is where
	// that count is measured.
	Measured []string `json:"measured,omitempty"`
	// Unchecked is a call the hook let through because it failed
	// (a broken config, a panic): it was not evaluated.
	Unchecked bool `json:"unchecked,omitempty"`
}

// maxField and minField bound the free-text fields. They come from the
// host (session id, tool and agent names) or the user's config (rule ids):
// short identifiers in practice, but nothing stops them being long.
const (
	maxField = 128
	minField = 16
	maxRules = 8
)

// Append appends r's line, newline included, to b. The line is never longer
// than MaxLine: long fields are cut (at a rune boundary), then cut harder if
// JSON escaping still overflows.
func (r Record) Append(b []byte) []byte {
	r.Time = r.Time.UTC()
	for _, limit := range []int{maxField, minField} {
		line, err := json.Marshal(r.bounded(limit))
		if err == nil && len(line) < MaxLine {
			return append(append(b, line...), '\n')
		}
	}
	// Unreachable: eight fields of 16 bytes escape to under 1 KB. Keep
	// what cannot overflow.
	line, _ := json.Marshal(Record{Time: r.Time, Event: cut(r.Event, minField), Decision: cut(r.Decision, minField), Unchecked: true})
	return append(append(b, line...), '\n')
}

func (r Record) bounded(limit int) Record {
	r.Session, r.Event, r.Host = cut(r.Session, limit), cut(r.Event, limit), cut(r.Host, limit)
	r.Agent, r.Tool, r.Args = cut(r.Agent, limit), cut(r.Tool, limit), cut(r.Args, limit)
	r.Decision, r.Rule = cut(r.Decision, limit), cut(r.Rule, limit)
	if len(r.Measured) > maxRules {
		r.Measured = r.Measured[:maxRules]
	}
	if len(r.Measured) > 0 {
		m := make([]string, len(r.Measured))
		for i, s := range r.Measured {
			m[i] = cut(s, limit)
		}
		r.Measured = m
	}
	return r
}

// cut shortens s to at most n bytes without splitting a rune; invalid
// UTF-8 is left to encoding/json, which replaces it.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ErrCorrupt is a line that is not a ledger record.
var ErrCorrupt = errors.New("trace: corrupt ledger line")

// Decode reads one ledger line (with or without its newline). It accepts
// unknown fields — a newer miam-hook may add some — but wants the fields
// every record has: a time, an event and a known decision.
func Decode(line []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(line, &r); err != nil {
		return Record{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	switch {
	case r.Time.IsZero():
		return Record{}, fmt.Errorf("%w: no time", ErrCorrupt)
	case r.Event == "":
		return Record{}, fmt.Errorf("%w: no event", ErrCorrupt)
	}
	switch r.Decision {
	case None, Allow, Ask, Deny:
	default:
		return Record{}, fmt.Errorf("%w: decision %q", ErrCorrupt, r.Decision)
	}
	return r, nil
}
