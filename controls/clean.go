package controls

import (
	"strings"
	"unicode"

	"miam/budgets"
)

// Clean extracts the artefact from a model's raw answer and reports whether
// that took more than trimming blanks and turning CRLF into LF. lang is the expected language ("json"
// for JSON answers, "" when unknown). The rules, in order:
//
//  1. Without markdown fences, the answer is the code, less the lines of
//     prose before and after it ("Here is the function:", "This runs in
//     O(n)."): unindented lines of three words or more, ending in . : ! or ?,
//     without code punctuation and not starting with a keyword. For JSON,
//     the text from the first { or [ to the last } or ].
//  2. With fences (``` or ~~~, an unclosed last fence running to the end,
//     as in a truncated answer), the candidates are the fences whose info
//     string names lang ("python", "py", "x.py", "language-python"); else
//     the untagged ones ("", "text"); else, with lang unknown, those of the
//     first language tagged; else all of them.
//  3. One candidate is the artefact. Of several, identical ones count once;
//     for JSON the first that parses wins (one document, never a join);
//     when two candidates define the same name (a first draft, then the
//     corrected version) the longest wins; otherwise — the code split into
//     parts, or code then its usage — they are joined in order, separated
//     by a blank line.
//
// The artefact ends with exactly one newline unless it is empty.
func Clean(raw string, lang budgets.Lang) (code string, cleaned bool) {
	text := strings.ReplaceAll(raw, "\r\n", "\n")
	fs := fences(text)
	switch {
	case len(fs) == 0 && lang == jsonLang:
		code = jsonSpan(text)
	case len(fs) == 0:
		code = stripProse(text)
	default:
		code = pick(candidates(fs, lang), lang)
	}
	code = strings.Trim(code, "\n")
	code = strings.TrimRightFunc(code, unicode.IsSpace)
	cleaned = strings.TrimSpace(code) != strings.TrimSpace(text)
	if code != "" {
		code += "\n"
	}
	return code, cleaned
}

// fence is one fenced block of a markdown answer.
type fence struct {
	info string       // the info string's first word, lower-cased
	lang budgets.Lang // what info names, "" when nothing known
	body string
	open bool // no closing fence: the answer stops inside it
}

// fences finds the fenced blocks of text, CommonMark-style: an opening line
// of at least three backticks or tildes indented by at most three spaces, a
// closing line of the same character at least as long with nothing after.
// The body loses the opening fence's indentation.
func fences(text string) []fence {
	var out []fence
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		indent, char, n, info, ok := openFence(lines[i])
		if !ok {
			continue
		}
		var body []string
		j := i + 1
		for ; j < len(lines); j++ {
			if closesFence(lines[j], char, n) {
				break
			}
			body = append(body, dedent(lines[j], indent))
		}
		word := strings.ToLower(firstWord(info))
		out = append(out, fence{info: word, lang: fenceLang(word), body: strings.Join(body, "\n"), open: j == len(lines)})
		i = j
	}
	return out
}

// openFence parses an opening fence line.
func openFence(line string) (indent int, char byte, n int, info string, ok bool) {
	for indent < len(line) && indent < 4 && line[indent] == ' ' {
		indent++
	}
	if indent > 3 || indent >= len(line) || (line[indent] != '`' && line[indent] != '~') {
		return 0, 0, 0, "", false
	}
	char = line[indent]
	for n = 0; indent+n < len(line) && line[indent+n] == char; n++ {
	}
	if n < 3 {
		return 0, 0, 0, "", false
	}
	info = strings.TrimSpace(line[indent+n:])
	if char == '`' && strings.Contains(info, "`") {
		return 0, 0, 0, "", false // inline code, not a fence
	}
	return indent, char, n, info, true
}

// closesFence reports whether line closes a fence of n chars.
func closesFence(line string, char byte, n int) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	run := 0
	for run < len(t) && t[run] == char {
		run++
	}
	return run >= n && strings.TrimSpace(t[run:]) == ""
}

