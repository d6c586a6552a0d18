package hooks

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// call runs a simple command: what it prints, and what it writes.
func (e *shellEval) call(words []*syntax.Word, c *shellCtx, stdin shellText) shellText {
	args := make([]string, 0, len(words))
	for _, w := range words {
		e.substs(w, c)
		v, _ := e.word(w)
		args = append(args, v)
	}
	args = unwrap(args)
	if len(args) == 0 {
		return known("")
	}
	name := path.Base(args[0])
	switch {
	case name == "cd" || name == "pushd":
		if len(args) > 1 && args[1] != "-" {
			c.dir = e.abs(c, args[1])
		} else {
			c.dir = "~"
		}
		return known("")
	case name == "echo":
		return known(echo(args[1:]))
	case name == "printf":
		return printf(args[1:])
	case name == "cat":
		return e.cat(args[1:], c, stdin)
	case name == "tee":
		return e.tee(args[1:], c, stdin)
	case name == "sed" || name == "gsed":
		return e.sed(args[1:], c, stdin)
	case name == "perl":
		return e.perl(args[1:], c, stdin)
	case isInterpreter(name):
		return e.interpreter(name, args[1:], c, stdin)
	case name == "cp" || name == "mv" || name == "install":
		e.copy(name, args[1:], c)
		return known("")
	case name == "git":
		return e.git(args[1:], c, stdin)
	case name == "patch":
		e.patch(args[1:], c, stdin)
		return unknown
	case isShell(name):
		return e.shell(args[1:], c, stdin)
	case name == "eval":
		return e.script(strings.Join(args[1:], " "), c, stdin)
	case name == "dd":
		for _, a := range args[1:] {
			if of, ok := strings.CutPrefix(a, "of="); ok {
				e.write(c, of, unknown, false, "dd", false)
			}
		}
		return unknown
	case name == "true" || name == ":" || name == "mkdir" || name == "touch" || name == "export" || name == "set":
		return known("")
	}
	return unknown
}

// unwrap drops the commands that run another one: sudo, env, nohup, time…
func unwrap(args []string) []string {
	for len(args) > 0 {
		switch path.Base(args[0]) {
		case "sudo", "doas":
			args = args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				if (args[0] == "-u" || args[0] == "-g") && len(args) > 1 {
					args = args[1:]
				}
				args = args[1:]
			}
		case "env":
			args = args[1:]
			for len(args) > 0 && (strings.HasPrefix(args[0], "-") || strings.Contains(args[0], "=")) {
				args = args[1:]
			}
		case "nohup", "time", "command", "exec", "builtin":
			args = args[1:]
		case "nice", "timeout", "stdbuf", "ionice":
			args = args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				args = args[1:]
			}
			if len(args) > 0 && startsWithDigit(args[0]) {
				args = args[1:] // timeout's duration, nice -n's value
			}
		default:
			return args
		}
	}
	return args
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// echo prints its arguments; -e expands \n.
func echo(args []string) string {
	nl, esc := true, false
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
		nl = nl && !strings.Contains(args[0], "n")
		esc = esc || strings.Contains(args[0], "e")
		args = args[1:]
	}
	s := strings.Join(args, " ")
	if esc {
		s = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(s)
	}
	if nl {
		s += "\n"
	}
	return s
}

// printf prints its format once per group of arguments, as the shell does;
// only the directives' argument counts matter for lines.
func printf(args []string) shellText {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return known("")
	}
	format, rest := args[0], args[1:]
	var b strings.Builder
	for pass := 0; pass < 1000; pass++ {
		used := 0
		for i := 0; i < len(format); i++ {
			ch := format[i]
			switch {
			case ch == '\\' && i+1 < len(format):
				i++
				switch format[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(format[i])
				}
			case ch == '%' && i+1 < len(format):
				j := i + 1
				for j < len(format) && strings.IndexByte("-+ #0123456789.", format[j]) >= 0 {
					j++
				}
				if j >= len(format) {
					i = j
					continue
				}
				if format[j] == '%' {
					b.WriteByte('%')
				} else {
					if used < len(rest) {
						arg := rest[used]
						if format[j] == 'b' {
							arg = strings.ReplaceAll(arg, `\n`, "\n")
						}
						b.WriteString(arg)
					}
					used++
				}
				i = j
			default:
				b.WriteByte(ch)
			}
		}
		rest = rest[min(used, len(rest)):]
		if used == 0 || len(rest) == 0 {
			break
		}
	}
	return known(b.String())
}

