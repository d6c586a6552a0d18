package hooks

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"miam/budgets"
	"miam/delegate/wire"
	"miam/hooks/config"
)

// RuleWait names rules 11 and 12: a wait for a delegation costs one launch
// and one wake-up, nothing in between.
const RuleWait = "wait"

// delegationAnswer reads a deleguer or suivre tool_response in any of the
// forms Claude Code hands hooks (see delegationOK).
func delegationAnswer(resp json.RawMessage) (wire.Answer, bool) {
	var a wire.Answer
	if json.Unmarshal(resp, &a) == nil && (a.DemandeID != "" || a.OK != nil || len(a.Lot) > 0) {
		return a, true
	}
	var s string
	if json.Unmarshal(resp, &s) == nil {
		return delegationAnswer(json.RawMessage(s))
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(resp, &blocks) == nil {
		for _, b := range blocks {
			if a, ok := delegationAnswer(json.RawMessage(b.Text)); ok && b.Type == "text" {
				return a, true
			}
		}
	}
	return wire.Answer{}, false
}

// pendingOf lists the pending requests of an answer and its lot.
func pendingOf(a wire.Answer) []wire.Answer {
	var out []wire.Answer
	if a.OK == nil && a.DemandeID != "" {
		out = append(out, a)
	}
	for _, b := range a.Lot {
		out = append(out, pendingOf(b)...)
	}
	return out
}

// afterDelegation records the requests a deleguer answer left pending and
// tells Claude how to wait for them (rule 11).
func afterDelegation(a wire.Answer, st budgets.State, mode config.Mode) (Verdict, budgets.State) {
	pending := pendingOf(a)
	if len(pending) == 0 || mode == config.Off {
		return Verdict{}, st
	}
	if st.Waits == nil {
		st.Waits = map[string]budgets.Wait{}
	}
	var cmds []string
	for _, p := range pending {
		st.Waits[p.DemandeID] = budgets.Wait{Reprise: p.Reprise}
		cmds = append(cmds, "`"+p.Reprise+"`")
	}
	if mode == config.Measure {
		return Verdict{}, st
	}
	return Verdict{Rule: RuleWait, Context: fmt.Sprintf(
		"miam: the delegation is still running. Run %s once, with run_in_background: true, then do other work or end your turn: "+
			"you will be woken when it ends, with its result. Do not poll with suivre, sleep or a loop.", strings.Join(cmds, ", then "))}, st
}

// shellCommands returns the literal words of every simple command in a
// shell command line (a non-literal word is ""), and whether it loops.
func shellCommands(cmd string) (calls [][]string, loops bool, ok bool) {
	f, err := parseShell(cmd)
	if err != nil {
		return nil, false, false
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.WhileClause, *syntax.ForClause:
			loops = true
		case *syntax.CallExpr:
			words := make([]string, len(n.Args))
			for i, w := range n.Args {
				words[i] = w.Lit()
				if words[i] == "" {
					words[i] = unquoted(w)
				}
			}
			if len(words) > 0 {
				calls = append(calls, words)
			}
		}
		return true
	})
	return calls, loops, true
}

// unquoted is a word made only of literal and quoted-literal parts.
func unquoted(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return ""
				}
				b.WriteString(l.Value)
			}
		default:
			return ""
		}
	}
	return b.String()
}

var attendreURL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/attendre\?demande_id=([A-Za-z0-9_-]+)`) })

// repriseOf returns the demande_id a shell command waits for: `miam
// attendre ID` (any path to miam) or the equivalent curl of /attendre.
func repriseOf(calls [][]string) string {
	for _, c := range calls {
		if len(c) >= 3 && path.Base(c[0]) == "miam" && c[1] == "attendre" {
			return c[len(c)-1]
		}
		if len(c) > 0 && path.Base(c[0]) == "curl" {
			for _, a := range c[1:] {
				if m := attendreURL().FindStringSubmatch(a); m != nil {
					return m[1]
				}
			}
		}
	}
	return ""
}

