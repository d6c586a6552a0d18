package hooks

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"miam/budgets"
	"miam/delegate/wire"
)

// RuleFallback names the fallback's notices in traces.
const RuleFallback = "fallback"

// The fallback of SPEC §8: when a delegation finds no executor (the daemon
// unreachable: not started, crashed, or miam's MCP server gone), the
// delegation rules (1-5, 10) open for the rest of the turn and each deny
// becomes a visible notice; a delegation that answers closes them again.
// Rules that do not ask for a delegation (plan, waits, governance) stay.

// afterDelegationFailure opens the fallback when a deleguer call failed
// for want of an executor (unreachable). A refusal of the request itself
// (miam's tool errors start with "miam: ", and never carry
// wire.UnreachableText) and an interruption by the user are not that.
func afterDelegationFailure(ev Event, st budgets.State) (Verdict, budgets.State) {
	if ev.Subagent() || ev.Interrupted || !isDelegation(ev.Tool) || !unreachable(ev.Error) {
		return Verdict{}, st
	}
	st.FallbackTurn, st.FallbackWhy = st.Turn, firstLine(ev.Error, 240)
	return Verdict{Rule: RuleFallback, Notice: fmt.Sprintf(
		"miam: no executor answers (%s). The delegation rules are open for the rest of this turn; what they would deny goes through with a notice.",
		st.FallbackWhy)}, st
}

// unreachable needs positive evidence that no executor answers: miam's own
// word for it, or the host saying the MCP server's connection is gone. Any
// other failure (a refused request, a host timeout, a permission refusal)
// leaves the rules closed: one bad call must not open them.
func unreachable(msg string) bool {
	if strings.Contains(msg, wire.UnreachableText) {
		return true
	}
	if strings.HasPrefix(strings.TrimSpace(msg), "miam: ") {
		return false
	}
	low := strings.ToLower(msg)
	for _, gone := range []string{"connection closed", "not connected", "server disconnected", "connection refused"} {
		if strings.Contains(low, gone) {
			return true
		}
	}
	return false
}

// closeFallback: a delegation answered, so an executor is back.
func closeFallback(st budgets.State) budgets.State {
	st.FallbackTurn, st.FallbackWhy = 0, ""
	return st
}

// openedNotice is the notice for the rules the fallback let through during
// this call: their Tally.Opened counts grew from before to after.
func openedNotice(before, after map[string]int, why string) Verdict {
	var rules []string
	for _, r := range slices.Sorted(maps.Keys(after)) {
		if after[r] > before[r] {
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		return Verdict{}
	}
	text := fmt.Sprintf("miam: %s would deny this call, but no executor answers this turn (%s), so it goes through. "+
		"Delegate again once deleguer answers: the rules close as soon as one does.", strings.Join(rules, ", "), why)
	return Verdict{Rule: RuleFallback, Notice: text, Context: text}
}

// firstLine is s's first line, cut to n bytes.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
