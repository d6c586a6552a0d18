package hooks

import (
	"regexp"
	"strings"
)

// sedSubst is one s/regex/replacement/flags command of a sed script.
type sedSubst struct {
	re   *regexp.Regexp
	repl string // in regexp.Expand's template syntax
	all  bool   // g
	nth  int    // s///N: replace the Nth match only (0: first)
}

// parseSed reads a script made only of s/// commands, separated by ; or
// newlines, without addresses. ok is false for anything else: such scripts
// are counted after they ran.
func parseSed(script string, ere bool) (prog []sedSubst, ok bool) {
	s := script
	for {
		s = strings.TrimLeft(s, " \t\n;")
		if s == "" {
			return prog, len(prog) > 0
		}
		if len(s) < 2 || s[0] != 's' || s[1] == '\\' || s[1] == '\n' {
			return nil, false
		}
		delim := s[1]
		pat, rest, ok1 := sedField(s[2:], delim)
		repl, rest, ok2 := sedField(rest, delim)
		if !ok1 || !ok2 {
			return nil, false
		}
		cmd := sedSubst{}
		i := 0
		for ; i < len(rest) && rest[i] != ';' && rest[i] != '\n' && rest[i] != '}'; i++ {
			switch ch := rest[i]; {
			case ch == 'g':
				cmd.all = true
			case ch == 'p':
				return nil, false // prints twice without -n: not worth modelling
			case ch == 'i' || ch == 'I':
				pat = "(?i)" + pat
			case ch >= '0' && ch <= '9':
				cmd.nth = cmd.nth*10 + int(ch-'0')
			case ch == ' ' || ch == '\t':
			default:
				return nil, false // e, w, m…: not a plain substitution
			}
		}
		s = rest[i:]
		expr, ok3 := sedRegexp(pat, delim, ere)
		if !ok3 {
			return nil, false
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, false
		}
		cmd.re = re
		if cmd.repl, ok = sedReplacement(repl, delim); !ok {
			return nil, false
		}
		prog = append(prog, cmd)
	}
}

// sedField reads up to the next unescaped delimiter.
func sedField(s string, delim byte) (field, rest string, ok bool) {
	inClass := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			i++
		case s[i] == '[' && delim != '[':
			inClass = true
		case s[i] == ']':
			inClass = false
		case s[i] == delim && !inClass:
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

// sedRegexp turns a POSIX basic (or, with -E, extended) regular expression
// into RE2 syntax. ok is false for back-references, which RE2 lacks.
func sedRegexp(p string, delim byte, ere bool) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case ch == '\\' && i+1 < len(p):
			i++
			n := p[i]
			switch {
			case n == delim:
				b.WriteString(regexp.QuoteMeta(string(n)))
			case n >= '1' && n <= '9':
				return "", false
			case n == '<' || n == '>':
				b.WriteString(`\b`)
			case n == 'n':
				b.WriteString(`\n`)
			case n == 't':
				b.WriteString(`\t`)
			case !ere && strings.IndexByte("(){}+?|", n) >= 0:
				b.WriteByte(n)
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
		case !ere && strings.IndexByte("(){}+?|", ch) >= 0:
			b.WriteByte('\\')
			b.WriteByte(ch)
		case ch == '*' && (i == 0 || (!ere && p[i-1] == '(' && i >= 2 && p[i-2] == '\\')):
			b.WriteString(`\*`)
		case ch == '[':
			j := i + 1
			if j < len(p) && (p[j] == '^' || p[j] == '!') {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for j < len(p) && p[j] != ']' {
				if p[j] == '[' && j+1 < len(p) && p[j+1] == ':' {
					if k := strings.Index(p[j:], ":]"); k > 0 {
						j += k + 2
						continue
					}
				}
				j++
			}
			if j >= len(p) {
				return "", false
			}
			b.WriteString(p[i : j+1])
			i = j
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), true
}

// sedReplacement turns a sed replacement into an Expand template.
func sedReplacement(r string, delim byte) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		ch := r[i]
		switch {
		case ch == '\\' && i+1 < len(r):
			i++
			n := r[i]
			switch {
			case n >= '0' && n <= '9':
				b.WriteString("${" + string(n) + "}")
			case n == 'n':
				b.WriteByte('\n')
			case n == 't':
				b.WriteByte('\t')
			case n == '&' || n == '\\' || n == delim:
				b.WriteByte(n)
			case strings.IndexByte("LUluE", n) >= 0:
				return "", false // case conversion
			case n == '$':
				b.WriteString("$$")
			default:
				b.WriteByte(n)
			}
		case ch == '&':
			b.WriteString("${0}")
		case ch == '$':
			b.WriteString("$$")
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), true
}

// applySed runs the substitutions on each line of s, as sed does.
func applySed(prog []sedSubst, s string) string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if line == "" {
			continue
		}
		body, nl := strings.CutSuffix(line, "\n")
		for _, cmd := range prog {
			body = cmd.apply(body)
		}
		out.WriteString(body)
		if nl {
			out.WriteByte('\n')
		}
	}
	return out.String()
}

func (c sedSubst) apply(line string) string {
	matches := c.re.FindAllStringSubmatchIndex(line, -1)
	if len(matches) == 0 {
		return line
	}
	var b strings.Builder
	last := 0
	for i, m := range matches {
		switch {
		case c.nth > 0 && i+1 < c.nth:
			continue
		case c.nth > 0 && i+1 > c.nth && !c.all:
			continue
		case c.nth == 0 && i > 0 && !c.all:
			continue
		}
		b.WriteString(line[last:m[0]])
		b.Write(c.re.ExpandString(nil, c.repl, line, m))
		last = m[1]
	}
	b.WriteString(line[last:])
	return b.String()
}
