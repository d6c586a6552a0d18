package hooks

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"miam/budgets"
	"miam/hooks/config"
)

// RuleShellWrites is rule 4's name in config and traces.
const RuleShellWrites = "shell_writes"

// maxSnapshot bounds the content kept in the state for a file counted after
// the call ran; a bigger file is not re-counted (it is generated, not typed).
const maxSnapshot = 1 << 20

// What rule 4 counts (SPEC §6, "shell writes count too"):
//   - files with a grammar (budgets.LangOf), inside or outside the project,
//     like Write;
//   - other files of the project when the command carries their text
//     (here-doc, echo, printf, cp of a readable file): non-blank lines, as
//     for Write — but not what a program prints into them;
//   - never /dev/*, the local config and plan (exempt), dependency and build
//     directories, nor logs and data (ignoredExt).
var (
	ignoredDirs = map[string]bool{
		".git": true, "node_modules": true, "__pycache__": true, ".venv": true, "venv": true,
		"dist": true, "build": true, "target": true, ".cache": true, ".pytest_cache": true,
		".mypy_cache": true, ".ruff_cache": true, "coverage": true, ".next": true, ".tox": true,
	}
	ignoredExt = map[string]bool{
		".log": true, ".txt": true, ".out": true, ".err": true, ".tmp": true, ".pid": true,
		".lock": true, ".csv": true, ".tsv": true, ".jsonl": true, ".bak": true, ".orig": true,
		".rej": true, ".swp": true, ".diff": true, ".patch": true, ".prof": true, ".cov": true,
	}
)

// classify decides whether a file a Bash command writes is charged, and
// returns its project-relative name.
func classify(abs string, known bool, env Env) (rel string, ok bool) {
	if abs == "" || abs == "/dev" || strings.HasPrefix(abs, "/dev/") || strings.HasPrefix(abs, "/proc/") {
		return "", false
	}
	rel, inside := relPath(env.Project, abs)
	if strings.HasPrefix(abs, "~") {
		rel, inside = abs, false
	}
	if exempt(rel, inside, env.Config) {
		return rel, false
	}
	for _, seg := range strings.Split(rel, "/") {
		if ignoredDirs[seg] {
			return rel, false
		}
	}
	if budgets.LangOf(rel) != "" {
		// Counted after it ran only inside the project, where it can be
		// read again.
		return rel, known || inside
	}
	ext := strings.ToLower(path.Ext(rel))
	return rel, inside && known && !ignoredExt[ext]
}

// shellTarget is one charged file of a Bash command.
type shellTarget struct {
	c     change
	after bool // counted after the call ran
	how   string
}

// shellTargets measures what a planned command adds to each charged file.
func shellTargets(p shellPlan, env Env) []shellTarget {
	var out []shellTarget
	files := p.files
	if p.unparsed != nil {
		files = append(files, p.unparsed)
	}
	for _, f := range files {
		rel, ok := classify(f.abs, f.known, env)
		if f == p.unparsed {
			// Charged even without a named file: it may be anything.
			ok = true
			if rel == "" || strings.HasPrefix(rel, "/dev") {
				rel = "<file>"
			}
		}
		if !ok {
			continue
		}
		_, inside := relPath(env.Project, f.abs)
		t := shellTarget{how: strings.Join(f.how, ", "), after: !f.known}
		t.c = change{rel: rel, inside: inside && f != p.unparsed, lang: budgets.LangOf(rel), edit: f.inPlace}
		t.c.test = budgets.IsTestFile(rel, testGlobs(env.Config))
		if before, exists := readFile(env, rel, t.c.inside); exists {
			t.c.before = before
		}
		if f.known {
			t.c.added = budgets.Added(t.c.lang, []byte(f.ref), []byte(f.content))
			t.c.body = f.content
			if t.c.added.Code == 0 && t.c.added.Doc == 0 {
				continue
			}
		} else if len(t.c.before) > maxSnapshot {
			continue
		}
		out = append(out, t)
	}
	return out
}