// cat prints its files, or its stdin.
func (e *shellEval) cat(args []string, c *shellCtx, stdin shellText) shellText {
	out := known("")
	files := 0
	for _, a := range args {
		if strings.HasPrefix(a, "-") && a != "-" {
			continue
		}
		files++
		if a == "-" {
			out = concat(out, stdin)
			continue
		}
		out = concat(out, e.read(c, a))
	}
	if files == 0 {
		return stdin
	}
	return out
}

// tee writes its stdin to each file and prints it.
func (e *shellEval) tee(args []string, c *shellCtx, stdin shellText) shellText {
	app := false
	for _, a := range args {
		switch {
		case a == "-a" || a == "--append":
			app = true
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			e.write(c, a, stdin, app, "tee", false)
		}
	}
	return stdin
}

// sed runs a script of plain s/// commands on its files (in place with -i)
// or its stdin; any other script is counted after it ran.
func (e *shellEval) sed(args []string, c *shellCtx, stdin shellText) shellText {
	var scripts, files []string
	inPlace, ere, fromFile, quiet := false, false, false, false
	haveScript := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--in-place"):
			inPlace = true
		case a == "--expression" && i+1 < len(args):
			i++
			scripts, haveScript = append(scripts, args[i]), true
		case strings.HasPrefix(a, "--expression="):
			scripts, haveScript = append(scripts, strings.TrimPrefix(a, "--expression=")), true
		case strings.HasPrefix(a, "--file"):
			fromFile, haveScript = true, true
		case a == "--regexp-extended":
			ere = true
		case a == "--quiet" || a == "--silent":
			quiet = true
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && a[0] == '-':
		cluster:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'i':
					inPlace = true
					break cluster // the rest is the backup suffix
				case 'E', 'r':
					ere = true
				case 'n':
					quiet = true
				case 'e', 'f':
					haveScript = true
					s := a[j+1:]
					if s == "" && i+1 < len(args) {
						i++
						s = args[i]
					}
					if a[j] == 'f' {
						fromFile = true
					} else {
						scripts = append(scripts, s)
					}
					break cluster
				case 'l':
					if j == len(a)-1 {
						i++
					}
					break cluster
				}
			}
		case !haveScript:
			scripts, haveScript = append(scripts, a), true
		default:
			files = append(files, a)
		}
	}
	var prog []sedSubst
	ok := !fromFile && !quiet
	if ok {
		prog, ok = parseSed(strings.Join(scripts, "\n"), ere)
	}
	run := func(in shellText) shellText {
		if !ok || !in.ok {
			return unknown
		}
		return known(applySed(prog, in.s))
	}
	if inPlace {
		for _, f := range files {
			e.write(c, f, run(e.read(c, f)), false, "sed -i", true)
		}
		return known("")
	}
	if len(files) == 0 {
		return run(stdin)
	}
	out := known("")
	for _, f := range files {
		out = concat(out, run(e.read(c, f)))
	}
	return out
}

// perl -pi edits its files in place: counted after it ran. Without -i, a
// script that opens a file for writing is looked at like python -c.
func (e *shellEval) perl(args []string, c *shellCtx, stdin shellText) shellText {
	inPlace := false
	var code string
	var files []string
	haveCode := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case haveCode || a == "-" || !strings.HasPrefix(a, "-"):
			if !haveCode {
				haveCode = true // perl script.pl: unknown code
				continue
			}
			files = append(files, a)
		default:
		cluster:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'i':
					inPlace = true
					break cluster
				case 'e', 'E':
					code = a[j+1:]
					if code == "" && i+1 < len(args) {
						i++
						code = args[i]
					}
					haveCode = true
					break cluster
				}
			}
		}
	}
	if inPlace {
		for _, f := range files {
			e.write(c, f, unknown, false, "perl -i", true)
		}
		return unknown
	}
	e.codeWrites("perl", code, files, c)
	return unknown
}

