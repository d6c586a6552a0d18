package hooks

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Class is what a shell command may do, for the tool policy.
type Class uint8

// The classes, weakest first: the class of a command line is the strongest
// of its commands'.
const (
	// ReadOnly changes nothing outside the shell itself.
	ReadOnly Class = iota
	// Mutating may change files or state; an unknown or unparseable command
	// is mutating.
	Mutating
	// Destructive loses data in bulk or beyond the project: recursive
	// deletion, force push, terraform destroy, DROP DATABASE…
	Destructive
)

func (c Class) String() string {
	switch c {
	case Mutating:
		return "mutating"
	case Destructive:
		return "destructive"
	}
	return "read-only"
}

// Classification is what the classifier recognised in a command line.
type Classification struct {
	Class Class
	// What names what made the class, e.g. "rm -r (recursive deletion)";
	// empty for a read-only command.
	What string
	// Secret is the secrets file the command reads, and SecretKind what it
	// is; empty when it reads none.
	Secret, SecretKind string
}

// classifier walks a command line's syntax tree (the same parser as rule 4's)
// and keeps the strongest finding.
type classifier struct {
	depth int
	// branch returns the checked-out branch, "" when it cannot be told.
	branch func() string
	// secret says what kind of secrets file p is, or "".
	secret func(p string) string
	// switched is set once the command line changes branch: a later
	// git reset --hard resets a branch that cannot be told.
	switched bool
	out      Classification
}

// classifyCommand classifies a Bash command line. branch and secret may be
// nil (branch unknown; secrets by name only).
func classifyCommand(cmd string, branch func() string, secret func(string) string) Classification {
	c := &classifier{branch: branch, secret: secret}
	if c.branch == nil {
		c.branch = func() string { return "" }
	}
	if c.secret == nil {
		c.secret = func(p string) string { return secretKind(p, nil) }
	}
	c.script(cmd)
	return c.out
}

func (c *classifier) note(cl Class, what string) {
	if cl > c.out.Class {
		c.out.Class, c.out.What = cl, what
	}
}

func (c *classifier) readSecret(p string) {
	if c.out.Secret != "" || p == "" {
		return
	}
	if kind := c.globOrName(p); kind != "" {
		c.out.Secret, c.out.SecretKind = p, kind
	}
}

// script classifies one shell program: the command line, a bash -c string,
// an eval's words, a here-doc fed to a shell. A program that does not parse
// is classified up to the line before the error, which bash would run, and
// is mutating for the rest: never read-only, never guessed destructive.
func (c *classifier) script(src string) {
	if c.depth >= maxShellDepth {
		c.note(Mutating, "commands nested too deep to be read")
		return
	}
	c.depth++
	defer func() { c.depth-- }()
	f, err := parseShell(src)
	if err != nil {
		c.note(Mutating, "a command line that does not parse as shell")
		if pe, ok := err.(syntax.ParseError); ok && pe.Pos.Line() > 1 {
			lines := strings.SplitAfter(src, "\n")
			n := min(int(pe.Pos.Line())-1, len(lines))
			if pf, perr := parseShell(strings.Join(lines[:n], "")); perr == nil {
				syntax.Walk(pf, c.visit)
			}
		}
		return
	}
	syntax.Walk(f, c.visit)
}

func (c *classifier) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.Stmt:
		c.redirects(n)
	case *syntax.CallExpr:
		args := make([]string, 0, len(n.Args))
		lit := true
		for i, w := range n.Args {
			s, ok := wordText(w)
			if i == 0 && !ok {
				lit = false
			}
			args = append(args, s)
		}
		if len(args) > 0 && !lit {
			c.note(Mutating, "a command whose name is computed when it runs")
			c.secretArgs("", args[1:]) // it may be cat
			return true
		}
		c.call(args)
	case *syntax.FuncDecl:
		if forkBomb(n) {
			c.note(Destructive, "a fork bomb (a function that runs itself in a pipe or in the background)")
		}
	}
	return true
}

// wordText is a word after quote removal; ok is false when it holds an
// expansion, kept as typed ($HOME stays "$HOME").
func wordText(w *syntax.Word) (string, bool) {
	var b strings.Builder
	ok := true
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeLit(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					b.WriteString(unescapeLit(q.Value, true))
				case *syntax.ParamExp:
					ok = false
					b.WriteString("$" + q.Param.Value)
				default:
					ok = false
				}
			}
		case *syntax.ParamExp:
			ok = false
			if q := p.Param; q != nil {
				b.WriteString("$" + q.Value)
			}
		default:
			ok = false
		}
	}
	return b.String(), ok
}

