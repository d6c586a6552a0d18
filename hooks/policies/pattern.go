package policies

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Pattern is a tool_pattern in Claude Code's permission-rule syntax:
//
//   - "*" or "" matches every call; a bare name ("Bash", "mcp__miam__*")
//     matches the tool's name, "*" standing for any characters;
//   - Bash(git push:*) matches a command that starts with "git push" on a
//     word boundary ("git pushx" does not), whether it is the whole command
//     line or one of its commands (after && ; | …);
//   - Bash(npm test) matches that command exactly, Bash(npm run *) with "*"
//     standing for anything;
//   - Write(src/*), Edit(**/*.go), Read(/etc/*) match the target path as a
//     gitignore-style glob: "*" stays inside one directory, "**" crosses
//     them, a pattern without "/" matches the file name at any depth, a
//     leading "/" anchors at the filesystem root, else at the project;
//   - Edit(…) covers every file-editing tool (Edit, MultiEdit, Write,
//     NotebookEdit), as in Claude Code; other names cover only themselves.
type Pattern struct {
	Source string
	tool   string
	// body is nil for a bare pattern.
	body *regexp.Regexp
	// prefix is the command prefix of a Bash(…:*) pattern.
	prefix string
	// abs: the path glob is anchored at the filesystem root.
	abs bool
	// base: the path glob has no "/", so it matches file names.
	base bool
}

// ParsePattern parses a tool_pattern.
func ParsePattern(s string) (Pattern, error) {
	p := Pattern{Source: s}
	s = strings.TrimSpace(s)
	if s == "" {
		return Pattern{}, fmt.Errorf("empty pattern (write \"*\" for every tool)")
	}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if strings.ContainsAny(s, ") ") {
			return Pattern{}, fmt.Errorf("%q: a tool name, or Tool(argument)", s)
		}
		p.tool = s
		return p, nil
	}
	if !strings.HasSuffix(s, ")") || open == 0 {
		return Pattern{}, fmt.Errorf("%q: write Tool(argument), e.g. Bash(git push:*) or Write(src/*)", s)
	}
	p.tool, s = s[:open], s[open+1:len(s)-1]
	if strings.ContainsAny(p.tool, " )") {
		return Pattern{}, fmt.Errorf("%q: the tool name has a space or a parenthesis", p.Source)
	}
	if strings.TrimSpace(s) == "" {
		return Pattern{}, fmt.Errorf("%q: empty argument (write %s or %s(*))", p.Source, p.tool, p.tool)
	}
	if s == "*" {
		return p, nil // Tool(*) is the bare tool
	}
	if pre, ok := strings.CutSuffix(s, ":*"); ok && isCommandTool(p.tool) {
		p.prefix = fold(pre)
		if p.prefix == "" {
			return Pattern{}, fmt.Errorf("%q: empty command prefix", p.Source)
		}
		return p, nil
	}
	var err error
	if isCommandTool(p.tool) || !isPathTool(p.tool) {
		p.body, err = regexp.Compile(`^` + globRegexp(fold(s), false) + `$`)
	} else {
		s = strings.TrimPrefix(s, "./")
		p.abs = strings.HasPrefix(s, "/")
		p.base = !strings.Contains(strings.TrimSuffix(s, "/"), "/")
		p.body, err = regexp.Compile(`^` + globRegexp(s, true) + `$`)
	}
	if err != nil {
		return Pattern{}, fmt.Errorf("%q: %v", p.Source, err)
	}
	return p, nil
}

// IsZero reports whether p was never set: it matches every call.
func (p Pattern) IsZero() bool { return p.tool == "" }

func (p Pattern) String() string {
	if p.IsZero() {
		return "*"
	}
	return p.Source
}

// Match reports whether the call falls under the pattern.
func (p Pattern) Match(c Call) bool {
	if p.IsZero() || p.tool == "*" && p.body == nil && p.prefix == "" {
		return true
	}
	if !matchTool(p.tool, c.Tool) {
		return false
	}
	switch {
	case p.prefix != "":
		for _, cmd := range c.commands() {
			if hasWordPrefix(cmd, p.prefix) {
				return true
			}
		}
		return false
	case p.body == nil:
		return true
	case isPathTool(p.tool) && !isCommandTool(p.tool):
		return p.matchPath(c)
	}
	for _, cmd := range c.commands() {
		if p.body.MatchString(cmd) {
			return true
		}
	}
	return false
}

// MatchTool reports whether the pattern can match a call of this tool,
// whatever its input.
func (p Pattern) MatchTool(name string) bool {
	return p.IsZero() || p.tool == "*" || matchTool(p.tool, name)
}

func (p Pattern) matchPath(c Call) bool {
	target := c.Path
	if p.abs {
		target = c.AbsPath
	}
	if target == "" {
		return false
	}
	if p.body.MatchString(target) {
		return true
	}
	return p.base && p.body.MatchString(path.Base(target))
}

// editTools are the tools an Edit(…) rule covers.
var editTools = map[string]bool{"Edit": true, "MultiEdit": true, "Write": true, "NotebookEdit": true}

func matchTool(pat, name string) bool {
	switch {
	case pat == name:
		return true
	case pat == "Edit":
		return editTools[name]
	case strings.Contains(pat, "*"):
		re, err := regexp.Compile(`^` + globRegexp(pat, false) + `$`)
		return err == nil && re.MatchString(name)
	}
	return false
}

func isCommandTool(tool string) bool { return tool == "Bash" }

func isPathTool(tool string) bool {
	switch tool {
	case "Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Grep", "Glob":
		return true
	}
	return false
}

// hasWordPrefix reports whether cmd starts with prefix followed by the end
// or a word boundary.
func hasWordPrefix(cmd, prefix string) bool {
	rest, ok := strings.CutPrefix(cmd, prefix)
	if !ok {
		return false
	}
	return rest == "" || strings.ContainsRune(" \t\n;&|)", rune(rest[0]))
}

// globRegexp turns a glob into a regular expression. For paths, "*" and "?"
// stay inside one directory and "**" crosses them; for commands and names
// "*" is any text.
func globRegexp(g string, paths bool) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		switch ch := g[i]; {
		case ch == '*' && paths && strings.HasPrefix(g[i:], "**/"):
			b.WriteString(`(?:.*/)?`)
			i += 2
		case ch == '*' && paths && strings.HasPrefix(g[i:], "**"):
			b.WriteString(`.*`)
			i++
		case ch == '*' && paths:
			b.WriteString(`[^/]*`)
		case ch == '*':
			b.WriteString(`(?s:.*)`)
		case ch == '?' && paths:
			b.WriteString(`[^/]`)
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	return b.String()
}