// Interpreters whose inline code (-c, -e, or a here-doc on stdin) is
// searched for files opened for writing.
func isInterpreter(name string) bool {
	switch name {
	case "python", "python3", "python2", "pypy3", "node", "nodejs", "bun", "deno", "ruby":
		return true
	}
	return strings.HasPrefix(name, "python3.")
}

func isShell(name string) bool {
	switch name {
	case "bash", "sh", "zsh", "dash", "ksh":
		return true
	}
	return false
}

func (e *shellEval) interpreter(name string, args []string, c *shellCtx, stdin shellText) shellText {
	var code string
	var rest []string
	inline := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if inline {
			rest = append(rest, a)
			continue
		}
		switch {
		case a == "-c" || a == "-e" || a == "--eval" || a == "-p" || a == "--print":
			if i+1 < len(args) {
				i++
				code, inline = args[i], true
			}
		case a == "-" || a == "run" && name == "deno":
			if stdin.ok {
				code, inline = stdin.s, true
			}
		case strings.HasPrefix(a, "-"):
			if a == "-m" {
				return unknown // python -m module: not inline code
			}
		default:
			return unknown // a script file: not read
		}
	}
	if !inline && stdin.ok {
		code = stdin.s // python3 <<'EOF'
	}
	e.codeWrites(name, code, rest, c)
	return unknown
}

// Calls that open a literal path for writing, per language family.
var codeWriteRE = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`open\(\s*[rbfu]?(['"])([^'"]+)['"]\s*,\s*(?:mode\s*=\s*)?[rbfu]?['"][rbt+]*[wax]`),
		regexp.MustCompile(`Path\(\s*[rbfu]?(['"])([^'"]+)['"]\s*\)\s*\.\s*write_(?:text|bytes)`),
		regexp.MustCompile("(?:writeFileSync|appendFileSync|writeFile|appendFile|createWriteStream|Deno\\.writeTextFile|Bun\\.write)\\(\\s*(['\"`])([^'\"`]+)['\"`]"),
		regexp.MustCompile(`File\.write\(\s*(['"])([^'"]+)['"]`),
		regexp.MustCompile(`File\.open\(\s*(['"])([^'"]+)['"]\s*,\s*['"][wa]`),
		regexp.MustCompile(`open\s*\(?\s*[^,;]+,\s*(['"])>>?\s*([^'"\s]+)['"]`),
		regexp.MustCompile(`open\s*\(?\s*[^,;]+,\s*(['"])>>?['"]\s*,\s*['"]([^'"]+)['"]`),
	}
})

// codeWriteHint marks code that writes files through a path we cannot read.
var codeWriteHint = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`['"][rbt+]*[wa][bt+]*['"]|write_text|write_bytes|writeFile|appendFile|createWriteStream|File\.write|open\s*\(?[^)]*['"]>`)
})

// codeWrites marks the files inline code would write, to be counted after
// it ran: the literal paths of its open(…, 'w')-like calls, else, when it
// writes through a computed path, its arguments that name source files.
func (e *shellEval) codeWrites(lang, code string, args []string, c *shellCtx) {
	if code == "" {
		return
	}
	how := lang + " code"
	found := false
	for _, re := range codeWriteRE() {
		for _, m := range re.FindAllStringSubmatch(code, -1) {
			e.write(c, m[2], unknown, false, how, false)
			found = true
		}
	}
	if found || !codeWriteHint().MatchString(code) {
		return
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && path.Ext(a) != "" {
			e.write(c, a, unknown, false, how, false)
		}
	}
}

