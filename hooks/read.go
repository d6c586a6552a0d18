package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"miam/budgets"
	"miam/hooks/config"
)

// Rule names of rules 5 and 13.
const (
	RuleReadBudget  = "read_budget"
	RuleVerdictRead = "verdict_read"
)

// What rule 5 counts, per turn of the main agent:
//   - characters: a Read's lines (from the file on disk, before the call), a
//     Grep's output and a Bash read's stdout (both after the call, from the
//     PostToolUse: they cannot be known before);
//   - lines per project file: the ranges a Read, cat, less, head, tail or
//     sed -n takes of it, added up (a range read twice counts twice).
//
// Before a call it denies when the turn's characters are spent, or when the
// call would take a file over its line budget or the turn over its
// characters. Files outside the project, exempt paths and binary files are
// not counted: they cannot be read through env.Files, or are not code.

// readSpan is what one call reads of one project file.
type readSpan struct {
	rel          string
	lines, chars int
}

// spanOf measures lines [from, from+count) of data (1-based; count 0 is to
// the end).
func spanOf(data []byte, from, count int) (lines, chars int) {
	if from < 1 {
		from = 1
	}
	n := 0
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		n++
		if n < from {
			continue
		}
		if count > 0 && n >= from+count {
			break
		}
		lines++
		chars += len(line)
	}
	return lines, chars
}

// readable returns a project file's content for rule 5, or false when the
// file is not counted.
func readable(p string, env Env) (rel string, data []byte, ok bool) {
	rel, inside := relPath(env.Project, p)
	if exempt(rel, inside, env.Config) {
		return rel, nil, false
	}
	data, exists := readFile(env, rel, inside)
	if !exists || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return rel, nil, false
	}
	return rel, data, true
}

// decideRead applies rules 13 and 5 to a Read of the main agent.
func decideRead(ev Event, in *ReadInput, st budgets.State, env Env) (Verdict, budgets.State) {
	rel, inside := relPath(env.Project, in.FilePath)
	if exempt(rel, inside, env.Config) {
		return Verdict{}, st
	}
	if mode := env.Config.Rules.VerdictRead.Or(config.Deny); mode != config.Off && in.Offset == 0 && in.Limit == 0 {
		if id, ok := st.Valides[rel]; ok {
			v, next, denied := apply(mode, Verdict{Decision: Deny, Rule: RuleVerdictRead, Reason: fmt.Sprintf(
				"miam rule 13 (verdict read): %s was written by delegation %s and passed every control. "+
					"Do not read it whole: read a preview (offset/limit around what you need) or trust the controls.", rel, id)}, st)
			if denied {
				return v, next
			}
			st = next
		}
	}
	_, data, ok := readable(in.FilePath, env)
	if !ok {
		return Verdict{}, st
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 2000 // Claude Code's Read default
	}
	lines, chars := spanOf(data, in.Offset, limit)
	return chargeReads(ev, []readSpan{{rel: rel, lines: lines, chars: chars}}, chars, st, env)
}

// chargeReads denies spans over the read budget, else charges their lines
// and chars (the characters now; 0 when they are charged after the call).
func chargeReads(ev Event, spans []readSpan, chars int, st budgets.State, env Env) (Verdict, budgets.State) {
	mode := env.Config.Rules.ReadBudget.Or(config.Deny)
	if mode == config.Off {
		return Verdict{}, st
	}
	b := env.Config.Budgets
	est := 0
	for _, s := range spans {
		est += s.chars
	}
	var reason string
	switch {
	case st.ThisTurn.ReadChars >= b.ReadCharsPerTurnOr():
		reason = fmt.Sprintf("this turn has already read %d characters; the budget is %d per turn.", st.ThisTurn.ReadChars, b.ReadCharsPerTurnOr())
	case st.ThisTurn.ReadChars+est > b.ReadCharsPerTurnOr():
		reason = fmt.Sprintf("this turn has read %d characters and this %s would add %d; the budget is %d per turn.",
			st.ThisTurn.ReadChars, ev.Tool.Name, est, b.ReadCharsPerTurnOr())
	}
	var over *readSpan
	for i, s := range spans {
		if st.ReadLines[s.rel]+s.lines > b.ReadLinesPerFileOr() {
			over = &spans[i]
			reason = fmt.Sprintf("you have read %d lines of %s this turn and this %s would add %d; the budget is %d lines per file.",
				st.ReadLines[s.rel], s.rel, ev.Tool.Name, s.lines, b.ReadLinesPerFileOr())
			break
		}
	}
	if reason != "" {
		v, next, denied := deny(mode, RuleReadBudget, func() string { return readMessage(reason, spans, over, env) }, st)
		if denied {
			return v, next
		}
		st = next
	}
	for _, s := range spans {
		if st.ReadLines == nil {
			st.ReadLines = map[string]int{}
		}
		st.ReadLines[s.rel] += s.lines
	}
	st.ThisTurn.ReadChars += chars
	st.Session.ReadChars += chars
	if _, isRead := ev.Tool.Input.(*ReadInput); isRead && ev.ToolUseID != "" && len(spans) == 1 {
		// Refunded if the Read fails (PostToolUseFailure), e.g. a file
		// too large for Claude Code's Read.
		if st.Pending == nil {
			st.Pending = map[string]budgets.Charge{}
		}
		st.Pending[ev.ToolUseID] = budgets.Charge{ReadChars: chars, ReadFile: spans[0].rel, ReadLines: spans[0].lines}
	}
	return Verdict{}, st
}

