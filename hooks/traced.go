package hooks

import (
	"sort"
	"time"

	"miam/budgets"
	"miam/hooks/policies"
	"miam/hooks/trace"
)

// What the trace ledger records (SPEC §9, hooks/trace), decided here and
// written by miam-hook:
//
//   - every PreToolUse that Decide evaluated, whatever its verdict, no
//     opinion included: an evaluated call is one that did not leave on
//     miam-hook's fast path (NeedsState, PoliciesConcern), so at least the
//     tool policy judged it. These are the block rate's denominator;
//   - every Stop and SubagentStop decision, evaluated or not: a blocked
//     stop is the stop gates' deny, and the stops let through are what it
//     is a rate of;
//   - a PreToolUse or stop the hook let through because it failed
//     (Unchecked): a guard that failed open must show in the measure.
//
// Not recorded: calls that leave before any evaluation — a subagent's
// Read or Glob, WebFetch, TodoWrite… — so the hottest path stays free of a
// write (grimoire's first assumed limit); PostToolUse and the session
// events, which decide nothing (what they count lives in the session's
// state, and a line per PostToolUse would double the ledger for no
// decision); a payload that does not decode, which names no event.

// Traced reports whether the ledger records ev; evaluated is whether
// Decide judged it.
func Traced(ev Event, evaluated bool) bool {
	switch ev.Name {
	case PreToolUse:
		return evaluated
	case Stop, SubagentStop:
		return true
	}
	return false
}

// TraceArgs is the hash the ledger keeps of a tool call's input
// (trace.Record.Args): the approvals' fingerprint, so blanks folded outside
// quotes and a Bash description change nothing. "" for an event without a
// tool. It is the dearest part of a record (~50 µs for a 400-line Write, the
// input decoded and encoded again), so miam-hook computes it while it waits
// for the line count.
func TraceArgs(ev Event) string {
	if ev.Name != PreToolUse || (ev.Tool.Name == "" && len(ev.Tool.Raw) == 0) {
		return ""
	}
	return policies.Fingerprint(ev.Tool.Name, ev.Tool.Raw)
}

// TraceRecord is ev's ledger record: its verdict's decision and rule, the
// rules that measured it (NewlyMeasured), and args, its input's hash
// (TraceArgs). Never the input nor the verdict's reason, which quotes it.
func TraceRecord(ev Event, host Host, v Verdict, measured []string, args string, now time.Time) trace.Record {
	r := trace.Record{Time: now, Session: ev.SessionID, Event: string(ev.Name), Host: string(host), Agent: ev.AgentType,
		Tool: ev.Tool.Name, Args: args, Decision: v.Decision.String(), Rule: v.Rule, Measured: measured}
	if ev.Subagent() && r.Agent == "" {
		r.Agent = "subagent"
	}
	if v.Decision == None {
		r.Rule = "" // a rule without a decision decided nothing
	}
	return r
}

// UncheckedRecord is the record of an event let through because the hook
// failed before it could decide.
func UncheckedRecord(ev Event, host Host, now time.Time) trace.Record {
	r := TraceRecord(ev, host, Verdict{}, nil, TraceArgs(ev), now)
	r.Unchecked = true
	return r
}

// NewlyMeasured lists, sorted, the rules in measure mode that counted a
// would-be deny between two states of a session.
func NewlyMeasured(before, after budgets.State) []string {
	var rules []string
	for rule, n := range after.Session.Measured {
		if n > before.Session.Measured[rule] {
			rules = append(rules, rule)
		}
	}
	sort.Strings(rules)
	return rules
}
