package hooks

import (
	"encoding/json"
	"io/fs"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"miam/budgets"
	"miam/delegate/wire"
	"miam/hooks/config"
	"miam/hooks/policies"
)

// Env is what a decision may consult besides the event and the state: the
// configuration and a read-only view of the project's files. Decisions never
// touch the OS themselves.
type Env struct {
	Config config.Config
	// Project is the absolute project directory (CLAUDE_PROJECT_DIR).
	Project string
	// Files is rooted at Project. Nil means no file can be read, and every
	// file counts as new.
	Files fs.FS
	// Measured, when set, returns Measure(ev.Tool, Project, Files), which
	// the caller started beforehand and may still be computing: Decide asks
	// for it only once a rule needs the count, so what comes before (the
	// tool policy, the temporal policies) overlaps the counting. A nil
	// func, or a nil Measurement, means Decide measures the call itself.
	Measured func() *Measurement
	// TaskOutput reads a background task's output file, outside the
	// project (Claude Code's temp dir); nil means it cannot be read.
	TaskOutput func(path string) ([]byte, error)
	// Requested are the exceptions `miam exception` asked for, which this
	// call claimed (exceptions-pending.json): Decide opens them first.
	Requested []budgets.Exception
	// Executors loads the daemon's status.json (rule 7); it is called only
	// for a delegation deny, and false means missing or unreadable.
	Executors func() (wire.Status, bool)
	// Now is the hook's clock, read once by cmd; the status file is stale
	// when older than two minutes. Zero counts every status as stale.
	Now time.Time
	// Policies is the project's .miam/policies.yaml, decoded; nil when it
	// has none. PoliciesErr is why it could not be used: the policies are
	// then skipped and the error shown (fail open).
	Policies    *policies.Set
	PoliciesErr error
	// Transcript reads the session's transcript from offset on, for a
	// max_cost_usd cap only; nil means it cannot be read.
	Transcript func(path string, offset int64) ([]byte, error)
	// Fingerprint is the call's TraceArgs when the caller has it already
	// (the ledger's), so a 400-line Write is not hashed twice; empty means
	// Decide computes it.
	Fingerprint string
}

// Rule names, as in config and traces.
const (
	RuleTests       = "tests"
	RuleWriteBudget = "write_budget"
)

// Decide is the one decision of miam-hook: a pure function of the event, the
// session's state and the environment. It returns the verdict and the new
// state; st is not modified.
func Decide(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	st = st.Clone()
	opened, st := openRequested(st, env)
	// Governance's tool policy first: a call it denies never runs, so no
	// delegation rule charges it; otherwise the verdicts combine.
	v, st := decideToolPolicy(ev, st, env)
	if v.Decision != Deny {
		// The temporal policies next: what they count is kept only if no
		// delegation rule then refuses the call.
		counted := st.Policies
		var pv Verdict
		pv, st = decidePolicies(ev, st, env)
		v = Combine(v, pv)
		if v.Decision != Deny {
			fallbackBefore := maps.Clone(st.ThisTurn.Opened)
			var rules Verdict
			rules, st = decide(ev, st, env)
			v = Combine(v, rules)
			if v.Decision == Deny && ev.Name == PreToolUse {
				st.Policies = counted
			}
			if ev.Name == PreToolUse && st.Fallback() {
				v = Combine(v, openedNotice(fallbackBefore, st.ThisTurn.Opened, st.FallbackWhy))
			}
		}
	}
	if ev.Name == PreToolUse || ev.Name == PostToolUse || ev.Name == UserPromptSubmit || ev.Name == SessionStart {
		v = Combine(opened, v)
	}
	// Governance's session events (session.go): the directive, the task,
	// the mutation count, the capsule and the stop gate.
	var g Verdict
	g, st = governSession(ev, st, env)
	if ev.Name == SessionStart {
		v = Combine(g, v) // the persona and the directive come first
	} else {
		v = combineGovernance(v, g)
	}
	return v, st
}

