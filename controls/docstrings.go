package controls

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"miam/budgets"
	"miam/delegate/wire"
)

// Docstrings is the `docstrings` control (SPEC §4), on code: the public
// functions, classes, methods and types the answer defines are documented
// in the language's own convention —
//
//   - Python: a docstring, for names without a leading underscore (dunder
//     methods, tests, @overload and property setters exempt);
//   - Go: a `//` comment right above, starting with the name (an article
//     before it allowed), for exported names (tests and examples exempt);
//   - JavaScript, TypeScript: a JSDoc/TSDoc `/** … */` block right above,
//     for exported declarations and the public methods of exported classes;
//   - Rust: `///` (or #[doc]) for `pub` items;
//   - Java: Javadoc `/** … */` for public types and methods (@Override,
//     tests and constructors exempt);
//   - C#: `///` XML comments for public types and members (override exempt).
//
// A definition the joined files already hold undocumented is not held
// against the answer: the model is asked to document what it writes, not to
// fix the file. Other languages pass with a message saying they were
// skipped.
type Docstrings struct{}

// Name returns "docstrings".
func (Docstrings) Name() string { return NameDocstrings }

// Cost returns CostPure.
func (Docstrings) Cost() Cost { return CostPure }

// Check runs the control.
func (Docstrings) Check(_ context.Context, in Input) wire.Control {
	if in.Kind() != KindCode {
		return wire.Control{Nom: NameDocstrings, OK: true, Message: "not code: skipped"}
	}
	conv := docConvention(in.Lang)
	if conv == "" {
		return wire.Control{Nom: NameDocstrings, OK: true, Message: "no documentation convention checked for this language: skipped"}
	}
	code := in.Code
	if in.Lang == budgets.LangPython {
		code = dedentCode(code)
	}
	missing := undocumented(in.Lang, stripRange(in.Request.Sortie), code)
	if len(missing) == 0 {
		return wire.Control{Nom: NameDocstrings, OK: true}
	}
	exempt := map[string]bool{}
	for p, b := range in.Files {
		if budgets.LangOf(p) == in.Lang {
			for _, u := range undocumented(in.Lang, p, string(b)) {
				exempt[u.name] = true
			}
		}
	}
	var list []string
	for _, u := range missing {
		if exempt[u.name] {
			continue
		}
		list = append(list, u.String())
	}
	if len(list) == 0 {
		return wire.Control{Nom: NameDocstrings, OK: true}
	}
	more := ""
	if len(list) > 6 {
		more = fmt.Sprintf(" and %d more", len(list)-6)
		list = list[:6]
	}
	return result(NameDocstrings, []string{fmt.Sprintf("undocumented public definitions: %s%s; add %s to each", strings.Join(list, ", "), more, conv)})
}

// docConvention names the documentation a language expects, "" when this
// control does not check it.
func docConvention(lang budgets.Lang) string {
	switch lang {
	case budgets.LangPython:
		return `a """docstring"""`
	case budgets.LangGo:
		return "a `// Name …` doc comment"
	case budgets.LangJavaScript, budgets.LangTypeScript, budgets.LangTSX:
		return "a `/** … */` JSDoc comment"
	case budgets.LangRust:
		return "a `///` doc comment"
	case budgets.LangJava:
		return "a `/** … */` Javadoc comment"
	case budgets.LangCSharp:
		return "a `///` XML doc comment"
	}
	return ""
}

// missingDoc is one public definition without documentation.
type missingDoc struct {
	name  string // qualified for methods: Class.method
	line  int
	wrong bool // a Go comment that does not start with the name
}

func (m missingDoc) String() string {
	if m.wrong {
		return fmt.Sprintf("`%s` (line %d: its comment must start with `%s`)", m.name, m.line, lastPart(m.name))
	}
	return fmt.Sprintf("`%s` (line %d)", m.name, m.line)
}

