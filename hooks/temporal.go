package hooks

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"miam/budgets"
	"miam/hooks/policies"
)

// RulePolicies names the temporal policies (.miam/policies.yaml) in traces
// and deny counts; a verdict's Rule is "policies:<rule id>".
const RulePolicies = "policies"

// The temporal policies (SPEC §9) run after the tool policy and before the
// delegation rules, on every tool call of the main agent and of subagents
// alike (subagents carry their parent's session id: they share its
// budgets). This file adapts a hook event to hooks/policies, which decides:
// it classifies the call, finds its simple commands and tells the repair
// calls, which no budget blocks.

// PoliciesAct reports whether the temporal policies read or change the
// session's state on this event, when a project has a policies file.
func PoliciesAct(ev Event) bool {
	switch ev.Name {
	case SessionStart, PreToolUse, PostToolUse, PostToolUseFailure:
		return true
	}
	return false
}

// PoliciesConcern reports whether the temporal policies of set have
// anything to do with this event; a set that could not be loaded (nil)
// concerns every event they act on, to report its error.
func PoliciesConcern(ev Event, set *policies.Set) bool {
	switch {
	case !PoliciesAct(ev):
		return false
	case set == nil || ev.Name == SessionStart:
		return true
	}
	return set.Concerns(ev.Tool.Name, ev.Name != PreToolUse)
}

// decidePolicies applies the temporal policies. A policies file that could
// not be read is ignored, with the error in the context: a hook never makes
// a session unusable.
func decidePolicies(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	if env.PoliciesErr != nil {
		if ev.Name == PreToolUse || ev.Name == SessionStart {
			return Verdict{Context: "miam: the temporal policies are not applied (this call was not checked against them): " +
				env.PoliciesErr.Error()}, st
		}
		return Verdict{}, st
	}
	if env.Policies == nil || len(env.Policies.Rules) == 0 {
		return Verdict{}, st
	}
	if ev.Name != SessionStart && !PoliciesConcern(ev, env.Policies) && !pendingFor(st, ev.ToolUseID) {
		return Verdict{}, st // no rule names this tool: not even read-only calls cost more
	}
	switch ev.Name {
	case SessionStart:
		st.Policies = policies.Start(st.Policies, env.Now)
	case PreToolUse:
		c := policyCall(ev, env)
		out, next := policies.Pre(env.Policies, c, st.Policies, policies.Inputs{Now: env.Now, Cost: transcriptCost(ev, env)})
		st.Policies = next
		v := Verdict{Rule: RulePolicies + ":" + out.Rule, Reason: out.Reason, Context: strings.Join(out.Warnings, "\n")}
		switch out.Verdict {
		case policies.Block:
			v.Decision = Deny
			st.ThisTurn.Denied = inc(st.ThisTurn.Denied, RulePolicies)
			st.Session.Denied = inc(st.Session.Denied, RulePolicies)
		case policies.Ask:
			v.Decision = Ask
		case policies.Allow:
			v.Decision = Allow
			if v.Reason == "" {
				v.Reason = "miam policy " + out.Rule + ": the user approved this same call earlier in the session."
			}
		default:
			v.Rule, v.Reason = "", ""
		}
		return v, st
	case PostToolUse:
		st.Policies = policies.Post(env.Policies, policyCall(ev, env), st.Policies)
	case PostToolUseFailure:
		st.Policies = policies.Failed(policies.Call{ToolUseID: ev.ToolUseID}, st.Policies)
	}
	return Verdict{}, st
}

// pendingFor reports whether a call's approval is pending.
func pendingFor(st budgets.State, toolUseID string) bool {
	if st.Policies == nil || toolUseID == "" {
		return false
	}
	_, ok := st.Policies.Pending[toolUseID]
	return ok
}

// transcriptCost reads the new part of the session's transcript, through
// env.Transcript, only when a cost cap asks for it.
func transcriptCost(ev Event, env Env) func(budgets.TranscriptCost) (float64, budgets.TranscriptCost) {
	if env.Transcript == nil || ev.TranscriptPath == "" {
		return nil
	}
	return func(c budgets.TranscriptCost) (float64, budgets.TranscriptCost) {
		if c.Path != ev.TranscriptPath {
			c = budgets.TranscriptCost{Path: ev.TranscriptPath}
		}
		data, err := env.Transcript(ev.TranscriptPath, c.Offset)
		if err != nil {
			return c.Total(), c
		}
		c = policies.AddTranscript(c, data)
		return c.Total(), c
	}
}

// readOnlyTools change nothing; a read-only Bash command is told by the
// classifier.
var readOnlyTools = map[string]bool{"Read": true, "Grep": true, "Glob": true, "LS": true, "NotebookRead": true}