// dedent removes up to n leading spaces.
func dedent(line string, n int) string {
	for i := 0; i < n && strings.HasPrefix(line, " "); i++ {
		line = line[1:]
	}
	return line
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// fenceLang reads a fence's info word: a language name or alias, a file
// name ("x.py"), or pandoc's "{.python}" and HTML's "language-python".
func fenceLang(info string) budgets.Lang {
	info = strings.TrimPrefix(strings.Trim(info, "{}"), ".")
	info = strings.TrimPrefix(info, "language-")
	switch info {
	case "":
		return ""
	case "json", "jsonc", "json5":
		return jsonLang
	case "python", "py", "python3", "py3", "ipython":
		return budgets.LangPython
	case "go", "golang":
		return budgets.LangGo
	case "javascript", "js", "jsx", "node", "mjs", "cjs":
		return budgets.LangJavaScript
	case "typescript", "ts":
		return budgets.LangTypeScript
	case "tsx":
		return budgets.LangTSX
	case "rust", "rs":
		return budgets.LangRust
	case "java":
		return budgets.LangJava
	case "c", "h":
		return budgets.LangC
	case "cpp", "c++", "cc", "cxx", "hpp":
		return budgets.LangCPP
	case "csharp", "cs", "c#":
		return budgets.LangCSharp
	case "ruby", "rb":
		return budgets.LangRuby
	case "bash", "sh", "shell", "zsh":
		return budgets.LangBash
	}
	return budgets.LangOf(info)
}

// untagged reports whether a fence's info says nothing of a language.
func untagged(f fence) bool {
	switch f.info {
	case "", "text", "txt", "plaintext", "plain":
		return true
	}
	return false
}

// candidates applies rule 2 of Clean.
func candidates(fs []fence, lang budgets.Lang) []fence {
	keep := func(ok func(fence) bool) []fence {
		var out []fence
		for _, f := range fs {
			if ok(f) {
				out = append(out, f)
			}
		}
		return out
	}
	if lang != "" {
		if c := keep(func(f fence) bool { return f.lang == lang }); len(c) > 0 {
			return c
		}
	}
	if c := keep(untagged); len(c) > 0 {
		return c
	}
	if lang == "" {
		for _, f := range fs {
			if f.lang != "" {
				return keep(func(g fence) bool { return g.lang == f.lang })
			}
		}
	}
	return fs
}

// pick applies rule 3 of Clean.
func pick(cs []fence, lang budgets.Lang) string {
	var bodies []string
	for _, c := range cs {
		if !containsString(bodies, c.body) {
			bodies = append(bodies, c.body)
		}
	}
	if len(bodies) == 1 {
		return bodies[0]
	}
	if lang == jsonLang {
		for _, b := range bodies {
			if validJSON(b) {
				return b
			}
		}
		return bodies[0]
	}
	if redefines(bodies, lang) {
		longest := bodies[0]
		for _, b := range bodies[1:] {
			if len(b) > len(longest) {
				longest = b
			}
		}
		return longest
	}
	return strings.Join(bodies, "\n\n")
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// redefines reports whether two bodies define a same name.
func redefines(bodies []string, lang budgets.Lang) bool {
	seen := map[string]int{}
	for i, b := range bodies {
		for _, d := range budgets.Definitions(lang, []byte(b)) {
			if j, ok := seen[d.Name]; ok && j != i {
				return true
			}
			seen[d.Name] = i
		}
	}
	return false
}

// jsonSpan is text from its first { or [ to the last matching closer, or
// text itself when there is none.
func jsonSpan(text string) string {
	start := strings.IndexAny(text, "{[")
	if start < 0 {
		return text
	}
	closer := "}"
	if text[start] == '[' {
		closer = "]"
	}
	end := strings.LastIndex(text, closer)
	if end < start {
		return text[start:] // truncated: let the controls say so
	}
	return text[start : end+1]
}

// stripProse drops the prose lines before and after the code.
func stripProse(text string) string {
	lines := strings.Split(text, "\n")
	start, end := 0, len(lines)
	for start < end && (strings.TrimSpace(lines[start]) == "" || isProse(lines[start])) {
		start++
	}
	for end > start && (strings.TrimSpace(lines[end-1]) == "" || isProse(lines[end-1])) {
		end--
	}
	return strings.Join(lines[start:end], "\n")
}

// codeWord reports whether a line's first word, lower-cased, is a keyword
// that starts lines of code which could otherwise pass for prose.
func codeWord(w string) bool {
	switch w {
	case "import", "from", "return", "package", "use", "using", "echo", "print",
		"raise", "throw", "export", "const", "let", "var", "def", "class", "func",
		"fn", "pub", "public", "private", "assert", "yield", "if", "for", "while",
		"else", "elif", "case", "pass":
		return true
	}
	return false
}

// isProse reports whether a line reads as a sentence around the code
// rather than code: unindented, starting with a letter and not a keyword,
// three words or more, no code punctuation, ending in . : ! or ?.
func isProse(line string) bool {
	if line == "" || line[0] == ' ' || line[0] == '\t' {
		return false
	}
	t := strings.TrimSpace(line)
	words := strings.Fields(t)
	if len(words) < 3 || codeWord(strings.ToLower(words[0])) {
		return false
	}
	if r := []rune(t)[0]; !unicode.IsLetter(r) {
		return false
	}
	if strings.ContainsAny(t, "(){}[];=<>\"$|&#") {
		return false
	}
	switch t[len(t)-1] {
	case '.', ':', '!', '?':
		return true
	}
	return false
}

// firstFenceLang is the language of the answer's first fence naming a
// grammar, or "".
func firstFenceLang(raw string) budgets.Lang {
	for _, f := range fences(strings.ReplaceAll(raw, "\r\n", "\n")) {
		if f.lang != "" && f.lang != jsonLang {
			return f.lang
		}
	}
	return ""
}