// decideWaitBash applies rules 11 and 12 to a Bash call: a reprise must run
// in the background; while one runs, sleeping and polling are refused.
func decideWaitBash(in *BashInput, toolUseID string, st budgets.State, mode config.Mode) (Verdict, budgets.State) {
	if mode == config.Off {
		return Verdict{}, st
	}
	calls, loops, ok := shellCommands(in.Command)
	if !ok {
		return Verdict{}, st
	}
	if id := repriseOf(calls); id != "" {
		if !in.RunInBackground {
			v := Verdict{Decision: Deny, Rule: RuleWait, Reason: fmt.Sprintf(
				"miam rule 11 (wait): run the wait for %s with run_in_background: true, then do other work or end your turn. "+
					"Claude Code wakes you when it ends; waiting in the foreground blocks you for nothing.", id)}
			v, st, _ = apply(mode, v, st)
			return v, st
		}
		if st.Waits == nil {
			st.Waits = map[string]budgets.Wait{}
		}
		w := st.Waits[id]
		w.Launched, w.ToolUseID = true, toolUseID
		st.Waits[id] = w
		return Verdict{}, st
	}
	if !waiting(st) {
		return Verdict{}, st
	}
	polls := loops
	for _, c := range calls {
		switch path.Base(c[0]) {
		case "sleep", "watch", "timeout":
			polls = true
		}
	}
	if !polls {
		return Verdict{}, st
	}
	v := Verdict{Decision: Deny, Rule: RuleWait, Reason: "miam rule 12 (wait): a delegation's wait is running in the background; " +
		"you will be woken at the end with its result. Do other work or end your turn instead of sleeping or polling."}
	v, st, _ = apply(mode, v, st)
	return v, st
}

// waiting reports whether a launched wait has not ended yet.
func waiting(st budgets.State) bool {
	for _, w := range st.Waits {
		if w.Launched {
			return true
		}
	}
	return false
}

// decideSuivre applies rule 12 to suivre: a request whose wait runs in the
// background must not be polled.
func decideSuivre(m *MCPInput, st budgets.State, mode config.Mode) (Verdict, budgets.State) {
	var args struct {
		DemandeID string `json:"demande_id"`
	}
	if mode == config.Off || json.Unmarshal(m.Arguments, &args) != nil {
		return Verdict{}, st
	}
	if w, ok := st.Waits[args.DemandeID]; !ok || !w.Launched {
		return Verdict{}, st
	}
	v := Verdict{Decision: Deny, Rule: RuleWait, Reason: fmt.Sprintf(
		"miam rule 12 (wait): %s is already awaited in the background; you will be woken at the end with its result. "+
			"Do other work or end your turn.", args.DemandeID)}
	v, st, _ = apply(mode, v, st)
	return v, st
}

// afterBackground remembers the background task id of a launched reprise.
func afterBackground(toolUseID string, resp json.RawMessage, st budgets.State) budgets.State {
	var r struct {
		BackgroundTaskID string `json:"backgroundTaskId"`
	}
	if json.Unmarshal(resp, &r) != nil || r.BackgroundTaskID == "" {
		return st
	}
	for id, w := range st.Waits {
		if w.Launched && w.ToolUseID == toolUseID {
			w.TaskID = r.BackgroundTaskID
			st.Waits[id] = w
		}
	}
	return st
}