// copy runs cp, mv and install: each target gets its source's content.
// Copying code is writing it; a mv of lines already counted (a source file
// of the project, or a file this command wrote) is a rename and adds
// nothing.
func (e *shellEval) copy(name string, args []string, c *shellCtx) {
	var ops []string
	dir := ""
	recursive, link := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case a == "-t" || a == "--target-directory":
			if i+1 < len(args) {
				i++
				dir = args[i]
			}
		case strings.HasPrefix(a, "--target-directory="):
			dir = strings.TrimPrefix(a, "--target-directory=")
		case name == "install" && (a == "-d" || a == "--directory"):
			return
		case name == "install" && (a == "-m" || a == "-o" || a == "-g" || a == "-S" || a == "--mode" || a == "--owner" || a == "--group"):
			i++
		case a == "-S" || a == "--suffix":
			i++
		case strings.HasPrefix(a, "--"):
			recursive = recursive || a == "--recursive" || a == "--archive"
			link = link || a == "--link" || a == "--symbolic-link"
		case len(a) > 1 && a[0] == '-':
			recursive = recursive || strings.ContainsAny(a, "rRa")
			link = link || name == "cp" && strings.ContainsAny(a, "ls")
			if strings.HasSuffix(a, "t") && name != "install" && i+1 < len(args) {
				i++
				dir = args[i]
			}
		default:
			ops = append(ops, a)
		}
	}
	if link {
		return
	}
	srcs := ops
	if dir == "" {
		if len(ops) < 2 {
			return
		}
		srcs, dir = ops[:len(ops)-1], ops[len(ops)-1]
		if len(srcs) == 1 && !strings.HasSuffix(dir, "/") && !e.isDir(c, dir) {
			if recursive && e.isDir(c, srcs[0]) {
				e.copyTree(name, srcs[0], dir, c) // cp -r src new: new is the copy
				return
			}
			e.copyOne(name, srcs[0], dir, c)
			return
		}
	}
	for _, s := range srcs {
		if recursive && e.isDir(c, s) {
			e.copyTree(name, s, path.Join(dir, path.Base(s)), c)
			continue
		}
		e.copyOne(name, s, path.Join(dir, path.Base(s)), c)
	}
}

func (e *shellEval) copyOne(name, src, dst string, c *shellCtx) {
	text := e.read(c, src)
	srcAbs := e.abs(c, src)
	prior, wrote := e.files[srcAbs]
	// counted: the lines are already charged, to the source.
	counted := false
	switch {
	case name == "mv" && wrote:
		// Out of a file this command wrote: its lines move with it.
		prior.content, prior.known = "", true
	case name == "mv":
		_, onDisk := e.disk(srcAbs)
		counted = onDisk && e.counted(srcAbs, true)
	default:
		counted = wrote && e.counted(srcAbs, prior.known)
	}
	e.write(c, dst, text, false, name, false)
	if f := e.files[e.abs(c, dst)]; f != nil && counted && text.ok {
		f.ref = text.s // moving or copying counted lines adds none
	}
}

// copyTree copies the files of a project directory.
func (e *shellEval) copyTree(name, src, dst string, c *shellCtx) {
	rel, inside := relPath(e.env.Project, e.abs(c, src))
	if e.env.Files == nil || !inside || !fs.ValidPath(rel) {
		return
	}
	n := 0
	_ = fs.WalkDir(e.env.Files, rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if n++; n > 1000 {
			return fs.SkipAll
		}
		sub := strings.TrimPrefix(strings.TrimPrefix(p, rel), "/")
		e.copyOne(name, path.Join(e.abs(c, src), sub), path.Join(e.abs(c, dst), sub), c)
		return nil
	})
}

func (e *shellEval) isDir(c *shellCtx, name string) bool {
	rel, inside := relPath(e.env.Project, e.abs(c, name))
	if e.env.Files == nil || !inside || !fs.ValidPath(rel) {
		return false
	}
	st, err := fs.Stat(e.env.Files, rel)
	return err == nil && st.IsDir()
}

// shell runs bash -c 'string' or a script on stdin; a script file is not
// read.
func (e *shellEval) shell(args []string, c *shellCtx, stdin shellText) shellText {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "c"):
			if i+1 < len(args) {
				sc := *c
				return e.script(args[i+1], &sc, stdin)
			}
			return unknown
		case a == "-" || a == "-s":
			return e.stdinScript(c, stdin)
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if a == "-o" || a == "+o" || a == "-O" || a == "+O" {
				i++
			}
		default:
			return unknown
		}
	}
	return e.stdinScript(c, stdin)
}

func (e *shellEval) stdinScript(c *shellCtx, stdin shellText) shellText {
	if !stdin.ok {
		return unknown
	}
	sc := *c
	return e.script(stdin.s, &sc, unknown)
}
