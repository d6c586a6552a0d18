package hooks

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"miam/budgets"
)

// Exceptions (SPEC §6). The main agent opens one with the MCP tool
// `exception` (the hook sees its PostToolUse, under any server prefix) or
// with `miam exception` in a shell (the command leaves a request in
// <project>/.miam/state/exceptions-pending.json, which the next hook call
// that loads a session state claims for that session, whichever it is:
// Env.Requested). An exception lasts for the session until its lines are
// used. Rules 1, 2 and 4 take a covered write from it, whole, instead of
// denying: the lines still count as written by hand, but not towards the
// write budget. A write larger than what is left is judged as without one.

// RuleException names the exception bookkeeping in traces.
const RuleException = "exception"

// exceptionArgs are the exception tool's arguments.
type exceptionArgs struct {
	Raison   string   `json:"raison"`
	Fichiers []string `json:"fichiers"`
	Lignes   int      `json:"lignes"`
}

// isException reports whether t is miam's exception tool, any server prefix.
func isException(t Tool) bool {
	m, ok := t.Input.(*MCPInput)
	return ok && m.Tool == "exception"
}

// afterException opens the exception an `exception` call granted.
func afterException(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	m, _ := ev.Tool.Input.(*MCPInput)
	var a exceptionArgs
	if m == nil || json.Unmarshal(m.Arguments, &a) != nil || !delegationOK(ev.Response) {
		return Verdict{}, st
	}
	if budgets.CheckException(a.Raison, a.Fichiers, a.Lignes) != nil {
		return Verdict{}, st
	}
	e := budgets.Exception{Raison: a.Raison, Fichiers: a.Fichiers, Lignes: a.Lignes, Source: "mcp"}
	st = openException(e, st, env)
	return Verdict{Rule: RuleException, Context: opened(st.Exceptions[len(st.Exceptions)-1])}, st
}

// openRequested opens the exceptions `miam exception` requested.
func openRequested(st budgets.State, env Env) (Verdict, budgets.State) {
	var v Verdict
	for _, e := range env.Requested {
		if budgets.CheckException(e.Raison, e.Fichiers, e.Lignes) != nil {
			continue
		}
		e.Source = "cli"
		st = openException(e, st, env)
		v = Combine(v, Verdict{Rule: RuleException, Context: opened(st.Exceptions[len(st.Exceptions)-1])})
	}
	return v, st
}

func opened(e budgets.Exception) string {
	return fmt.Sprintf("miam: exception opened (%s): %s for %s; it is counted in the turn report.",
		e.Raison, plural(e.Lignes, "code line", "code lines"), strings.Join(e.Fichiers, ", "))
}

// openException records e with its files made project-relative, and counts
// it in the tally.
func openException(e budgets.Exception, st budgets.State, env Env) budgets.State {
	files := make([]string, len(e.Fichiers))
	for i, f := range e.Fichiers {
		files[i], _ = relPath(env.Project, f)
	}
	e.Fichiers, e.Used, e.Turn = files, 0, st.Turn
	st.Exceptions = append(st.Exceptions, e)
	st.ThisTurn.Exceptions++
	st.Session.Exceptions++
	return st
}

// covers reports whether e names rel, as a path or a glob.
func covers(e budgets.Exception, rel string) bool {
	for _, f := range e.Fichiers {
		if f == rel || budgets.Match(f, rel) {
			return true
		}
		if ok, _ := path.Match(f, rel); ok {
			return true
		}
	}
	return false
}

// coveringException returns the index of an exception naming rel with at
// least lines left (any left when lines is 0), or -1.
func coveringException(st budgets.State, rel string, lines int) int {
	for i, e := range st.Exceptions {
		left := e.Lignes - e.Used
		if left > 0 && left >= lines && covers(e, rel) {
			return i
		}
	}
	return -1
}

// useException takes up to lines from exception i and returns what it
// could not take.
func useException(st budgets.State, i, lines int) (budgets.State, int) {
	e := st.Exceptions[i] // st.Exceptions is the clone's own slice
	took := min(lines, e.Lignes-e.Used)
	e.Used += took
	st.Exceptions[i] = e
	return st, lines - took
}

// chargeHand charges lines written by hand under an exception: they count
// as written, not towards the write budget.
func chargeHand(st budgets.State, added budgets.Counts, test bool) budgets.State {
	lines := handLines(added, test)
	st.ThisTurn.Written = st.ThisTurn.Written.Add(lines)
	st.Session.Written = st.Session.Written.Add(lines)
	return st
}

func handLines(added budgets.Counts, test bool) budgets.Lines {
	lines := budgets.Lines{Code: added.Code, Doc: added.Doc}
	if test {
		lines.Tests = added.Code
	}
	return lines
}

// refundException gives back to its exception what a failed call took.
func refundException(st budgets.State, c budgets.Charge) budgets.State {
	if c.Exception <= 0 || c.Exception > len(st.Exceptions) {
		return st
	}
	e := st.Exceptions[c.Exception-1]
	e.Used = max(0, e.Used-c.ExceptionLines)
	st.Exceptions[c.Exception-1] = e
	return st
}
