package controls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"miam/budgets"
	"miam/delegate/wire"
)

// Complet is the `complet` control (SPEC §4), on every answer. For code it
// fails when the artefact
//
//   - is empty;
//   - is truncated: the answer stops inside a code fence; or the code has
//     syntax errors and its last line ends mid-statement (on , ( [ { = + \
//     and the like) or leaves a string open, or the last line has the error
//     itself, a MISSING node (a closer tree-sitter had to invent) or with
//     brackets left open; without a grammar, a last line ending
//     mid-statement or brackets left open;
//   - holds placeholders standing for code: a `...` statement, a comment
//     such as `# TODO: implement` or `// ... rest of the code`, or a
//     requested function (attendus) whose body is only `pass`, `...`,
//     `raise NotImplementedError`, `panic("TODO")`, `todo!()`,
//     `throw new Error("not implemented")` or nothing;
//   - lacks a definition of an `attendus` name (budgets.Definitions; a
//     mention in a comment or a call does not count; "Class.method" matches
//     method), or holds fewer test functions than `n_tests` (Def.Test, not
//     counting suites). Without a grammar, attendus need only be mentioned
//     and tests are not counted.
//
// For JSON it fails when the document is empty or stops before its end, or
// when an `attendus` name is no key of it. For text (texte, resume,
// traduction, extraction) it fails when the answer is empty or stops
// mid-sentence, or misses an `attendus` word.
type Complet struct{}

// Name returns "complet".
func (Complet) Name() string { return NameComplet }

// Cost returns CostPure.
func (Complet) Cost() Cost { return CostPure }

// Check runs the control.
func (Complet) Check(_ context.Context, in Input) wire.Control {
	var problems []string
	switch in.Kind() {
	case KindJSON:
		problems = completJSON(in)
	case KindText:
		problems = completText(in)
	default:
		problems = completCode(in)
	}
	return result(NameComplet, problems)
}

// maxMessage bounds a control's message, in bytes: it goes back into the
// model's prompt.
const maxMessage = 600

// result makes a wire.Control of a control's problems: OK without any, else
// the problems joined by "; ".
func result(name string, problems []string) wire.Control {
	if len(problems) == 0 {
		return wire.Control{Nom: name, OK: true}
	}
	msg := strings.Join(problems, "; ")
	if len(msg) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8Start(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return wire.Control{Nom: name, OK: false, Message: msg}
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func completCode(in Input) []string {
	code := in.Code
	if strings.TrimSpace(code) == "" {
		return []string{"the answer holds no code: send the whole artefact"}
	}
	var problems []string
	errs, parsed := budgets.CheckSyntax(in.Lang, []byte(code))
	if p := truncatedCode(in, errs, parsed); p != "" {
		problems = append(problems, p)
	}
	problems = append(problems, placeholders(code)...)
	if !parsed {
		for _, name := range in.Request.Attendus {
			if !mentions(code, lastPart(name)) {
				problems = append(problems, fmt.Sprintf("`%s` is missing: define it", name))
			}
		}
		return problems
	}
	defs := budgets.Definitions(in.Lang, []byte(code))
	lines := strings.Split(code, "\n")
	for _, name := range in.Request.Attendus {
		d, ok := findDef(defs, name)
		switch {
		case !ok && mentions(code, lastPart(name)):
			problems = append(problems, fmt.Sprintf("`%s` is mentioned but not defined: write its definition", name))
		case !ok:
			problems = append(problems, fmt.Sprintf("`%s` is not defined: write it", name))
		case d.Kind == "function" || d.Kind == "method":
			if stub := stubBody(in.Lang, lines, d); stub != "" {
				problems = append(problems, fmt.Sprintf("`%s` has a placeholder body (%s): implement it", name, stub))
			}
		}
	}
	if want := in.Request.NTests; want > 0 {
		got := 0
		for _, d := range defs {
			if d.Test && (d.Kind == "function" || d.Kind == "method") {
				got++
			}
		}
		if got < want {
			problems = append(problems, fmt.Sprintf("%d test functions found, %d wanted: write %d more", got, want, want-got))
		}
	}
	return problems
}

// truncatedCode says how the code looks cut off, or "", given its syntax
// errors.
func truncatedCode(in Input, errs []budgets.SyntaxError, parsed bool) string {
	for _, f := range fences(strings.ReplaceAll(in.Raw, "\r\n", "\n")) {
		if f.open {
			return "truncated: the answer stops inside a code block; send the whole artefact"
		}
	}
	last, lastLine := lastNonBlank(in.Code)
	if !parsed {
		if endsMidStatement(last) || unbalanced(in.Code) {
			return fmt.Sprintf("truncated after line %d `%s`: finish the code", lastLine, short(last))
		}
		return ""
	}
	if len(errs) == 0 {
		return ""
	}
	cut := endsMidStatement(last) || oddQuotes(last)
	for _, e := range errs {
		if e.Line >= lastLine && (e.Missing || unbalanced(in.Code)) {
			cut = true
		}
	}
	if cut {
		return fmt.Sprintf("truncated after line %d `%s`: finish the code", lastLine, short(last))
	}
	return ""
}

// lastNonBlank is the last line with text, trimmed, and its 1-based number.
func lastNonBlank(s string) (string, int) {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); t != "" {
			return t, i + 1
		}
	}
	return "", 0
}