// readMessage is rule 5's deny: delegate the question, with a ready call.
func readMessage(reason string, spans []readSpan, over *readSpan, env Env) string {
	call := DelegateCall{Type: "resume", Consigne: "Summarise what these files say about <the subject you need>, citing file:line."}
	if over != nil {
		call = DelegateCall{Type: "extraction", Fichiers: []string{over.rel},
			Consigne: "From " + over.rel + ", answer: <your question>. Cite file:line for each point."}
	} else {
		for _, s := range spans {
			call.Fichiers = append(call.Fichiers, s.rel)
		}
	}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(call)
	return "miam rule 5 (read budget): " + reason + " Delegate the question instead of reading: an executor reads, you get the answer. " +
		"Copy this call and complete the consigne:\n" + deleguerTool + " " + strings.TrimSpace(js.String()) + "\n" + executorLine(env)
}

// decideGrep refuses a Grep once the turn's characters are spent; its
// output is charged after it ran.
func decideGrep(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	return chargeReads(ev, nil, 0, st, env)
}

// afterGrep charges a Grep's output.
func afterGrep(resp json.RawMessage, st budgets.State) budgets.State {
	var r struct {
		Content   string   `json:"content"`
		Filenames []string `json:"filenames"`
	}
	if json.Unmarshal(resp, &r) != nil {
		return st
	}
	n := len(r.Content)
	if r.Content == "" {
		for _, f := range r.Filenames {
			n += len(f) + 1
		}
	}
	st.ThisTurn.ReadChars += n
	st.Session.ReadChars += n
	return st
}

// afterBashRead charges what a Bash read printed.
func afterBashRead(in *BashInput, resp json.RawMessage, st budgets.State, env Env) budgets.State {
	if env.Config.Rules.ReadBudget.Or(config.Deny) == config.Off {
		return st
	}
	if _, reads, ok := bashReads(in.Command, "", Env{}); !ok || !reads {
		return st
	}
	var r struct {
		Stdout string `json:"stdout"`
	}
	if json.Unmarshal(resp, &r) != nil {
		return st
	}
	st.ThisTurn.ReadChars += len(r.Stdout)
	st.Session.ReadChars += len(r.Stdout)
	return st
}

// decideBashRead applies rule 5 to a Bash command's reads.
func decideBashRead(ev Event, in *BashInput, st budgets.State, env Env) (Verdict, budgets.State) {
	spans, reads, ok := bashReads(in.Command, ev.Cwd, env)
	if !ok || !reads {
		return Verdict{}, st
	}
	return chargeReads(ev, spans, 0, st, env)
}

// readers are the commands whose output is a file's text.
var readers = map[string]bool{
	"cat": true, "less": true, "more": true, "bat": true, "head": true, "tail": true, "sed": true,
	"awk": true, "gawk": true, "grep": true, "egrep": true, "rg": true, "nl": true,
}