// redirects classifies a statement's redirections: writing to a device is
// destructive, to a file mutating; reading a secrets file is noted; a
// here-doc fed to a shell or a SQL client is classified as what it carries.
func (c *classifier) redirects(s *syntax.Stmt) {
	for _, r := range s.Redirs {
		if r.Word == nil {
			continue
		}
		target, _ := wordText(r.Word)
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.AppClob:
			switch {
			case harmlessDevice(target):
			case strings.HasPrefix(target, "/dev/"):
				c.note(Destructive, "a redirection onto the device "+target)
			default:
				c.note(Mutating, "a redirection into "+target)
			}
		case syntax.RdrIn, syntax.RdrInOut:
			c.readSecret(target)
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			body := hdocText(r)
			call, ok := s.Cmd.(*syntax.CallExpr)
			if !ok || len(call.Args) == 0 {
				continue
			}
			args := make([]string, 0, len(call.Args))
			for _, w := range call.Args {
				a, _ := wordText(w)
				args = append(args, a)
			}
			args = unwrap(args)
			if len(args) == 0 {
				continue
			}
			switch name := path.Base(args[0]); {
			case isShell(name) && !hasShellScriptArg(args[1:]):
				c.script(body)
			case isSQLClient(name):
				c.sql(body)
			}
		}
	}
}

func hdocText(r *syntax.Redirect) string {
	w := r.Hdoc
	if r.Op == syntax.WordHdoc {
		w = r.Word
	}
	if w == nil {
		return ""
	}
	s, _ := wordText(w)
	return s
}

func harmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/")
}

// forkBomb reports a function whose body runs itself in a pipe or in the
// background: :(){ :|:& };:
func forkBomb(fn *syntax.FuncDecl) bool {
	if fn.Name == nil || fn.Body == nil {
		return false
	}
	name := fn.Name.Value
	self, spawn := false, false
	syntax.Walk(fn.Body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) > 0 && n.Args[0].Lit() == name {
				self = true
			}
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				spawn = true
			}
		case *syntax.Stmt:
			if n.Background {
				spawn = true
			}
		}
		return true
	})
	return self && spawn
}

// readOnlyCommands change nothing outside the shell.
var readOnlyCommands = map[string]bool{
	"ls": true, "ll": true, "cat": true, "head": true, "tail": true, "less": true, "more": true,
	"grep": true, "egrep": true, "fgrep": true, "rg": true, "ag": true, "wc": true, "echo": true,
	"printf": true, "pwd": true, "whoami": true, "id": true, "date": true, "uname": true,
	"hostname": true, "which": true, "whereis": true, "type": true, "file": true, "stat": true,
	"du": true, "df": true, "tree": true, "diff": true, "cmp": true, "uniq": true, "cut": true,
	"tr": true, "jq": true, "awk": true, "gawk": true, "basename": true, "dirname": true,
	"realpath": true, "readlink": true, "printenv": true, "true": true, "false": true,
	"test": true, "[": true, "sleep": true, "seq": true, "nl": true, "column": true, "od": true,
	"hexdump": true, "xxd": true, "base64": true, "md5sum": true, "sha1sum": true,
	"sha256sum": true, "cksum": true, "strings": true, "ps": true, "free": true, "uptime": true,
	"man": true, "help": true, "cd": true, "pushd": true, "popd": true, "export": true,
	"unset": true, "set": true, "alias": true, ":": true, "exit": true, "return": true,
	"read": true, "shift": true, "local": true, "comm": true,
	"join": true, "paste": true, "fold": true, "fmt": true, "rev": true, "tac": true,
	"lsof": true, "history": true, "find": true, "sort": true, "sed": true,
}

// deleters remove the paths they are given.
func isDeleter(name string) bool {
	switch name {
	case "rm", "shred", "unlink", "rmdir", "srm":
		return true
	}
	return false
}