// decideShell applies rule 4 (and rule 1 to test files) to a Bash call of
// the main agent, and charges what it lets through. Counts known before the
// call runs are charged now and not refunded when the command fails (a
// failed command may have written its redirections); the others are
// snapshot and charged when it ends (settleShell).
func decideShell(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	in, _ := ev.Tool.Input.(*BashInput)
	mode := env.Config.Rules.ShellWrites.Or(config.Deny)
	if in == nil || mode == config.Off {
		return Verdict{}, st
	}
	targets := shellTargets(planShell(in.Command, ev.Cwd, env), env)
	if len(targets) == 0 {
		return Verdict{}, st
	}
	cfg := env.Config
	if tm := cfg.Rules.Tests.Or(config.Deny); tm != config.Off {
		for _, t := range targets {
			if t.c.test && !t.after && t.c.added.Code > cfg.Budgets.TestsLinesOr() {
				v, next, denied := deny(tm, RuleTests, func() string { return shellTestsMessage(t, env) }, st)
				if denied {
					return v, next
				}
				st = next
				break
			}
		}
	}
	code, unknownCount := 0, false
	var charged []shellTarget
	for _, t := range targets {
		switch {
		case t.after:
			unknownCount = unknownCount || coveringException(st, t.c.rel, 0) < 0
		case t.c.edit && t.c.added.Code <= cfg.Budgets.SmallEditLinesOr():
			// A small in-place edit is exempt, like a small Edit.
		case coveringException(st, t.c.rel, t.c.added.Code) >= 0:
			st, _ = useException(st, coveringException(st, t.c.rel, t.c.added.Code), t.c.added.Code)
			st = chargeHand(st, t.c.added, t.c.test)
		default:
			code += t.c.added.Code
			charged = append(charged, t)
		}
	}
	need := code
	if unknownCount {
		need++ // at least one line, so a spent budget stops it
	}
	if need > 0 && st.SinceDelegation+need > cfg.Budgets.CodeLinesOr() {
		v, next, denied := deny(mode, RuleShellWrites, func() string { return shellBudgetMessage(targets, code, st, env) }, st)
		if denied {
			return v, next
		}
		st = next
	}
	for _, t := range charged {
		st = chargeShell(st, t.c.added, t.c.test)
	}
	if ev.ToolUseID == "" {
		return Verdict{}, st
	}
	for _, t := range targets {
		if !t.after || !t.c.inside {
			continue
		}
		if st.Snapshots == nil {
			st.Snapshots = map[string][]budgets.Snapshot{}
		}
		st.Snapshots[ev.ToolUseID] = append(st.Snapshots[ev.ToolUseID], budgets.Snapshot{
			Path: t.c.rel, Before: string(t.c.before), How: t.how + " (counted after it ran)", Edit: t.c.edit, Test: t.c.test,
			Exception: coveringException(st, t.c.rel, 0) + 1,
		})
	}
	return Verdict{}, st
}

func chargeShell(st budgets.State, added budgets.Counts, test bool) budgets.State {
	lines := budgets.Lines{Code: added.Code, Doc: added.Doc}
	if test {
		lines.Tests = added.Code
	}
	st.SinceDelegation += added.Code
	st.ThisTurn.Written = st.ThisTurn.Written.Add(lines)
	st.Session.Written = st.Session.Written.Add(lines)
	return st
}

// settleShell charges, when a Bash call ends (ran or failed), the files it
// wrote in ways not counted before it ran: each file on disk now against
// its snapshot.
func settleShell(ev Event, st budgets.State, env Env) budgets.State {
	if ev.Name != PostToolUse && ev.Name != PostToolUseFailure {
		return st
	}
	snaps, ok := st.Snapshots[ev.ToolUseID]
	if !ok {
		return st
	}
	delete(st.Snapshots, ev.ToolUseID)
	if len(st.Snapshots) == 0 {
		st.Snapshots = nil
	}
	for _, s := range snaps {
		after, exists := readFile(env, s.Path, true)
		if !exists {
			continue
		}
		added := budgets.Added(budgets.LangOf(s.Path), []byte(s.Before), after)
		if s.Edit && added.Code <= env.Config.Budgets.SmallEditLinesOr() {
			continue
		}
		if s.Exception > 0 && s.Exception <= len(st.Exceptions) {
			var over int
			st, over = useException(st, s.Exception-1, added.Code)
			st = chargeHand(st, added, s.Test)
			st.SinceDelegation += over
			continue
		}
		st = chargeShell(st, added, s.Test)
	}
	return st
}

func shellTestsMessage(t shellTarget, env Env) string {
	var b strings.Builder
	fmt.Fprintf(&b, "miam rule 1 (tests): tests are delegated, not written by hand. This Bash command writes %s to the test file %s (%s); the limit is %d per call.\n",
		plural(t.c.added.Code, "code line", "code lines"), t.c.rel, t.how, env.Config.Budgets.TestsLinesOr())
	writeCall(&b, t.c, env, "tests")
	return b.String()
}

func shellBudgetMessage(targets []shellTarget, code int, st budgets.State, env Env) string {
	var b strings.Builder
	sorted := append([]shellTarget(nil), targets...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].c.added.Code > sorted[j].c.added.Code })
	var parts []string
	for _, t := range sorted {
		if t.after {
			parts = append(parts, fmt.Sprintf("an unknown number of lines to %s (%s, counted after it runs)", t.c.rel, t.how))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s to %s (%s)", plural(t.c.added.Code, "code line", "code lines"), t.c.rel, t.how))
	}
	fmt.Fprintf(&b, "miam rule 4 (shell writes): %d code lines since your last delegation; budget %d. This Bash command writes %s (you had written %d). The shell is no way round the write budget.\n",
		st.SinceDelegation+code, env.Config.Budgets.CodeLinesOr(), strings.Join(parts, "; "), st.SinceDelegation)
	kind := "code"
	if sorted[0].c.test {
		kind = "tests"
	}
	writeCall(&b, sorted[0].c, env, kind)
	return b.String()
}