// undocumented lists the public definitions of code (file p) that lack
// documentation.
func undocumented(lang budgets.Lang, p, code string) []missingDoc {
	defs := budgets.Definitions(lang, []byte(code))
	lines := strings.Split(code, "\n")
	testFile := budgets.IsTestFile(p, budgets.DefaultTestGlobs())
	var out []missingDoc
	for i, d := range defs {
		if d.Test || d.Name == "" || d.StartLine < 1 || d.EndLine > len(lines) {
			continue
		}
		parent := enclosing(defs, i)
		if parent != nil && parent.Kind != "class" && parent.Kind != "type" {
			continue // nested in a function
		}
		if parent != nil && parent.Test {
			continue
		}
		name := d.Name
		if parent != nil {
			name = parent.Name + "." + d.Name
		}
		ok, wrong, public := true, false, false
		switch lang {
		case budgets.LangPython:
			public = !strings.HasPrefix(d.Name, "_") && (parent == nil || !strings.HasPrefix(parent.Name, "_")) &&
				!pyExempt(lines, d) && !(testFile && (strings.HasPrefix(d.Name, "test") || strings.HasPrefix(d.Name, "Test")))
			ok = !public || pyHasDocstring(lines, d)
		case budgets.LangGo:
			public = isExported(d.Name) && !testFile && !strings.HasPrefix(d.Name, "Example")
			if public {
				ok, wrong = goHasDoc(lines, d)
			}
		case budgets.LangJavaScript, budgets.LangTypeScript, budgets.LangTSX:
			public = jsPublic(lines, defs, i, parent)
			ok = !public || hasBlockDoc(lines, d.StartLine)
		case budgets.LangRust:
			decl := declLine(lines, d, "#[")
			public = strings.HasPrefix(strings.TrimSpace(decl), "pub ")
			ok = !public || rustHasDoc(lines, d)
		case budgets.LangJava:
			head := strings.Join(lines[d.StartLine-1:min(d.EndLine, d.StartLine+4)], "\n")
			decl := declLine(lines, d, "@")
			public = strings.Contains(" "+decl, " public ") && !strings.Contains(head, "@Override") &&
				!(parent != nil && d.Name == parent.Name)
			ok = !public || hasBlockDoc(lines, d.StartLine)
		case budgets.LangCSharp:
			decl := declLine(lines, d, "[")
			public = strings.Contains(" "+decl, " public ") && !strings.Contains(decl, " override ")
			ok = !public || hasLineDoc(lines, d.StartLine, "///", "[")
		}
		if public && !ok {
			out = append(out, missingDoc{name: name, line: d.StartLine, wrong: wrong})
		}
	}
	return out
}

// enclosing is the innermost definition around defs[i], or nil.
func enclosing(defs []budgets.Def, i int) *budgets.Def {
	d := defs[i]
	for j := i - 1; j >= 0; j-- {
		p := defs[j]
		if p.StartLine <= d.StartLine && p.EndLine >= d.EndLine && p != d {
			return &defs[j]
		}
	}
	return nil
}

func isExported(name string) bool {
	return name != "" && name[0] >= 'A' && name[0] <= 'Z'
}

// declLine is the first line of a definition that is no attribute or
// annotation (lines starting with skip) nor comment.
func declLine(lines []string, d budgets.Def, skip string) string {
	for i := d.StartLine - 1; i < d.EndLine && i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if t == "" || strings.HasPrefix(t, skip) || strings.HasPrefix(t, "//") {
			continue
		}
		return t
	}
	return ""
}

// pyExempt reports definitions that document elsewhere: overloads,
// property setters and deleters, overrides.
func pyExempt(lines []string, d budgets.Def) bool {
	for i := d.StartLine - 1; i < d.EndLine && i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(t, "@") {
			return false
		}
		if strings.Contains(t, "overload") || strings.HasSuffix(t, ".setter") || strings.HasSuffix(t, ".deleter") || strings.Contains(t, "override") {
			return true
		}
	}
	return false
}

