package hooks

import (
	"fmt"
	"sort"
	"strings"

	"miam/budgets"
	"miam/hooks/config"
)

// RuleReport is rule 8's name in traces.
const RuleReport = "report"

// Rule 8, the turn report. Claude Code shows a Stop hook's output to the
// model only as the reason of a block (FINDINGS: Stop takes decision: block
// and reason, no additionalContext), so the report travels that way, and
// only when the turn ends with something to act on: a delegation answered
// ok: null whose wait was never launched (no one would ever wake the model
// for it). The block happens once: the Stop that follows carries
// stop_hook_active and passes. Otherwise the hook keeps no opinion and the
// turn's tally stays in the state (for `miam statusline`). The block obeys
// rules 11-12's mode (wait), whose conduct it enforces.

// onStop closes the turn, or blocks it once with the report.
func onStop(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	idle := idleWaits(st)
	mode := env.Config.Rules.Wait.Or(config.Deny)
	if len(idle) == 0 || ev.StopHookActive || ev.Subagent() || mode == config.Off {
		st.TurnOpen = false
		return Verdict{}, st
	}
	var cmds []string
	for _, id := range idle {
		if r := st.Waits[id].Reprise; r != "" {
			cmds = append(cmds, "`"+r+"`")
		}
	}
	reason := turnReport(st) + fmt.Sprintf("\nThe delegation %s is still running and nothing waits for it: run %s once with run_in_background: true "+
		"(you will be woken with its result), or cancel it with annuler; then end your turn.",
		strings.Join(idle, ", "), strings.Join(cmds, ", then "))
	v, next, denied := apply(mode, Verdict{Decision: Deny, Rule: RuleReport, Reason: reason}, st)
	if !denied {
		next.TurnOpen = false
	}
	return v, next
}

// idleWaits are the delegations answered ok: null whose wait was never
// launched, sorted.
func idleWaits(st budgets.State) []string {
	var idle []string
	for id, w := range st.Waits {
		if !w.Launched {
			idle = append(idle, id)
		}
	}
	sort.Strings(idle)
	return idle
}

// turnReport is the turn's tally in one line: lines by Claude and by
// delegation, exceptions and denies.
func turnReport(st budgets.State) string {
	t := st.ThisTurn
	s := fmt.Sprintf("miam turn report: %s by you, %s by delegation (%s)",
		plural(t.Written.Code, "code line", "code lines"), plural(t.Delegated, "line", "lines"), plural(t.Delegations, "delegation", "delegations"))
	if total := t.Written.Code + t.Delegated; total > 0 {
		s += fmt.Sprintf(", %d %% delegated", t.Delegated*100/total)
	}
	var reasons []string
	for _, e := range st.Exceptions {
		if e.Turn == st.Turn {
			reasons = append(reasons, fmt.Sprintf("%s %d/%d lines on %s", e.Raison, e.Used, e.Lignes, strings.Join(e.Fichiers, " ")))
		}
	}
	s += fmt.Sprintf("; exceptions: %d", t.Exceptions)
	if len(reasons) > 0 {
		s += " (" + strings.Join(reasons, "; ") + ")"
	}
	var denied []string
	for r, n := range t.Denied {
		denied = append(denied, fmt.Sprintf("%s %d", r, n))
	}
	sort.Strings(denied)
	if len(denied) > 0 {
		s += "; denied: " + strings.Join(denied, ", ")
	} else {
		s += "; denied: none"
	}
	return s + boutReport(st) + "."
}
