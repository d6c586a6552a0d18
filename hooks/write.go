package hooks

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"miam/budgets"
	"miam/hooks/config"
)

// change is what a file-writing call would do to one file.
type change struct {
	rel    string // project-relative, slash-separated
	inside bool
	lang   budgets.Lang
	added  budgets.Counts
	test   bool
	edit   bool   // Edit, MultiEdit, NotebookEdit: small ones are exempt
	before []byte // the file on disk, nil when new
	body   string // the text the call brings (Write content, new strings)
	anchor string // text whose position in before locates the edit
}

// Measurement is what a file-writing call adds, computed from the call and
// the files on disk only, so the hook binary can compute it while it waits
// for the session's lock (Env.Measured). Its fields are private: only
// Measure makes one.
type Measurement struct {
	c  change
	ok bool
}

// WritesFile reports whether t is a file-writing call, the only kind
// Measure has work for.
func WritesFile(t Tool) bool { return writeTarget(t) != "" }

// Measure computes what t would add to the project's files; see Env.Measured.
func Measure(t Tool, project string, files fs.FS) *Measurement {
	c, ok := measure(t, Env{Project: project, Files: files})
	return &Measurement{c: c, ok: ok}
}

// measure computes what a file-writing call adds. It reads env.Project and
// env.Files only.
func measure(t Tool, env Env) (change, bool) {
	p := writeTarget(t)
	if p == "" {
		return change{}, false
	}
	c := change{lang: budgets.LangOf(p)}
	c.rel, c.inside = relPath(env.Project, p)
	before, exists := readFile(env, c.rel, c.inside)
	if exists {
		c.before = before
	}
	switch in := t.Input.(type) {
	case *WriteInput:
		c.added = budgets.Added(c.lang, c.before, []byte(in.Content))
		c.body = in.Content
	case *EditInput:
		c.edit = true
		c.added = budgets.EditAdded(c.lang, before, exists, []budgets.Edit{{Old: in.OldString, New: in.NewString, ReplaceAll: in.ReplaceAll}})
		c.body, c.anchor = in.NewString, in.OldString
	case *MultiEditInput:
		c.edit = true
		edits := make([]budgets.Edit, len(in.Edits))
		var bodies []string
		for i, e := range in.Edits {
			edits[i] = budgets.Edit{Old: e.OldString, New: e.NewString, ReplaceAll: e.ReplaceAll}
			bodies = append(bodies, e.NewString)
		}
		c.added = budgets.EditAdded(c.lang, before, exists, edits)
		c.body = strings.Join(bodies, "\n")
		if len(in.Edits) > 0 {
			c.anchor = in.Edits[0].OldString
		}
	case *NotebookEditInput:
		c.edit = true
		c.lang = budgets.LangPython
		c.added = budgets.NotebookAdded(before, in.CellID, in.NewSource, in.EditMode)
		c.body = in.NewSource
	}
	return c, true
}

func testGlobs(cfg config.Config) []string {
	if len(cfg.TestGlobs) > 0 {
		return cfg.TestGlobs
	}
	return budgets.DefaultTestGlobs()
}

// exempt reports whether a path is outside the delegation rules (SPEC §6):
// sensitive paths, the plan, and local config.
func exempt(rel string, inside bool, cfg config.Config) bool {
	for _, g := range cfg.CheminsSensibles {
		if budgets.Match(g, rel) {
			return true
		}
	}
	if !inside {
		return false
	}
	return rel == ".claude" || strings.HasPrefix(rel, ".claude/") ||
		rel == ".miam" || strings.HasPrefix(rel, ".miam/") ||
		strings.HasPrefix(rel, "plan/")
}

func measured(env Env) *Measurement {
	if env.Measured == nil {
		return nil
	}
	return env.Measured()
}