// endsMidStatement reports whether a line of code cannot end a statement.
func endsMidStatement(line string) bool {
	if line == "" {
		return false
	}
	switch line[len(line)-1] {
	case ',', '(', '[', '{', '=', '+', '-', '*', '/', '\\', '&', '|', '.', ':', '<', '%', '^':
		return true
	}
	return false
}

// oddQuotes reports whether a line leaves a string open.
func oddQuotes(line string) bool {
	for _, q := range []string{`"`, "`"} {
		if strings.Count(strings.ReplaceAll(line, `\`+q, ""), q)%2 == 1 {
			return true
		}
	}
	return false
}

// unbalanced reports whether more brackets open than close, a rough test
// for languages without a grammar (strings and comments are not skipped).
func unbalanced(code string) bool {
	depth := 0
	for _, r := range code {
		switch r {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		}
	}
	return depth > 0
}

// placeholderComment matches a comment standing for code.
var placeholderComment = regexp.MustCompile(`(?i)^(#|//|/\*+|\*|--|<!--)\s*(` +
	`\.\.\.|…|` +
	`(todo|fixme)\b[\s:,-]*(implement|write|fill)|` +
	`(your|the) (code|implementation|logic) (goes )?here|` +
	`implement(ation)? (this|me|here|goes here)|` +
	`(add|insert|put) (your |the )?(code|implementation|logic) here|` +
	`rest of (the )?(code|implementation|function|file|class|tests)|` +
	`(existing|remaining|other|more|same) (code|methods|functions|tests|logic|cases)( (here|unchanged|as before|omitted))?\b)`)

// placeholders lists the lines of code that stand for code.
func placeholders(code string) []string {
	var out []string
	stubs := strings.Contains(code, "@overload") || strings.Contains(code, "Protocol") ||
		strings.Contains(code, "@abstractmethod")
	for i, line := range strings.Split(code, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case (t == "..." || t == "…") && !stubs:
			out = append(out, fmt.Sprintf("line %d is a placeholder `%s`: write the code it stands for", i+1, t))
		case placeholderComment.MatchString(t):
			out = append(out, fmt.Sprintf("line %d is a placeholder `%s`: write the code it stands for", i+1, short(t)))
		}
		if len(out) == 3 {
			break
		}
	}
	return out
}

// findDef finds the definition of an attendus name: exactly, or by the last
// part of a qualified name ("Class.method", "mod::f").
func findDef(defs []budgets.Def, name string) (budgets.Def, bool) {
	for _, d := range defs {
		if d.Name == name {
			return d, true
		}
	}
	last := lastPart(name)
	for _, d := range defs {
		if d.Name == last {
			return d, true
		}
	}
	return budgets.Def{}, false
}

// lastPart is the last component of a qualified name.
func lastPart(name string) string {
	if i := strings.LastIndexAny(name, ".:#"); i >= 0 && i < len(name)-1 {
		return name[i+1:]
	}
	return name
}

// mentions reports whether word occurs in text as a whole word.
func mentions(text, word string) bool {
	if word == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(word)
		if !isIdent(lastRune(text[:j])) && !isIdent(firstRune(text[end:])) {
			return true
		}
		i = j + 1
	}
}

func isIdent(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func firstRune(s string) rune {
	for _, r := range s {
		return r
	}
	return 0
}

func lastRune(s string) rune {
	r := []rune(s[max(0, len(s)-4):])
	if len(r) == 0 {
		return 0
	}
	return r[len(r)-1]
}

// stubStatement matches a statement that only stands for an implementation.
var stubStatement = regexp.MustCompile(`(?i)^(` +
	`pass|\.\.\.|…|` +
	`raise notimplementederror(\(.*\))?|` +
	`panic\(\s*"[^"]*(todo|implement)[^"]*"\s*\)|` +
	`(todo|unimplemented)!\(.*\)|` +
	`throw new (error|notimplementedexception|unsupportedoperationexception|notimplementederror)\(.*\)` +
	`)$`)

// stubBody returns the placeholder a function's body is made of ("pass",
// "empty"), or "" when it holds real code.
func stubBody(lang budgets.Lang, lines []string, d budgets.Def) string {
	if d.StartLine < 1 || d.EndLine > len(lines) || d.StartLine > d.EndLine {
		return ""
	}
	text := strings.Join(lines[d.StartLine-1:d.EndLine], "\n")
	var body string
	switch lang {
	case budgets.LangPython:
		i := signatureEnd(text, ':')
		if i < 0 {
			return ""
		}
		body = stripDocstring(text[i+1:])
	case budgets.LangRuby:
		return "" // `def … end` bodies: not judged
	default:
		i := signatureEnd(text, '{')
		j := strings.LastIndexByte(text, '}')
		if i < 0 || j <= i {
			return ""
		}
		body = text[i+1 : j]
	}
	var stmts []string
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") ||
			strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") {
			continue
		}
		for _, s := range strings.Split(t, ";") {
			if s = strings.TrimSpace(s); s != "" {
				stmts = append(stmts, s)
			}
		}
	}
	if len(stmts) == 0 {
		return "empty"
	}
	for _, s := range stmts {
		if !stubStatement.MatchString(s) {
			return ""
		}
	}
	return "`" + short(strings.Join(stmts, "; ")) + "`"
}

// signatureEnd is the index of the first opener (':' for Python, '{'
// elsewhere) outside brackets and strings, after the first '(' — so that
// decorators and parameter defaults do not count.
func signatureEnd(text string, opener byte) int {
	start := strings.IndexByte(text, '(')
	if start < 0 {
		start = 0
	}
	depth := 0
	var quote byte
	for i := start; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == opener && depth == 0:
			return i
		case c == '(' || c == '[' || (c == '{' && opener != '{'):
			depth++
		case c == ')' || c == ']' || (c == '}' && opener != '{'):
			depth--
		}
	}
	return -1
}