// policyCall describes a tool call for the policies.
func policyCall(ev Event, env Env) policies.Call {
	c := policies.Call{Tool: ev.Tool.Name, ToolUseID: ev.ToolUseID, ReadOnly: readOnlyTools[ev.Tool.Name],
		Fingerprint: env.Fingerprint}
	if c.Fingerprint == "" {
		c.Fingerprint = policies.Fingerprint(ev.Tool.Name, ev.Tool.Raw)
	}
	p := ev.Tool.Path()
	switch in := ev.Tool.Input.(type) {
	case *BashInput:
		c.Command = in.Command
		c.Commands = simpleCommands(in.Command)
		cl := classifyCommand(in.Command, nil, nil)
		c.ReadOnly, c.Mutating = cl.Class == ReadOnly, cl.Class != ReadOnly
		c.Repair = isPoliciesCommand(in.Command)
	case *GrepInput:
		p = in.Path
	case *GlobInput:
		p = in.Pattern
		if in.Path != "" && !path.IsAbs(p) {
			p = path.Join(in.Path, p)
		}
	case *WriteInput, *EditInput, *MultiEditInput, *NotebookEditInput:
		c.Mutating = true
	}
	if p != "" {
		rel, inside := relPath(env.Project, p)
		c.Path = rel
		c.AbsPath = p
		if inside && env.Project != "" && !path.IsAbs(p) {
			c.AbsPath = path.Join(env.Project, p)
		}
		c.Repair = c.Mutating && inside && isRepairFile(rel)
	}
	return c
}

// isRepairFile reports whether a project file is one of the two that lift
// a budget: the policies file and a session's state.
func isRepairFile(rel string) bool {
	if rel == policies.File {
		return true
	}
	dir, name := path.Split(rel)
	return dir == ".miam/state/" && strings.HasPrefix(name, "session-") && strings.HasSuffix(name, ".json")
}

// simpleCommands returns each simple command of a command line as written,
// for command-prefix patterns; nil when it does not parse.
func simpleCommands(cmd string) []string {
	f, err := parseShell(cmd)
	if err != nil {
		return nil
	}
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			start, end := call.Args[0].Pos().Offset(), call.Args[len(call.Args)-1].End().Offset()
			if start < end && int(end) <= len(cmd) {
				out = append(out, cmd[start:end])
			}
		}
		return true
	})
	return out
}

// isPoliciesCommand reports whether a command line runs `miam policies …`
// and nothing else that could change anything: `miam policies …`,
// `/path/to/miam policies …` or `go run ./cmd/miam policies …`, possibly
// after a `cd`, joined by && || or ;. Naming it is not running it: `echo
// miam policies` is not one, nor a line that also runs something else.
func isPoliciesCommand(cmd string) bool {
	f, err := parseShell(cmd)
	if err != nil || len(f.Stmts) == 0 {
		return false
	}
	found := false
	var stmt func(s *syntax.Stmt) bool
	stmt = func(s *syntax.Stmt) bool {
		if s.Negated || s.Background || s.Coprocess {
			return false
		}
		for _, r := range s.Redirs {
			if !harmlessRedirect(r) {
				return false
			}
		}
		switch c := s.Cmd.(type) {
		case *syntax.BinaryCmd:
			if c.Op != syntax.AndStmt && c.Op != syntax.OrStmt {
				return false
			}
			return stmt(c.X) && stmt(c.Y)
		case *syntax.CallExpr:
			if len(c.Assigns) > 0 {
				return false
			}
			words := make([]string, len(c.Args))
			for i, w := range c.Args {
				v, ok := plainWord(w)
				if !ok {
					return false
				}
				words[i] = v
			}
			switch {
			case len(words) == 0:
				return false
			case words[0] == "cd" && len(words) <= 2:
				return true
			case runsMiamPolicies(words):
				found = true
				return true
			}
		}
		return false
	}
	for _, s := range f.Stmts {
		if !stmt(s) {
			return false
		}
	}
	return found
}

// runsMiamPolicies reports whether a command's words run miam's policies
// subcommand.
func runsMiamPolicies(w []string) bool {
	if len(w) >= 2 && path.Base(w[0]) == "miam" && w[1] == "policies" {
		return true
	}
	if len(w) < 4 || path.Base(w[0]) != "go" || w[1] != "run" {
		return false
	}
	i := 2
	for i < len(w) && strings.HasPrefix(w[i], "-") {
		i++
	}
	return i+1 < len(w) && path.Base(strings.TrimSuffix(w[i], "/")) == "miam" && w[i+1] == "policies"
}

// plainWord returns a word's text when it is made of literals, quotes and
// plain parameter expansions only (a path like "$HOME/bin/miam"); a
// command substitution or anything computed is not plain.
func plainWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	var parts func(ps []syntax.WordPart) bool
	parts = func(ps []syntax.WordPart) bool {
		for _, p := range ps {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(p.Value)
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				if !parts(p.Parts) {
					return false
				}
			case *syntax.ParamExp:
				if p.Param == nil || p.Exp != nil || p.Repl != nil || p.Slice != nil || p.Index != nil || p.Excl || p.Length || p.Width {
					return false
				}
				b.WriteString("$" + p.Param.Value)
			default:
				return false
			}
		}
		return true
	}
	ok := parts(w.Parts)
	return b.String(), ok
}

// harmlessRedirect is a redirection that writes no file: to /dev/null or
// between descriptors.
func harmlessRedirect(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.DplOut, syntax.DplIn:
		return true
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll:
		v, ok := plainWord(r.Word)
		return ok && v == "/dev/null"
	}
	return false
}
