package hooks

import (
	"fmt"
	"strings"

	"miam/budgets"
	"miam/hooks/config"
	"miam/plans"
)

// RuleGate is the governance stop gate's name in traces and tallies.
const RuleGate = "gate"

// Governance's session events (SPEC §9). In miam the current task is the
// tache of a valid plan (.claude/miam-plan.json); no plan, or a broken one,
// means no task. The plan is read only by the events that need it
// (SessionStart, UserPromptSubmit on governed profiles, PreCompact,
// SubagentStop, a Stop after mutations), never on PreToolUse.
//
//   - SessionStart: the entry persona (agents.entry) first, then the
//     session directive; after a compaction, the capsule saved at
//     PreCompact too. Through additionalContext.
//   - UserPromptSubmit: one line naming the task or its absence and the
//     remedy, on profiles governed and production only. On the others the
//     SessionStart directive already says it once per session, and lands
//     in the same system message as the first prompt's context (FINDINGS
//     f, g): repeating it there would cost tokens and change nothing, since
//     no gate blocks on those profiles. Never for a task notification,
//     which continues a turn.
//   - PostToolUse: counts the session's mutations (State.Mutations): every
//     file write or edit and every Bash command the classifier does not
//     call read-only, main agent and subagents alike (a failed Bash command
//     too: it may have changed files before failing); on gated profiles,
//     the main agent's first mutation of a turn gets the evidence reminder.
//   - PreCompact: saves the capsule (PreCompact's output has no effect).
//   - SubagentStop: the gate state as a notice, never a block.
//   - Stop: the gate. Mutations while there is no task block the Stop once
//     on profiles governed and production (the Stop that follows carries
//     stop_hook_active and passes); other profiles get the same text as a
//     notice.
//
// A state file that could not be read, or a failure inside these
// decisions, allows, with the error said where the event lets it be said.

// governSession is the governance decision on the session events. It never
// denies anything but a Stop, and recovers from its own failures.
func governSession(ev Event, st budgets.State, env Env) (v Verdict, next budgets.State) {
	defer func() {
		if r := recover(); r != nil {
			v, next = say(ev.Name, fmt.Sprintf("miam governance: internal error on %s (%v); allowed.", ev.Name, r)), st
		}
	}()
	next = st
	if next.Broken != "" {
		v = say(ev.Name, fmt.Sprintf("miam: the session state file was unusable (%s) and started afresh: "+
			"governance counters (mutations) restart from zero; allowed.", next.Broken))
		next.Broken = ""
	}
	var g Verdict
	g, next = governEvent(ev, next, env)
	return Combine(v, g), next
}

func governEvent(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	profile := env.Config.Governance.Profile.Or()
	switch ev.Name {
	case SessionStart:
		return sessionStart(ev, st, env)
	case UserPromptSubmit:
		if ev.IsTaskNotification() || !gated(profile) {
			return Verdict{}, st
		}
		return Verdict{Context: "miam governance: " + taskLine(currentTask(env), profile)}, st
	case PostToolUse:
		if !mutates(ev.Tool) {
			return Verdict{}, st
		}
		st.Mutations++
		// The evidence reminder (SPEC §9), once per turn, where gates block.
		if !gated(profile) || ev.Subagent() || st.ReminderTurn == st.Turn {
			return Verdict{}, st
		}
		st.ReminderTurn = st.Turn
		return Verdict{Context: fmt.Sprintf("miam governance: this turn changes the project (%s). Before you close it, run what proves "+
			"the change works (the plan's controle, the tests) and say what it showed: on profile %s the turn's end is gated.",
			ev.Tool.Name, profile)}, st
	case PostToolUseFailure:
		// A Bash command that failed may have changed files before it
		// did; a refused or failed edit changed nothing.
		if _, bash := ev.Tool.Input.(*BashInput); bash && !ev.Interrupted && mutates(ev.Tool) {
			st.Mutations++
		}
		return Verdict{}, st
	case PreCompact:
		st.Capsule = capsule(st, env)
		return Verdict{}, st
	case SubagentStop:
		if !gated(profile) && st.Mutations == 0 && len(idleWaits(st)) == 0 {
			return Verdict{}, st // nothing can be red: no need to read the plan
		}
		t := currentTask(env)
		gates := openGates(st, t, env)
		if len(gates) == 0 && !gated(profile) {
			return Verdict{}, st
		}
		// /compact runs as an internal subagent with no agent_type (FINDINGS e).
		who := "subagent " + ev.AgentType
		if ev.AgentType == "" {
			who = "an internal subagent (a compaction)"
		}
		return Verdict{Notice: fmt.Sprintf("miam governance, at the end of %s: %s", who, gateState(st, t, gates))}, st
	case Stop:
		return stopGate(ev, st, env)
	}
	return Verdict{}, st
}

