package hooks

import (
	"path"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Rule 4 reads a Bash command as the shell would: it parses it into a syntax
// tree (mvdan.cc/sh, the parser behind shfmt) and runs it in the abstract,
// tracking what each command would print and what each redirection, tee,
// sed -i, cp… would leave in each file. The result is a shellPlan: the final
// content of every file the command writes when that can be known before it
// runs, or a mark that it must be counted after it ran.

// shellText is what a command prints, or a file holds: ok is false when it
// cannot be known before the command runs.
type shellText struct {
	s  string
	ok bool
}

func known(s string) shellText { return shellText{s: s, ok: true} }

var unknown = shellText{}

// shellFile is one file as the command leaves it.
type shellFile struct {
	abs     string // absolute, cleaned; or "~/…" for the home directory
	content string // final content, when known
	known   bool   // content is known; otherwise the file is counted after it ran
	// ref is what new lines are counted against: the file before the
	// command, or, for content moved or copied from lines already counted,
	// that content (so a rename adds nothing).
	ref     string
	inPlace bool     // sed -i, perl -pi: an edit, small ones are exempt like Edit's
	how     []string // the shell features that wrote it, for messages
}

// shellPlan is what a Bash command would write.
type shellPlan struct {
	files []*shellFile
	// unparsed holds the text an unparseable command carries (here-doc
	// bodies, multi-line quoted strings), charged as a write to guess (or to
	// no named file).
	unparsed *shellFile
}

// maxShellDepth bounds the nesting of bash -c / eval strings.
const maxShellDepth = 8

// shellEval runs a command in the abstract.
type shellEval struct {
	env     Env
	src     string // the source being evaluated, for here-doc bodies and unparsed words
	files   map[string]*shellFile
	order   []string
	vars    map[string]string
	depth   int
	counted func(abs string, known bool) bool // whether abs is a charged file
	plan    shellPlan
}

// shellCtx is the part of the shell's state a subshell copies.
type shellCtx struct {
	dir  string // working directory
	loop bool   // inside a loop or function: writes may repeat
}

// planShell computes what command would write when run in cwd (the payload
// cwd; the project when empty). It never panics on any input.
func planShell(command, cwd string, env Env) shellPlan {
	e := &shellEval{env: env, files: map[string]*shellFile{}, vars: map[string]string{}}
	e.counted = func(abs string, known bool) bool {
		_, ok := classify(abs, known, env)
		return ok
	}
	if cwd == "" {
		cwd = env.Project
	}
	c := &shellCtx{dir: path.Clean("/" + strings.TrimPrefix(cwd, "/"))}
	if cwd == "" {
		c.dir = "."
	}
	e.script(command, c, unknown)
	for _, k := range e.order {
		e.plan.files = append(e.plan.files, e.files[k])
	}
	return e.plan
}

// parser parses Bash; it keeps comments out and is cheap to make.
func parseShell(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// script parses and runs one shell program (the command, a bash -c string,
// an eval's words). A program that does not parse runs up to the line
// before the error, as bash does, and the rest is charged by the text it
// carries.
func (e *shellEval) script(src string, c *shellCtx, stdin shellText) shellText {
	if e.depth >= maxShellDepth {
		e.carried(src, c)
		return unknown
	}
	e.depth++
	defer func() { e.depth-- }()
	f, err := parseShell(src)
	if err != nil {
		rest := src
		if pe, ok := err.(syntax.ParseError); ok && pe.Pos.Line() > 1 {
			lines := strings.SplitAfter(src, "\n")
			n := min(int(pe.Pos.Line())-1, len(lines))
			prefix := strings.Join(lines[:n], "")
			if pf, perr := parseShell(prefix); perr == nil {
				saved := e.src
				e.src = prefix
				e.stmts(pf.Stmts, c, stdin)
				e.src = saved
				rest = strings.Join(lines[n:], "")
			}
		}
		e.carried(rest, c)
		return unknown
	}
	saved := e.src
	e.src = src
	defer func() { e.src = saved }()
	return e.stmts(f.Stmts, c, stdin)
}

func (e *shellEval) stmts(list []*syntax.Stmt, c *shellCtx, stdin shellText) shellText {
	out := known("")
	for _, s := range list {
		out = concat(out, e.stmt(s, c, stdin))
	}
	return out
}

func concat(a, b shellText) shellText {
	if !a.ok || !b.ok {
		return unknown
	}
	return known(a.s + b.s)
}

// stmt runs one statement with its redirections: here-docs and < feed
// stdin, >, >>, &> send what the command prints to a file.
func (e *shellEval) stmt(s *syntax.Stmt, c *shellCtx, stdin shellText) shellText {
	if s == nil {
		return known("")
	}
	type target struct {
		name   string
		append bool
	}
	var outs []target
	for _, r := range s.Redirs {
		e.substs(r.Word, c)
		e.substs(r.Hdoc, c)
		fd := ""
		if r.N != nil {
			fd = r.N.Value
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if fd == "" || fd == "0" {
				stdin = known(e.heredoc(r.Hdoc))
			}
		case syntax.WordHdoc:
			if fd == "" || fd == "0" {
				w, _ := e.word(r.Word)
				stdin = known(w + "\n")
			}
		case syntax.RdrIn:
			if fd == "" || fd == "0" {
				name, ok := e.word(r.Word)
				stdin = unknown
				if ok {
					stdin = e.read(c, name)
				}
			}
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
			// 2> and other descriptors carry errors, not code.
			if fd != "" && fd != "1" {
				continue
			}
			name, _ := e.word(r.Word)
			app := r.Op == syntax.AppOut || r.Op == syntax.AppAll || r.Op == syntax.AppAllClob
			outs = append(outs, target{name, app})
		case syntax.DplOut:
			// >&2, 2>&1 duplicate descriptors; bash reads >&file as &>file.
			name, _ := e.word(r.Word)
			if (fd == "" || fd == "1") && name != "-" && strings.Trim(name, "0123456789") != "" {
				outs = append(outs, target{name, false})
			}
		}
	}
	out := e.command(s.Cmd, c, stdin)
	if len(outs) == 0 {
		return out
	}
	// The last redirection of stdout gets the output; the earlier ones
	// are only created or truncated.
	for i, t := range outs {
		text := out
		if i < len(outs)-1 {
			text = known("")
		}
		e.write(c, t.name, text, t.append, "redirection", false)
	}
	return known("")
}

// command runs one command and returns what it prints.
func (e *shellEval) command(cmd syntax.Command, c *shellCtx, stdin shellText) shellText {
	switch x := cmd.(type) {
	case nil:
		return known("")
	case *syntax.CallExpr:
		for _, a := range x.Assigns {
			e.assign(a, c)
		}
		if len(x.Args) == 0 {
			return known("")
		}
		return e.call(x.Args, c, stdin)
	case *syntax.BinaryCmd:
		if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
			// Each side of a pipe is a subshell: a cd there stays there.
			lc, rc := *c, *c
			return e.stmt(x.Y, &rc, e.stmt(x.X, &lc, stdin))
		}
		l := e.stmt(x.X, c, stdin)
		return concat(l, e.stmt(x.Y, c, stdin))
	case *syntax.Subshell:
		sc := *c
		return e.stmts(x.Stmts, &sc, stdin)
	case *syntax.Block:
		return e.stmts(x.Stmts, c, stdin)
	case *syntax.IfClause:
		// Both branches are taken: either may run.
		for cl := x; cl != nil; cl = cl.Else {
			e.stmts(cl.Cond, c, stdin)
			e.stmts(cl.Then, c, stdin)
		}
		return unknown
	case *syntax.WhileClause:
		lc := *c
		lc.loop = true
		e.stmts(x.Cond, &lc, stdin)
		e.stmts(x.Do, &lc, stdin)
		return unknown
	case *syntax.ForClause:
		lc := *c
		lc.loop = true
		if it, ok := x.Loop.(*syntax.WordIter); ok {
			for _, w := range it.Items {
				e.substs(w, c)
			}
		}
		e.stmts(x.Do, &lc, stdin)
		return unknown
	case *syntax.CaseClause:
		e.substs(x.Word, c)
		for _, it := range x.Items {
			e.stmts(it.Stmts, c, stdin)
		}
		return unknown
	case *syntax.FuncDecl:
		// A function may be called any number of times.
		lc := *c
		lc.loop = true
		e.stmt(x.Body, &lc, stdin)
		return known("")
	case *syntax.DeclClause:
		for _, a := range x.Args {
			e.assign(a, c)
		}
		return known("")
	case *syntax.TimeClause:
		return e.stmt(x.Stmt, c, stdin)
	case *syntax.CoprocClause:
		return e.stmt(x.Stmt, c, unknown)
	default:
		e.substs(cmd, c)
		return unknown
	}
}

// assign records a plain variable, so that f=x.py; cat > $f is seen.
func (e *shellEval) assign(a *syntax.Assign, c *shellCtx) {
	if a == nil {
		return
	}
	e.substs(a.Value, c)
	if a.Name == nil {
		return
	}
	if v, ok := e.word(a.Value); ok && a.Array == nil && a.Index == nil {
		if a.Append {
			v = e.vars[a.Name.Value] + v
		}
		e.vars[a.Name.Value] = v
		return
	}
	delete(e.vars, a.Name.Value)
}

// substs runs the command and process substitutions inside a node.
func (e *shellEval) substs(n syntax.Node, c *shellCtx) {
	if n == nil {
		return
	}
	if w, ok := n.(*syntax.Word); ok && w == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			sc := *c
			e.stmts(x.Stmts, &sc, unknown)
			return false
		case *syntax.ProcSubst:
			sc := *c
			e.stmts(x.Stmts, &sc, unknown)
			return false
		}
		return true
	})
}

