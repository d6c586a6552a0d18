package hooks

import (
	"path"
	"strings"
)

// The command-specific parts of the classifier: find, xargs, shells, ssh,
// git, infrastructure CLIs, SQL clients, dd, chmod.

// git classifies a git command: force push, reset --hard on a shared (or
// unknown) branch and clean -f are destructive.
func (c *classifier) git(args []string) {
	elsewhere := false
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		switch a := args[i]; {
		case a == "-C" || a == "--git-dir" || a == "--work-tree":
			elsewhere = true
			i++
		case a == "-c" || a == "--namespace":
			i++
		case strings.HasPrefix(a, "--git-dir=") || strings.HasPrefix(a, "--work-tree="):
			elsewhere = true
		}
		i++
	}
	if i >= len(args) {
		return // git --version
	}
	sub, rest := args[i], args[i+1:]
	switch sub {
	case "status", "log", "diff", "show", "blame", "grep", "rev-parse", "ls-files", "ls-tree", "ls-remote",
		"describe", "shortlog", "cat-file", "whatchanged", "help", "version", "check-ignore", "name-rev",
		"merge-base", "for-each-ref", "show-ref", "count-objects", "rev-list", "show-branch":
	case "branch":
		if len(positional(rest)) > 0 || hasLong(rest, "-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force", "-u", "--set-upstream-to", "--unset-upstream") {
			c.note(Mutating, "git branch")
		}
	case "tag":
		if len(positional(rest)) > 0 && !hasLong(rest, "-l", "--list") {
			c.note(Mutating, "git tag")
		}
	case "remote":
		if p := positional(rest); len(p) > 0 && p[0] != "show" && p[0] != "get-url" {
			c.note(Mutating, "git remote "+p[0])
		}
	case "config":
		if !hasLong(rest, "--get", "--get-all", "--list", "-l", "--get-regexp") {
			c.note(Mutating, "git config")
		}
	case "stash":
		if p := positional(rest); len(p) == 0 || (p[0] != "list" && p[0] != "show") {
			c.note(Mutating, "git stash")
		}
	case "push":
		c.gitPush(rest)
	case "reset":
		if !hasLong(rest, "--hard") {
			c.note(Mutating, "git reset")
			return
		}
		b := ""
		if !elsewhere && !c.switched {
			b = c.branch()
		}
		switch {
		case b == "":
			c.note(Destructive, "git reset --hard on a branch that cannot be told (uncommitted work is lost)")
		case sharedBranch(b):
			c.note(Destructive, "git reset --hard on the shared branch "+b)
		default:
			c.note(Mutating, "git reset --hard on "+b)
		}
	case "clean":
		switch {
		case hasRecursive(rest, "n") || hasLong(rest, "--dry-run"):
		case hasRecursive(rest, "f") || hasLong(rest, "--force"):
			c.note(Destructive, "git clean -f (deletes untracked files)")
		default:
			c.note(Mutating, "git clean")
		}
	case "checkout", "switch":
		c.switched = true
		c.note(Mutating, "git "+sub)
	default:
		c.note(Mutating, "git "+sub)
	}
}

func (c *classifier) gitPush(args []string) {
	for _, a := range flags(args) {
		switch {
		case a == "--force" || a == "--force-with-lease" || strings.HasPrefix(a, "--force-with-lease=") || a == "--force-if-includes":
			c.note(Destructive, "git push "+a+" (force push rewrites the remote's history)")
			return
		case a == "--mirror":
			c.note(Destructive, "git push --mirror (overwrites every remote ref)")
			return
		case a == "--delete":
			c.note(Destructive, "git push --delete (deletes a remote branch)")
			return
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "f"):
			c.note(Destructive, "git push "+a+" (force push rewrites the remote's history)")
			return
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "d"):
			c.note(Destructive, "git push "+a+" (deletes a remote branch)")
			return
		}
	}
	for _, a := range positional(args) {
		switch {
		case strings.HasPrefix(a, "+"):
			c.note(Destructive, "git push "+a+" (a + refspec forces the push)")
			return
		case strings.HasPrefix(a, ":") && len(a) > 1:
			c.note(Destructive, "git push "+a+" (deletes a remote branch)")
			return
		}
	}
	c.note(Mutating, "git push")
}