// gated reports whether the profile's gates block.
func gated(p config.Profile) bool {
	return p == config.ProfileGoverned || p == config.ProfileProduction
}

// taskGate reports whether work outside any task is a red gate: always on
// gated profiles; elsewhere only while plans are on (rules.plan), since the
// remedy is to write one.
func taskGate(env Env) bool {
	return gated(env.Config.Governance.Profile.Or()) || env.Config.Rules.Plan.Or(config.Deny) != config.Off
}

// say is text for the model where the event lets a hook add context, else
// a notice for the user.
func say(ev EventName, text string) Verdict {
	switch ev {
	case SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure:
		return Verdict{Context: text}
	}
	return Verdict{Notice: text}
}

// task is the current task: a valid plan's tache, or why there is none.
type task struct {
	Tache  string
	NoTask string
}

func currentTask(env Env) task {
	data, exists := readFile(env, plans.File, true)
	if !exists {
		return task{NoTask: "no plan (" + plans.File + " is missing)"}
	}
	p, err := plans.Parse(plans.File, data)
	if err != nil {
		return task{NoTask: "the plan is broken: " + err.Error()}
	}
	return task{Tache: p.Tache}
}

// remedy is what makes a task exist.
func remedy() string {
	return fmt.Sprintf("Remedy: write %s naming the task, e.g. "+
		`{"tache": "<task>", "bouts": [{"id": 1, "quoi": "<what>", "fichier": "<file>", "controle": "<command that checks it>"}]}`+
		` (a bout you write yourself takes "moteur": "claude" and a "motif", one of %s).`,
		plans.File, strings.Join(plans.Motifs, ", "))
}

// taskLine names the task or its absence and the remedy, in one or two
// lines.
func taskLine(t task, profile config.Profile) string {
	if t.Tache != "" {
		return fmt.Sprintf("current task %s (the tache of %s).", t.Tache, plans.File)
	}
	s := fmt.Sprintf("no current task — %s. %s", t.NoTask, remedy())
	if gated(profile) {
		s += fmt.Sprintf("\nOn profile %s, ending a turn after changing files outside any task is blocked once.", profile)
	}
	return s
}

// sessionStart gives the entry persona, the directive and, after a
// compaction, the capsule.
func sessionStart(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	var parts []string
	if p := persona(env); p != "" {
		parts = append(parts, p)
	}
	profile := env.Config.Governance.Profile.Or()
	parts = append(parts, directive(profile, env.Config.Rules.ToolPolicy.Or(config.Deny), currentTask(env)))
	if ev.Source == "compact" && st.Capsule != nil {
		parts = append(parts, capsuleText(*st.Capsule))
		st.Capsule = nil
	}
	return Verdict{Context: strings.Join(parts, "\n\n")}, st
}

// maxPersona bounds the persona text given to the model.
const maxPersona = 32 << 10

// persona is the entry persona's text with its framing, a note when the
// configured file is missing, or "" when none is configured.
func persona(env Env) string {
	rel := string(env.Config.Agents.Entry)
	if rel == "" {
		return ""
	}
	data, exists := readFile(env, rel, true)
	if !exists {
		return fmt.Sprintf("[miam — entry persona] agents.entry in .miam/config.yaml names %s, which the project does not have: "+
			"no persona is adopted (none is invented). Tell the user, who may fix agents.entry.", rel)
	}
	text := strings.TrimSpace(string(data))
	if len(text) > maxPersona {
		text = text[:maxPersona] + fmt.Sprintf("\n[… cut at %d bytes: read %s for the rest]", maxPersona, rel)
	}
	return fmt.Sprintf("[miam — entry persona] This session adopts the project's entry persona (%s) in its main loop, "+
		"without a subagent: dispatching a subagent stays a choice, and the host's tools stay yours.\n\n%s", rel, text)
}