// bashReads finds the reads of a command line whose output reaches the
// model (not piped into another command, not redirected to a file): spans
// of project files it can measure, and whether it reads at all.
func bashReads(cmd, cwd string, env Env) (spans []readSpan, reads bool, ok bool) {
	f, err := parseShell(cmd)
	if err != nil {
		return nil, false, false
	}
	hidden := map[*syntax.CallExpr]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				syntax.Walk(n.X, func(m syntax.Node) bool {
					if c, ok := m.(*syntax.CallExpr); ok {
						hidden[c] = true
					}
					return true
				})
			}
		case *syntax.Stmt:
			for _, r := range n.Redirs {
				switch r.Op {
				case syntax.RdrOut, syntax.AppOut, syntax.ClbOut, syntax.RdrAll, syntax.AppAll:
					if r.N == nil || r.N.Value == "1" {
						if c, ok := n.Cmd.(*syntax.CallExpr); ok {
							hidden[c] = true
						}
					}
				}
			}
		}
		return true
	})
	if cwd == "" {
		cwd = env.Project
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		c, isCall := n.(*syntax.CallExpr)
		if !isCall || hidden[c] || len(c.Args) == 0 {
			return true
		}
		words := make([]string, len(c.Args))
		for i, w := range c.Args {
			words[i] = w.Lit()
			if words[i] == "" {
				words[i] = unquoted(w)
			}
		}
		name := path.Base(words[0])
		if name == "cd" && len(words) == 2 && words[1] != "" && cwd != "" {
			// Followed in source order: `cd src && cat a.py`.
			if path.IsAbs(words[1]) {
				cwd = words[1]
			} else {
				cwd = path.Join(cwd, words[1])
			}
			return true
		}
		if !readers[name] {
			return true
		}
		if name == "sed" && (hasFlag(words[1:], "-i") || hasFlag(words[1:], "--in-place")) {
			return true // a write: rule 4's
		}
		reads = true
		from, count, files := readRange(name, words[1:])
		for _, a := range files {
			if a == "" || a == "-" {
				continue
			}
			if !path.IsAbs(a) && cwd != "" {
				a = path.Join(cwd, a)
			}
			rel, data, ok := readable(a, env)
			if !ok {
				continue
			}
			f, n := from, count
			if name == "tail" && from <= 0 {
				total, _ := spanOf(data, 1, 0)
				f, n = max(1, total-count+1), count
			}
			lines, chars := spanOf(data, f, n)
			spans = append(spans, readSpan{rel: rel, lines: lines, chars: chars})
		}
		return true
	})
	return spans, reads, true
}

func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag) && len(flag) == 2 && !strings.HasPrefix(a, "--") {
			return true
		}
	}
	return false
}

// readRange reads a reader's arguments: the 1-based first line and the
// count it prints of each file (0: to the end; for tail, from <= 0 means
// the last count lines), and the files. grep, rg and awk print an unknown
// part: they name no file here, their output is charged after.
func readRange(name string, args []string) (from, count int, files []string) {
	switch name {
	case "grep", "egrep", "rg", "awk", "gawk":
		return 1, 0, nil
	case "head", "tail":
		from, count = 1, 10
		if name == "tail" {
			from = 0
		}
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case (a == "-n" || a == "--lines") && i+1 < len(args):
				i++
				from, count = headTail(name, args[i], from, count)
			case strings.HasPrefix(a, "--lines="):
				from, count = headTail(name, strings.TrimPrefix(a, "--lines="), from, count)
			case strings.HasPrefix(a, "-n"):
				from, count = headTail(name, a[2:], from, count)
			case len(a) > 1 && a[0] == '-' && isDigits(a[1:]):
				count, _ = strconv.Atoi(a[1:])
			case strings.HasPrefix(a, "-"):
			default:
				files = append(files, a)
			}
		}
		return from, count, files
	case "sed":
		quiet := false
		script := ""
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-n" || a == "--quiet" || a == "--silent":
				quiet = true
			case a == "-e" && i+1 < len(args):
				i++
				script = args[i]
			case len(a) > 2 && a[0] == '-' && a[1] != '-':
				// Combined short flags: -ne SCRIPT, -En.
				quiet = quiet || strings.ContainsRune(a, 'n')
				if strings.HasSuffix(a, "e") && i+1 < len(args) {
					i++
					script = args[i]
				}
			case strings.HasPrefix(a, "-"):
			case script == "":
				script = a
			default:
				files = append(files, a)
			}
		}
		if quiet {
			if a, b, ok := sedPrintRange(script); ok {
				return a, b - a + 1, files
			}
		}
		return 1, 0, files
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			files = append(files, a)
		}
	}
	return 1, 0, files
}

func headTail(name, v string, from, count int) (int, int) {
	if name == "tail" && strings.HasPrefix(v, "+") {
		n, err := strconv.Atoi(v[1:])
		if err != nil {
			return from, count
		}
		return max(1, n), 0
	}
	n, err := strconv.Atoi(strings.TrimPrefix(v, "-"))
	if err != nil {
		return from, count
	}
	return from, n
}

// sedPrintRange reads `A,Bp` or `Ap`.
func sedPrintRange(script string) (a, b int, ok bool) {
	s, found := strings.CutSuffix(strings.TrimSpace(script), "p")
	if !found {
		return 0, 0, false
	}
	x, y, comma := strings.Cut(s, ",")
	a, err := strconv.Atoi(x)
	if err != nil || a < 1 {
		return 0, 0, false
	}
	if !comma {
		return a, a, true
	}
	if b, err = strconv.Atoi(y); err != nil || b < a {
		return 0, 0, false
	}
	return a, b, true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