// positional returns the arguments that are not options.
func positional(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

// sharedBranch names the branches others build on.
func sharedBranch(b string) bool {
	switch b {
	case "main", "master", "develop":
		return true
	}
	return strings.HasPrefix(b, "release")
}

func (c *classifier) terraform(name string, args []string) {
	p := positional(args)
	if len(p) == 0 {
		return
	}
	switch p[0] {
	case "destroy":
		c.note(Destructive, name+" destroy")
	case "apply":
		if hasLong(args, "-destroy", "--destroy", "-destroy=true") {
			c.note(Destructive, name+" apply -destroy")
			return
		}
		c.note(Mutating, name+" apply")
	case "plan", "show", "validate", "output", "version", "providers", "graph", "fmt":
		if p[0] == "fmt" && !hasLong(args, "-check") {
			c.note(Mutating, name+" fmt")
		}
	default:
		c.note(Mutating, name+" "+p[0])
	}
}

func (c *classifier) kubectl(name string, args []string) {
	verb := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-n", "--namespace", "--context", "--cluster", "--kubeconfig", "-s", "--server", "--user", "--as":
			i++
			continue
		}
		if !strings.HasPrefix(a, "-") {
			verb = a
			break
		}
	}
	switch verb {
	case "":
	case "delete":
		c.note(Destructive, name+" delete")
	case "get", "describe", "logs", "explain", "top", "version", "api-resources", "api-versions", "cluster-info", "diff", "auth":
	default:
		c.note(Mutating, name+" "+verb)
	}
}

func (c *classifier) helm(args []string) {
	p := positional(args)
	if len(p) == 0 {
		return
	}
	switch p[0] {
	case "uninstall", "delete", "del", "un":
		c.note(Destructive, "helm "+p[0])
	case "list", "ls", "status", "get", "show", "template", "lint", "search", "history", "version", "env":
	default:
		c.note(Mutating, "helm "+p[0])
	}
}

func isSQLClient(name string) bool {
	switch name {
	case "psql", "mysql", "mariadb", "sqlite3", "clickhouse-client", "cockroach", "sqlcmd":
		return true
	}
	return false
}

// sqlClient classifies the SQL a client is given on its command line
// (psql -c, mysql -e, sqlite3 DB SQL); a client without one reads SQL from a
// file or stdin: mutating.
func (c *classifier) sqlClient(name string, args []string) {
	found := false
	for i, a := range args {
		var q string
		switch {
		case (a == "-c" || a == "--command" || a == "-e" || a == "--execute" || a == "-q" || a == "-Q" || a == "--query") && i+1 < len(args):
			q = args[i+1]
		case strings.HasPrefix(a, "--command=") || strings.HasPrefix(a, "--execute=") || strings.HasPrefix(a, "--query="):
			_, q, _ = strings.Cut(a, "=")
		default:
			continue
		}
		found = true
		c.sql(q)
	}
	if !found && name == "sqlite3" {
		if p := positional(args); len(p) >= 2 {
			found = true
			c.sql(strings.Join(p[1:], " "))
		}
	}
	if !found {
		c.note(Mutating, name)
	}
}

// sql classifies SQL statements by their leading keywords.
func (c *classifier) sql(src string) {
	for _, stmt := range strings.Split(src, ";") {
		w := strings.Fields(strings.ToUpper(stmt))
		for len(w) > 0 && strings.HasPrefix(w[0], "--") {
			w = w[1:]
		}
		if len(w) == 0 {
			continue
		}
		switch w[0] {
		case "SELECT", "SHOW", "EXPLAIN", "DESCRIBE", "DESC", "WITH", "VALUES", `\L`, `\DT`, `\D`, `\DN`, `\DU`, `\Q`, "USE", ".TABLES", ".SCHEMA":
		case "DROP":
			obj := "objects"
			if len(w) > 1 {
				obj = w[1]
			}
			c.note(Destructive, "DROP "+obj+" (SQL)")
		case "TRUNCATE":
			c.note(Destructive, "TRUNCATE (SQL)")
		case "DELETE":
			if !contains(w, "WHERE") {
				c.note(Destructive, "DELETE without WHERE (SQL)")
				continue
			}
			c.note(Mutating, "DELETE (SQL)")
		default:
			c.note(Mutating, w[0]+" (SQL)")
		}
	}
}