// decideWrite applies rules 1 (tests) and 2 (write budget) to a file-writing
// call of the main agent, and charges what it lets through.
func decideWrite(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	var c change
	var ok bool
	if m := measured(env); m != nil {
		c, ok = m.c, m.ok
	} else {
		c, ok = measure(ev.Tool, env)
	}
	if !ok || exempt(c.rel, c.inside, env.Config) {
		return Verdict{}, st
	}
	v, st, denied := decidePlan(ev, c, st, env)
	if denied {
		return v, st
	}
	c.test = budgets.IsTestFile(c.rel, testGlobs(env.Config))
	cfg := env.Config
	code := c.added.Code
	if code > 0 {
		if i := coveringException(st, c.rel, code); i >= 0 {
			st, _ = useException(st, i, code)
			st = chargeHand(st, c.added, c.test)
			if ev.ToolUseID != "" {
				if st.Pending == nil {
					st.Pending = map[string]budgets.Charge{}
				}
				st.Pending[ev.ToolUseID] = budgets.Charge{Lines: handLines(c.added, c.test), Exception: i + 1, ExceptionLines: code}
			}
			return Verdict{}, st
		}
	}
	if c.test {
		if mode := cfg.Rules.Tests.Or(config.Deny); mode != config.Off && code > cfg.Budgets.TestsLinesOr() {
			v, next, denied := deny(mode, RuleTests, func() string { return testsMessage(ev, c, env) }, st)
			if denied {
				return v, next
			}
			st = next
		}
	}
	if v, st, denied = decideDocs(ev, c, st, env); denied {
		return v, st
	}
	if c.edit && code <= cfg.Budgets.SmallEditLinesOr() {
		return Verdict{}, st
	}
	if mode := cfg.Rules.WriteBudget.Or(config.Deny); mode != config.Off {
		if total := st.SinceDelegation + code; code > 0 && total > cfg.Budgets.CodeLinesOr() {
			v, next, denied := deny(mode, RuleWriteBudget, func() string { return budgetMessage(ev, c, st, env) }, st)
			if denied {
				return v, next
			}
			st = next
		}
	}
	lines := budgets.Lines{Code: code, Doc: c.added.Doc}
	if c.test {
		lines.Tests = code
	}
	charge := budgets.Charge{Lines: lines, SinceDelegation: code}
	st.SinceDelegation += code
	st.ThisTurn.Written = st.ThisTurn.Written.Add(lines)
	st.Session.Written = st.Session.Written.Add(lines)
	if ev.ToolUseID != "" {
		if st.Pending == nil {
			st.Pending = map[string]budgets.Charge{}
		}
		st.Pending[ev.ToolUseID] = charge
	}
	return Verdict{}, st
}

// apply records a rule's would-be deny. In deny mode the verdict stands; in
// measure mode it is only counted and the call goes on.
func apply(mode config.Mode, v Verdict, st budgets.State) (Verdict, budgets.State, bool) {
	if mode == config.Measure {
		st.ThisTurn.Measured = inc(st.ThisTurn.Measured, v.Rule)
		st.Session.Measured = inc(st.Session.Measured, v.Rule)
		return Verdict{}, st, false
	}
	st.ThisTurn.Denied = inc(st.ThisTurn.Denied, v.Rule)
	st.Session.Denied = inc(st.Session.Denied, v.Rule)
	return v, st, true
}

// deny is apply for a delegation deny whose message is dear to build (it
// parses the content for the ready deleguer call, reads the executor
// status): the message is built only when the rule really denies.
//
// While no executor answers (State.Fallback), a deny would leave the model
// nothing to do: the call goes on, and Decide turns the rule's count in
// Tally.Opened into a visible notice (SPEC §8 fallback).
func deny(mode config.Mode, rule string, reason func() string, st budgets.State) (Verdict, budgets.State, bool) {
	if mode == config.Deny && st.Fallback() {
		st.ThisTurn.Opened = inc(st.ThisTurn.Opened, rule)
		st.Session.Opened = inc(st.Session.Opened, rule)
		return Verdict{}, st, false
	}
	v, next, denied := apply(mode, Verdict{Decision: Deny, Rule: rule}, st)
	if denied {
		v.Reason = reason()
	}
	return v, next, denied
}

func inc(m map[string]int, k string) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[k]++
	return m
}

// sibling finds a file of the same kind next to rel, for a new file's modele.
func sibling(env Env, rel string, test bool) string {
	if env.Files == nil {
		return ""
	}
	dir := path.Dir(rel)
	entries, err := fsReadDir(env, dir)
	if err != nil {
		return ""
	}
	ext := path.Ext(rel)
	for _, e := range entries {
		name := path.Join(dir, e)
		if name == rel || path.Ext(name) != ext {
			continue
		}
		if budgets.IsTestFile(name, testGlobs(env.Config)) == test {
			return name
		}
	}
	return ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