func decide(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	st = settleShell(ev, st, env) // a Bash call ended: count what rule 4 could not before
	switch ev.Name {
	case UserPromptSubmit:
		// A background task's notification continues the turn it belongs to.
		if !ev.IsTaskNotification() || !st.TurnOpen {
			st.Turn++
			st.TurnOpen = true
			st.ThisTurn = budgets.Tally{}
			st.ReadLines = nil
		}
		if ev.IsTaskNotification() {
			return onWake(ev, st, env)
		}
		return Verdict{}, st
	case Stop:
		return onStop(ev, st, env)
	case PreToolUse:
		if v, next, done := decideWaitCalls(ev, st, env); done {
			return v, next
		}
		if ev.Subagent() {
			return Verdict{}, st
		}
		switch in := ev.Tool.Input.(type) {
		case *BashInput:
			var v Verdict
			if v, st = decideCommit(in, st, env); v.Decision == Deny {
				return v, st
			}
			v, read := decideBashRead(ev, in, st, env)
			if v.Decision == Deny {
				return v, read
			}
			if v, next := decideShell(ev, read, env); v.Decision != Deny {
				return v, next
			}
			// Denied: the command does not run, so it reads nothing.
			return decideShell(ev, st, env)
		case *ReadInput:
			return decideRead(ev, in, st, env)
		case *GrepInput:
			return decideGrep(ev, st, env)
		}
		return decideWrite(ev, st, env)
	case PostToolUse:
		delete(st.Pending, ev.ToolUseID)
		switch in := ev.Tool.Input.(type) {
		case *BashInput:
			if !ev.Subagent() {
				st = afterBashRead(in, ev.Response, st, env)
			}
			return Verdict{}, afterBackground(ev.ToolUseID, ev.Response, st)
		case *GrepInput:
			if ev.Subagent() || env.Config.Rules.ReadBudget.Or(config.Deny) == config.Off {
				return Verdict{}, st
			}
			return Verdict{}, afterGrep(ev.Response, st)
		}
		if isException(ev.Tool) {
			return afterException(ev, st, env)
		}
		if !isDelegation(ev.Tool) {
			return Verdict{}, st
		}
		if delegationOK(ev.Response) {
			st.SinceDelegation = 0
			st.ThisTurn.Delegations++
			st.Session.Delegations++
		}
		if a, ok := delegationAnswer(ev.Response); ok {
			st = closeFallback(st)
			st = recordAnswer(a, st, env)
			st = trackBouts(a, st, env)
			return afterDelegation(a, st, env.Config.Rules.Wait.Or(config.Deny))
		}
		return Verdict{}, st
	case PostToolUseFailure:
		var v Verdict
		v, st = afterDelegationFailure(ev, st)
		// The call did not run: give back what it was charged.
		if c, ok := st.Pending[ev.ToolUseID]; ok {
			delete(st.Pending, ev.ToolUseID)
			st.SinceDelegation = max(0, st.SinceDelegation-c.SinceDelegation)
			st.ThisTurn.Written = st.ThisTurn.Written.Sub(c.Lines)
			st.Session.Written = st.Session.Written.Sub(c.Lines)
			st.ThisTurn.ReadChars = max(0, st.ThisTurn.ReadChars-c.ReadChars)
			st.Session.ReadChars = max(0, st.Session.ReadChars-c.ReadChars)
			st = refundException(st, c)
			if c.ReadFile != "" && st.ReadLines != nil {
				st.ReadLines[c.ReadFile] = max(0, st.ReadLines[c.ReadFile]-c.ReadLines)
			}
		}
		return v, st
	}
	return Verdict{}, st
}

// NeedsState reports whether Decide can read or change the session state for
// this event, so the hook binary can skip the state file otherwise.
func NeedsState(ev Event) bool {
	switch ev.Name {
	case UserPromptSubmit, Stop, SessionStart, PreCompact, SubagentStop:
		return true
	case PreToolUse:
		if _, bash := ev.Tool.Input.(*BashInput); bash {
			return true
		}
		if m, ok := ev.Tool.Input.(*MCPInput); ok && m.Tool == "suivre" {
			return true
		}
		switch ev.Tool.Input.(type) {
		case *ReadInput, *GrepInput:
			return !ev.Subagent() || mayTouchSecret(ev.Tool)
		case *GlobInput:
			return mayTouchSecret(ev.Tool) // the tool policy's secrets only
		}
		return !ev.Subagent() && writeTarget(ev.Tool) != ""
	case PostToolUse:
		return ev.ToolUseID != "" || isDelegation(ev.Tool) || isException(ev.Tool) || writeTarget(ev.Tool) != "" || isBash(ev.Tool)
	case PostToolUseFailure:
		return ev.ToolUseID != "" || isDelegation(ev.Tool) || isException(ev.Tool)
	}
	return false
}

func isBash(t Tool) bool {
	_, ok := t.Input.(*BashInput)
	return ok
}

// writeTarget is the file a file-writing tool writes, or "".
func writeTarget(t Tool) string {
	switch t.Input.(type) {
	case *WriteInput, *EditInput, *MultiEditInput, *NotebookEditInput:
		return t.Path()
	}
	return ""
}

// isDelegation reports whether t is miam's deleguer tool under any server
// prefix (project, plugin or renamed server).
func isDelegation(t Tool) bool {
	m, ok := t.Input.(*MCPInput)
	return ok && m.Tool == "deleguer"
}

// delegationOK reports whether a deleguer tool_response says ok: true. The
// response comes as a string holding the structured content, as the object
// itself, or as an MCP content array of text blocks (FINDINGS.md m1c).
func delegationOK(resp json.RawMessage) bool {
	var answer struct {
		OK *bool `json:"ok"`
	}
	if json.Unmarshal(resp, &answer) == nil && answer.OK != nil {
		return *answer.OK
	}
	var s string
	if json.Unmarshal(resp, &s) == nil {
		return delegationOK(json.RawMessage(s))
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(resp, &blocks) == nil {
		for _, b := range blocks {
			if b.Type == "text" && delegationOK(json.RawMessage(b.Text)) {
				return true
			}
		}
	}
	return false
}

// relPath returns p relative to the project, slash-separated, and whether
// it lies inside the project. A relative p is taken as relative to the
// project; without a project every path is its own name, outside.
func relPath(project, p string) (string, bool) {
	if project == "" {
		return filepath.ToSlash(filepath.Clean(p)), false
	}
	if !filepath.IsAbs(p) && filepath.IsAbs(project) {
		p = filepath.Join(project, p)
	}
	rel, err := filepath.Rel(project, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(p), false
	}
	return filepath.ToSlash(rel), true
}

// readFile reads a project file through env.Files; exists is false when the
// file is absent or outside the project.
func readFile(env Env, rel string, inside bool) (data []byte, exists bool) {
	if env.Files == nil || !inside || !fs.ValidPath(rel) {
		return nil, false
	}
	// An unreadable file is treated as new: all of its content counts.
	data, err := fs.ReadFile(env.Files, rel)
	return data, err == nil
}