var notifTag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<(task-id|tool-use-id|output-file|status)>([^<]*)</`)
})

// notification is what a <task-notification> prompt says.
type notification struct {
	taskID, toolUseID, outputFile, status string
}

func parseNotification(prompt string) notification {
	var n notification
	for _, m := range notifTag().FindAllStringSubmatch(prompt, -1) {
		switch m[1] {
		case "task-id":
			n.taskID = m[2]
		case "tool-use-id":
			n.toolUseID = m[2]
		case "output-file":
			n.outputFile = m[2]
		case "status":
			n.status = m[2]
		}
	}
	return n
}

// onWake handles the notification that a reprise ended: it reads the answer
// from the task's output file, ends the wait, counts a valid delegation
// (which resets the write budget) and tells Claude what to do, so that it
// need not Read the file.
func onWake(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	n := parseNotification(ev.Prompt)
	id := ""
	for d, w := range st.Waits {
		if w.Launched && ((n.toolUseID != "" && w.ToolUseID == n.toolUseID) || (n.taskID != "" && w.TaskID == n.taskID)) {
			id = d
		}
	}
	if id == "" {
		return Verdict{}, st
	}
	delete(st.Waits, id)
	var a wire.Answer
	found := false
	if env.TaskOutput != nil && n.outputFile != "" {
		if data, err := env.TaskOutput(n.outputFile); err == nil {
			a, found = firstAnswer(data)
		}
	}
	if !found {
		return Verdict{Rule: RuleWait, Context: fmt.Sprintf(
			"miam: the wait for %s ended (%s) but its answer could not be read; read %s.", id, n.status, n.outputFile)}, st
	}
	if a.OK != nil && *a.OK {
		st.SinceDelegation = 0
		st.ThisTurn.Delegations++
		st.Session.Delegations++
	}
	st = recordAnswer(a, st, env)
	st = trackBouts(a, st, env)
	if env.Config.Rules.Wait.Or(config.Deny) != config.Deny {
		return Verdict{}, st
	}
	return Verdict{Rule: RuleWait, Context: conduct(a)}, st
}

// firstAnswer reads the JSON line `miam attendre` printed, before Claude
// Code's "[exited with code N]" trailer.
func firstAnswer(data []byte) (wire.Answer, bool) {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var a wire.Answer
		if json.Unmarshal([]byte(line), &a) == nil && a.Fin != "" {
			return a, true
		}
	}
	return wire.Answer{}, false
}

// conduct is SPEC §2's "agent's move" for a terminal answer, as context.
func conduct(a wire.Answer) string {
	head := fmt.Sprintf("miam: delegation %s ended %s", a.DemandeID, a.Fin)
	switch a.Fin {
	case wire.Valide:
		s := head + ": every control passed"
		if a.Sortie != "" {
			s += " and " + a.Sortie + " is written"
			if a.Diff != nil {
				s += fmt.Sprintf(" (+%d -%d lines)", a.Diff.Added, a.Diff.Removed)
			}
		}
		return s + ". Integrate it without reading the whole body; no need to read the task output file."
	case wire.Termine:
		return head + " without controls: read its body before relying on it.\n" + a.Corps
	case wire.EchecControle:
		var fails []string
		for _, c := range a.Controles {
			if !c.OK {
				fails = append(fails, c.Nom+": "+c.Message)
			}
		}
		return head + ": every try failed its controls (" + strings.Join(fails, "; ") + "). Take it over or cut it smaller."
	case wire.BesoinClaude:
		s := head + ": a decision only you can make (" + a.Raison + "). " + a.Message
		if a.Appel != nil {
			js, _ := json.Marshal(a.Appel.Input)
			s += "\nReady subagent call: " + a.Appel.Tool + " " + string(js)
		}
		return s
	case wire.Annule:
		return head + ": nothing to do."
	}
	return head + ": send it again or do it yourself. " + a.Message
}

// decideWaitCalls applies the wait rules to a PreToolUse: a Bash reprise or
// poll, or a suivre. done is false when the call is none of those.
func decideWaitCalls(ev Event, st budgets.State, env Env) (Verdict, budgets.State, bool) {
	mode := env.Config.Rules.Wait.Or(config.Deny)
	switch in := ev.Tool.Input.(type) {
	case *BashInput:
		before := len(st.Waits)
		v, next := decideWaitBash(in, ev.ToolUseID, st, mode)
		if !v.IsZero() || waitLaunched(next, ev.ToolUseID) || len(next.Waits) != before {
			return v, next, true
		}
	case *MCPInput:
		if in.Tool == "suivre" {
			v, next := decideSuivre(in, st, mode)
			return v, next, true
		}
	}
	return Verdict{}, st, false
}

func waitLaunched(st budgets.State, toolUseID string) bool {
	for _, w := range st.Waits {
		if w.Launched && w.ToolUseID == toolUseID && toolUseID != "" {
			return true
		}
	}
	return false
}