// stripDocstring removes a leading Python docstring.
func stripDocstring(body string) string {
	t := strings.TrimLeft(body, " \t\r\n")
	for _, q := range []string{`"""`, `'''`} {
		for _, prefix := range []string{"", "r", "R"} {
			if strings.HasPrefix(t, prefix+q) {
				rest := t[len(prefix)+3:]
				if end := strings.Index(rest, q); end >= 0 {
					return rest[end+3:]
				}
				return ""
			}
		}
	}
	return body
}

// short cuts s to about 60 characters for a message.
func short(s string) string {
	r := []rune(s)
	if len(r) <= 60 {
		return s
	}
	return string(r[:60]) + "…"
}

func completJSON(in Input) []string {
	doc := strings.TrimSpace(in.Code)
	if doc == "" {
		return []string{"the answer holds no JSON: send the whole document"}
	}
	var v any
	err := json.Unmarshal([]byte(doc), &v)
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset >= int64(len(doc)) {
		return []string{"truncated: the JSON stops before its end; send the whole document"}
	}
	if err != nil {
		return nil // invalid JSON is syntaxe's to report
	}
	var problems []string
	keys := map[string]bool{}
	collectKeys(v, keys)
	for _, name := range in.Request.Attendus {
		if !keys[name] {
			problems = append(problems, fmt.Sprintf("key %q is missing", name))
		}
	}
	return problems
}

// collectKeys gathers every object key of a decoded JSON value.
func collectKeys(v any, keys map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			keys[k] = true
			collectKeys(x, keys)
		}
	case []any:
		for _, x := range v {
			collectKeys(x, keys)
		}
	}
}

func completText(in Input) []string {
	text := in.Code
	if text == "" {
		return []string{"the answer is empty: send the whole text"}
	}
	var problems []string
	for _, f := range fences(strings.ReplaceAll(in.Raw, "\r\n", "\n")) {
		if f.open {
			problems = append(problems, "truncated: the answer stops inside a code block; send the whole text")
			break
		}
	}
	if last, _ := lastNonBlank(text); len(problems) == 0 && midSentence(last) {
		problems = append(problems, fmt.Sprintf("truncated mid-sentence after `%s`: finish the text", short(tail(last, 40))))
	}
	for _, name := range in.Request.Attendus {
		if !mentions(text, name) {
			problems = append(problems, fmt.Sprintf("%q is missing from the text", name))
		}
	}
	return problems
}

// midSentence reports whether the last line of a text stops mid-sentence:
// on a comma, an opening bracket or a dash, or, for a sentence of eight
// words or more that is no list item, heading or table row, on a letter or
// digit.
func midSentence(last string) bool {
	if last == "" {
		return false
	}
	r := []rune(last)
	switch r[len(r)-1] {
	case ',', ';', ':', '(', '[', '{', '-', '–', '—', '/', '&':
		return true
	}
	if !isIdent(r[len(r)-1]) {
		return false
	}
	switch {
	case strings.HasPrefix(last, "#"), strings.HasPrefix(last, "|"), strings.HasPrefix(last, ">"),
		strings.HasPrefix(last, "- "), strings.HasPrefix(last, "* "), strings.HasPrefix(last, "+ "):
		return false
	}
	if f := strings.Fields(last); len(f) > 0 && strings.TrimRight(f[0], "0123456789") == "." {
		return false // "1. item"
	}
	return len(strings.Fields(last)) >= 8
}

// tail is the last n runes of s.
func tail(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n:])
}