// directive is the session's governance text: profile, what is denied, the
// task or its absence and the remedy.
func directive(profile config.Profile, policy config.Mode, t task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "miam governance — profile %s.", profile)
	switch {
	case policy == config.Off:
		b.WriteString(" The tool policy is off (user config).")
	case policy == config.Measure:
		b.WriteString(" The tool policy only measures (user config): nothing is denied by it.")
	default:
		b.WriteString(" Reading secrets files (.env, private keys, credentials.json…) is denied on every profile, through any tool.")
		if profile == config.ProfileStrict {
			b.WriteString(" Destructive commands (recursive deletion, force push, terraform destroy, kubectl delete, DROP DATABASE…) ask the user first.")
		} else {
			b.WriteString(" Destructive commands (recursive deletion, force push, terraform destroy, kubectl delete, DROP DATABASE…) are denied.")
		}
	}
	line := taskLine(t, profile)
	b.WriteString("\n" + strings.ToUpper(line[:1]) + line[1:])
	return b.String()
}

// mutates reports whether a tool call may change something: a file write
// or edit, or a Bash command the classifier does not call read-only.
func mutates(t Tool) bool {
	switch in := t.Input.(type) {
	case *WriteInput, *EditInput, *MultiEditInput, *NotebookEditInput:
		return true
	case *BashInput:
		return classifyCommand(in.Command, nil, nil).Class != ReadOnly
	}
	return false
}

// openGates are the gates that are red, in words: mutations outside any
// task, and rule 8's delegations that nothing waits for.
func openGates(st budgets.State, t task, env Env) []string {
	var gates []string
	if st.Mutations > 0 && t.Tache == "" && taskGate(env) {
		gates = append(gates, fmt.Sprintf("%s outside any task", plural(st.Mutations, "change", "changes")))
	}
	for _, id := range idleWaits(st) {
		gates = append(gates, fmt.Sprintf("delegation %s running with nothing waiting for it", id))
	}
	return gates
}

// gateState is the task, the mutations and the open gates in one line.
func gateState(st budgets.State, t task, gates []string) string {
	s := "task " + t.Tache
	if t.Tache == "" {
		s = "no task — " + t.NoTask
	}
	s += fmt.Sprintf("; %s this session", plural(st.Mutations, "change", "changes"))
	if len(gates) == 0 {
		return s + "; gates: all green."
	}
	return s + "; open gates: " + strings.Join(gates, "; ") + "."
}

// capsule is what PreCompact saves.
func capsule(st budgets.State, env Env) *budgets.Capsule {
	t := currentTask(env)
	return &budgets.Capsule{Profile: string(env.Config.Governance.Profile.Or()), Tache: t.Tache, NoTask: t.NoTask,
		Mutations: st.Mutations, Gates: openGates(st, t, env)}
}

func capsuleText(c budgets.Capsule) string {
	t := task{Tache: c.Tache, NoTask: c.NoTask}
	st := budgets.State{Mutations: c.Mutations}
	return fmt.Sprintf("miam governance capsule, saved before the compaction: profile %s; %s", c.Profile, gateState(st, t, c.Gates))
}

// stopGate applies the gate to a Stop: mutations while there is no task.
// It blocks once on gated profiles; elsewhere it is a notice.
func stopGate(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	if ev.StopHookActive || ev.Subagent() || st.Mutations == 0 {
		return Verdict{}, st
	}
	t := currentTask(env)
	if t.Tache != "" {
		return Verdict{}, st
	}
	profile := env.Config.Governance.Profile.Or()
	text := fmt.Sprintf("miam governance (gate): this session made %s (file writes, mutating commands) and there is no task — %s. "+
		"Work outside any task appears nowhere. %s",
		plural(st.Mutations, "change", "changes"), t.NoTask, remedy())
	if !taskGate(env) {
		return Verdict{}, st // plans are off: no remedy to offer
	}
	if !gated(profile) {
		return Verdict{Notice: text + fmt.Sprintf(" (Profile %s: not blocked.)", profile)}, st
	}
	st.TurnOpen = true // the turn goes on
	st.ThisTurn.Denied = inc(st.ThisTurn.Denied, RuleGate)
	st.Session.Denied = inc(st.Session.Denied, RuleGate)
	return Verdict{Decision: Deny, Rule: RuleGate, Reason: text + fmt.Sprintf(
		" Then end your turn (profile %s: a session does not close on work outside any task).", profile)}, st
}

// combineGovernance merges governance's verdict into the delegation
// rules': when both block a Stop, the model reads both reasons.
func combineGovernance(rules, gate Verdict) Verdict {
	out := Combine(rules, gate)
	if rules.Decision == Deny && gate.Decision == Deny {
		out.Reason = rules.Reason + "\n\n" + gate.Reason
	}
	return out
}