// source is a node's text as typed (a here-doc body keeps its $vars).
func (e *shellEval) source(n syntax.Node) string {
	if n == nil {
		return ""
	}
	if w, ok := n.(*syntax.Word); ok && w == nil {
		return ""
	}
	from, to := int(n.Pos().Offset()), int(n.End().Offset())
	if from < 0 || to > len(e.src) || from > to {
		return ""
	}
	return e.src[from:to]
}

// heredoc is a here-doc's body as typed: its $vars and $(…) are kept.
// The body word's own end position runs past the delimiter line, so the
// body is rebuilt from its parts.
func (e *shellEval) heredoc(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
			continue
		}
		b.WriteString(e.source(p))
	}
	return b.String()
}

// word is a word's value after quote removal. ok is false when it holds an
// expansion that cannot be resolved; the expansion is then kept as typed.
func (e *shellEval) word(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	var b strings.Builder
	ok := true
	for _, p := range w.Parts {
		e.part(&b, p, false, &ok)
	}
	return b.String(), ok
}

func (e *shellEval) part(b *strings.Builder, p syntax.WordPart, quoted bool, ok *bool) {
	switch x := p.(type) {
	case *syntax.Lit:
		b.WriteString(unescapeLit(x.Value, quoted))
	case *syntax.SglQuoted:
		if x.Dollar {
			b.WriteString(ansiC(x.Value))
		} else {
			b.WriteString(x.Value)
		}
	case *syntax.DblQuoted:
		for _, q := range x.Parts {
			e.part(b, q, true, ok)
		}
	case *syntax.ParamExp:
		if x.Param != nil && x.Exp == nil && x.Repl == nil && x.Slice == nil && x.Index == nil && !x.Length && !x.Excl {
			if v, found := e.vars[x.Param.Value]; found {
				b.WriteString(v)
				return
			}
		}
		*ok = false
		b.WriteString(e.source(x))
	default:
		*ok = false
		b.WriteString(e.source(p))
	}
}