// find: -delete deletes every match, -exec runs a command on each.
func (c *classifier) find(args []string) {
	aimed := ""
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-name", "-iname", "-path", "-ipath", "-wholename":
			if k := c.globOrName(args[i+1]); k != "" && aimed == "" {
				aimed = k
				defer func(name string) {
					if c.out.Secret == "" && findReads(args) {
						c.out.Secret, c.out.SecretKind = name, k
					}
				}(args[i+1])
			}
		}
	}
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-delete":
			c.note(Destructive, "find -delete (deletes every match)")
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			sub := args[i+1 : j]
			if len(sub) > 0 && isDeleter(path.Base(unwrapName(sub))) {
				c.note(Destructive, "find "+args[i]+" "+path.Base(unwrapName(sub))+" (deletes every match)")
			} else {
				c.call(sub)
			}
			i = j
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			c.note(Mutating, "find "+args[i])
		}
	}
}

// findReads reports a find that prints the content of its matches.
func findReads(args []string) bool {
	for i, a := range args {
		if (a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir") && i+1 < len(args) {
			if n := path.Base(unwrapName(args[i+1:])); !nonReaders(n) && !isDeleter(n) {
				return true
			}
		}
	}
	return false
}

func unwrapName(args []string) string {
	if u := unwrap(args); len(u) > 0 {
		return u[0]
	}
	return ""
}

// xargs runs its command on every path it reads.
func (c *classifier) xargs(args []string) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		switch args[i] {
		case "-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "-i":
			if args[i] != "-i" {
				i++
			}
		}
		i++
	}
	if i >= len(args) {
		return // xargs echo
	}
	sub := args[i:]
	if isDeleter(path.Base(unwrapName(sub))) {
		c.note(Destructive, "xargs "+path.Base(unwrapName(sub))+" (deletes every path it reads)")
		return
	}
	c.call(sub)
}

// shell classifies bash -c STRING; a script file or stdin cannot be read.
func (c *classifier) shell(name string, args []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "c"):
			if i+1 < len(args) {
				c.script(args[i+1])
				return
			}
		case a == "-o" || a == "+o" || a == "-O" || a == "+O":
			i++
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
		default:
			c.note(Mutating, name+" running the script "+a)
			return
		}
	}
	c.note(Mutating, name+" reading its script from stdin")
}

// hasShellScriptArg reports a -c string or a script file among a shell's
// arguments, so that a here-doc is its stdin, not its script.
func hasShellScriptArg(args []string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || (len(a) > 1 && a[1] != '-' && strings.Contains(a, "c")) {
			return true
		}
	}
	return false
}

// ssh HOST COMMAND runs COMMAND remotely: it is classified as typed.
func (c *classifier) ssh(args []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if len(a) == 2 && strings.Contains("bcDEeFIiJLlmOopQRSWw", a[1:]) {
				i++
			}
			continue
		}
		if i+1 < len(args) {
			c.script(strings.Join(args[i+1:], " "))
		}
		c.note(Mutating, "ssh")
		return
	}
	c.note(Mutating, "ssh")
}

func (c *classifier) tar(args []string) {
	if len(args) == 0 {
		return
	}
	mode := strings.TrimPrefix(args[0], "-")
	list := strings.HasPrefix(args[0], "--list") || (!strings.HasPrefix(args[0], "--") && strings.Contains(mode, "t"))
	if !list {
		c.note(Mutating, "tar")
	}
}

// chmod -R on the root or a system directory breaks the machine.
func (c *classifier) chmod(name string, args []string) {
	if hasRecursive(args, "R") {
		for _, a := range args {
			if systemRoot(a) {
				c.note(Destructive, name+" -R on "+a)
				return
			}
		}
	}
	c.note(Mutating, name)
}

func systemRoot(p string) bool {
	switch strings.TrimSuffix(p, "/*") {
	case "/", "", "/etc", "/usr", "/var", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/home", "/root", "/opt", "~", "~/", "$HOME", "$HOME/":
		return p != ""
	}
	return false
}

// dd of=/dev/… overwrites a device.
func (c *classifier) dd(args []string) {
	for _, a := range args {
		if of, ok := strings.CutPrefix(a, "of="); ok {
			if strings.HasPrefix(of, "/dev/") && !harmlessDevice(of) {
				c.note(Destructive, "dd of="+of+" (overwrites a device)")
				return
			}
			c.note(Mutating, "dd of="+of)
		}
	}
}