// pyHasDocstring reports whether a Python definition's body opens with a
// string literal.
func pyHasDocstring(lines []string, d budgets.Def) bool {
	start := d.StartLine - 1
	for start < d.EndLine-1 && strings.HasPrefix(strings.TrimSpace(lines[start]), "@") {
		start++
	}
	text := strings.Join(lines[start:d.EndLine], "\n")
	i := signatureColon(text)
	if i < 0 {
		return false
	}
	body := strings.TrimLeft(text[i+1:], " \t\r\n")
	for strings.HasPrefix(body, "#") { // comments before the docstring
		if j := strings.IndexByte(body, '\n'); j >= 0 {
			body = strings.TrimLeft(body[j+1:], " \t\r\n")
		} else {
			return false
		}
	}
	body = strings.TrimLeft(body, "rRuUbB")
	return strings.HasPrefix(body, `"`) || strings.HasPrefix(body, `'`)
}

// signatureColon is the index of the ':' ending a def or class header: the
// first one outside brackets and strings.
func signatureColon(text string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ':' && depth == 0:
			return i
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		}
	}
	return -1
}

// goDocArticle allows "A Name", "An Name", "The Name" at a doc's start.
var goDocArticle = regexp.MustCompile(`^(A|An|The)\s+`)

// goHasDoc reports whether the comment right above a Go definition exists
// (ok) and, when it does, whether it fails to start with the name (wrong).
func goHasDoc(lines []string, d budgets.Def) (ok, wrong bool) {
	i := d.StartLine - 2
	if i < 0 || !strings.HasPrefix(strings.TrimSpace(lines[i]), "//") {
		return false, false
	}
	for i > 0 && strings.HasPrefix(strings.TrimSpace(lines[i-1]), "//") {
		i--
	}
	first := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "//"))
	first = goDocArticle.ReplaceAllString(first, "")
	if strings.HasPrefix(first, d.Name) || strings.HasPrefix(first, "Deprecated") {
		return true, false
	}
	return false, true
}

// hasBlockDoc reports whether a `/** … */` block ends right above line
// (1-based), annotations and decorators between them allowed.
func hasBlockDoc(lines []string, line int) bool {
	i := line - 2
	for i >= 0 {
		t := strings.TrimSpace(lines[i])
		if strings.HasPrefix(t, "@") {
			i--
			continue
		}
		if !strings.HasSuffix(t, "*/") {
			return false
		}
		break
	}
	for ; i >= 0; i-- {
		t := strings.TrimSpace(lines[i])
		if strings.HasPrefix(t, "/**") {
			return true
		}
		if strings.HasPrefix(t, "/*") {
			return false
		}
	}
	return false
}

// hasLineDoc reports whether line comments starting with prefix sit right
// above line (1-based), skipping lines starting with skip (attributes).
func hasLineDoc(lines []string, line int, prefix, skip string) bool {
	for i := line - 2; i >= 0; i-- {
		t := strings.TrimSpace(lines[i])
		switch {
		case strings.HasPrefix(t, prefix):
			return true
		case skip != "" && strings.HasPrefix(t, skip):
		default:
			return false
		}
	}
	return false
}

// rustHasDoc reports whether a Rust item has `///`, `/** */` or #[doc]
// above it or among its attributes.
func rustHasDoc(lines []string, d budgets.Def) bool {
	for i := d.StartLine - 1; i < d.EndLine && i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if strings.HasPrefix(t, "///") || strings.HasPrefix(t, "#[doc") {
			return true
		}
		if !strings.HasPrefix(t, "#[") {
			break
		}
	}
	return hasLineDoc(lines, d.StartLine, "///", "#[") || hasLineDoc(lines, d.StartLine, "#[doc", "#[") || hasBlockDoc(lines, d.StartLine)
}

// jsPublic reports whether a JavaScript or TypeScript definition is part of
// the module's interface: exported, or a public method of an exported
// class.
func jsPublic(lines []string, defs []budgets.Def, i int, parent *budgets.Def) bool {
	d := defs[i]
	t := strings.TrimSpace(lines[d.StartLine-1])
	if parent == nil {
		return strings.HasPrefix(t, "export ")
	}
	if d.Name == "constructor" || strings.HasPrefix(d.Name, "_") || strings.HasPrefix(d.Name, "#") {
		return false
	}
	for _, m := range []string{"private ", "protected ", "#"} {
		if strings.HasPrefix(t, m) {
			return false
		}
	}
	return strings.HasPrefix(strings.TrimSpace(lines[parent.StartLine-1]), "export ")
}