// unescapeLit removes the backslashes the shell removes.
func unescapeLit(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			n := s[i+1]
			if n == '\n' {
				i++
				continue
			}
			if !quoted || strings.IndexByte("\"\\$`", n) >= 0 {
				b.WriteByte(n)
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC expands the escapes of $'…' that matter for line counting.
func ansiC(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`, `\'`, `'`, `\"`, `"`).Replace(s)
}

// abs resolves a path the way the running command would see it.
func (e *shellEval) abs(c *shellCtx, p string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		return path.Clean(p)
	case path.IsAbs(p):
		return path.Clean(p)
	}
	return path.Join(c.dir, p)
}

// file returns the state of the file at abs, read from disk the first time.
func (e *shellEval) file(abs string) *shellFile {
	if f, ok := e.files[abs]; ok {
		return f
	}
	data, _ := e.disk(abs)
	f := &shellFile{abs: abs, content: string(data), known: true, ref: string(data)}
	e.files[abs] = f
	e.order = append(e.order, abs)
	return f
}

// disk reads a file of the project as it is before the command.
func (e *shellEval) disk(abs string) ([]byte, bool) {
	if strings.HasPrefix(abs, "~") {
		return nil, false
	}
	rel, inside := relPath(e.env.Project, abs)
	return readFile(e.env, rel, inside)
}

// read is a file's content as the command would read it: written earlier
// in the command, else on disk.
func (e *shellEval) read(c *shellCtx, name string) shellText {
	abs := e.abs(c, name)
	if f, ok := e.files[abs]; ok {
		if f.known {
			return known(f.content)
		}
		return unknown
	}
	if data, ok := e.disk(abs); ok {
		return known(string(data))
	}
	return unknown
}

// write records that the command writes text to name.
func (e *shellEval) write(c *shellCtx, name string, text shellText, appendTo bool, how string, inPlace bool) {
	if name == "" || name == "-" {
		return
	}
	abs := e.abs(c, name)
	if abs == "/dev" || strings.HasPrefix(abs, "/dev/") {
		return
	}
	f := e.file(abs)
	switch {
	case !text.ok || c.loop:
		// A loop may write any number of times: count after it ran.
		f.known = false
	case appendTo:
		f.content += text.s
	default:
		f.content = text.s
	}
	f.inPlace = f.inPlace || inPlace
	if !contains(f.how, how) {
		f.how = append(f.how, how)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Here-doc openers and redirection targets, for commands that do not parse.
// Regexps are compiled on first use: the hook process must not pay for
// them on the calls that never need them.
var (
	heredocRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)['"]?`) })
	redirectRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:>>?|\btee\s+(?:-a\s+)?)\s*['"]?([^\s'";|&<>()]+)`)
	})
)