// call classifies one simple command, already split into words.
func (c *classifier) call(args []string) {
	if len(args) >= 2 && args[0] == "command" && (args[1] == "-v" || args[1] == "-V") {
		return // command -v NAME only looks NAME up
	}
	for len(args) > 0 && path.Base(args[0]) == "busybox" {
		args = args[1:]
	}
	args = unwrap(args)
	if len(args) == 0 {
		return
	}
	name := path.Base(args[0])
	c.secretArgs(name, args[1:])
	switch {
	case name == "rm":
		if hasRecursive(args[1:], "r", "R") {
			c.note(Destructive, "rm -r (recursive deletion)")
			return
		}
		if hasLong(args[1:], "--no-preserve-root") {
			c.note(Destructive, "rm --no-preserve-root")
			return
		}
		c.note(Mutating, "rm")
	case name == "shred" || name == "srm" || name == "wipefs" || name == "blkdiscard" || name == "mkswap" ||
		name == "mke2fs" || name == "fdisk" || name == "sfdisk" || name == "parted" || name == "gdisk" ||
		name == "sgdisk" || name == "mkfs" || strings.HasPrefix(name, "mkfs."):
		c.note(Destructive, name+" (erases data beyond recovery)")
	case name == "rimraf" || (name == "npx" && len(args) > 1 && path.Base(args[1]) == "rimraf"):
		c.note(Destructive, "rimraf (recursive deletion)")
	case name == "gh" && len(args) > 2 && args[1] == "repo" && args[2] == "delete":
		c.note(Destructive, "gh repo delete")
	case name == "aws" && len(args) > 2 && args[1] == "s3" && (args[2] == "rb" || (args[2] == "rm" && hasLong(args[3:], "--recursive"))):
		c.note(Destructive, "aws s3 "+args[2]+" (deletes a bucket's objects)")
	case name == "watch":
		i := 1
		for i < len(args) && strings.HasPrefix(args[i], "-") {
			if args[i] == "-n" || args[i] == "-d" {
				i++
			}
			i++
		}
		if i < len(args) {
			c.script(strings.Join(args[i:], " "))
		}
	case name == "find":
		c.find(args[1:])
	case name == "xargs":
		c.xargs(args[1:])
	case isShell(name):
		c.shell(name, args[1:])
	case name == "eval":
		c.script(strings.Join(args[1:], " "))
	case name == "su":
		for i, a := range args[1:] {
			if (a == "-c" || a == "--command") && i+2 < len(args) {
				c.script(args[i+2])
				return
			}
		}
		c.note(Mutating, "su")
	case name == "ssh":
		c.ssh(args[1:])
	case name == "git":
		c.git(args[1:])
	case name == "terraform" || name == "tofu" || name == "terragrunt":
		c.terraform(name, args[1:])
	case name == "kubectl" || name == "oc":
		c.kubectl(name, args[1:])
	case name == "helm":
		c.helm(args[1:])
	case isSQLClient(name):
		c.sqlClient(name, args[1:])
	case name == "dd":
		c.dd(args[1:])
	case name == "chmod" || name == "chown" || name == "chgrp":
		c.chmod(name, args[1:])
	case name == "rsync":
		if hasLong(args[1:], "--delete") || hasLongPrefix(args[1:], "--delete-") {
			c.note(Destructive, "rsync --delete (deletes what the source lacks)")
			return
		}
		c.note(Mutating, "rsync")
	case name == "sed":
		if hasRecursive(args[1:], "i") || hasLongPrefix(args[1:], "--in-place") {
			c.note(Mutating, "sed -i")
		}
	case name == "sort":
		if hasRecursive(args[1:], "o") || hasLongPrefix(args[1:], "--output") {
			c.note(Mutating, "sort -o")
		}
	case name == "tar":
		c.tar(args[1:])
	case readOnlyCommands[name]:
	default:
		c.note(Mutating, name)
	}
}

// flags returns the arguments before "--".
func flags(args []string) []string {
	for i, a := range args {
		if a == "--" {
			return args[:i]
		}
	}
	return args
}

// hasRecursive reports a short option among letters, alone or in a cluster
// (-r, -fr, -Rf), or its long form --recursive for r/R.
func hasRecursive(args []string, letters ...string) bool {
	for _, a := range flags(args) {
		if a == "--recursive" && (contains(letters, "r") || contains(letters, "R")) {
			return true
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' {
			for _, l := range letters {
				if strings.Contains(a[1:], l) {
					return true
				}
			}
		}
	}
	return false
}

func hasLong(args []string, names ...string) bool {
	for _, a := range flags(args) {
		if contains(names, a) {
			return true
		}
	}
	return false
}

func hasLongPrefix(args []string, prefix string) bool {
	for _, a := range flags(args) {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}