// carried charges an unparseable program by the text it carries: the
// bodies of its here-docs and its quoted strings that span lines, as
// non-blank lines of the first file it redirects to (or of no named file).
// bash runs a program line by line, so what precedes the error may already
// have run; what follows is the best guess there is.
func (e *shellEval) carried(src string, c *shellCtx) {
	var body strings.Builder
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		m := heredocRE().FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != m[2]; i++ {
			body.WriteString(lines[i])
			body.WriteByte('\n')
		}
	}
	if body.Len() == 0 {
		body.WriteString(multilineQuoted(src))
	}
	if strings.TrimSpace(body.String()) == "" {
		return
	}
	name := ""
	for _, m := range redirectRE().FindAllStringSubmatch(src, -1) {
		if !strings.HasPrefix(m[1], "/dev/") && !strings.HasPrefix(m[1], "&") {
			name = e.abs(c, m[1])
			break
		}
	}
	if e.plan.unparsed == nil {
		e.plan.unparsed = &shellFile{abs: name, known: true, how: []string{"unparsed command"}}
	}
	e.plan.unparsed.content += body.String()
}

// multilineQuoted returns the quoted strings of src that span lines.
func multilineQuoted(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		q := src[i]
		if q != '\'' && q != '"' {
			continue
		}
		j := strings.IndexByte(src[i+1:], q)
		if j < 0 {
			b.WriteString(src[i+1:])
			break
		}
		s := src[i+1 : i+1+j]
		if strings.Contains(s, "\n") {
			b.WriteString(s)
			b.WriteByte('\n')
		}
		i += j + 1
	}
	return b.String()
}
