package budgets

import (
	"bytes"
	"slices"
	"strings"
)

// LineKind says what one physical line of a file is, for the budget: only
// code lines are charged to the writer; documentation is tallied apart.
type LineKind uint8

// The kinds of line. A line holding code and a comment is code.
const (
	LineCode    LineKind = iota // holds at least one token that is not a comment
	LineComment                 // only comments, and not documentation
	LineBlank                   // only whitespace
	LineDoc                     // docstrings and doc comments
)

// String names the kind, for test failures and reports.
func (k LineKind) String() string {
	switch k {
	case LineCode:
		return "code"
	case LineComment:
		return "comment"
	case LineBlank:
		return "blank"
	case LineDoc:
		return "doc"
	}
	return "unknown"
}

// Counts tallies lines by kind; every physical line lands in exactly one
// field.
type Counts struct {
	Code, Comment, Blank, Doc int
}

// Total is the number of lines counted.
func (c Counts) Total() int { return c.Code + c.Comment + c.Blank + c.Doc }

// add tallies one line.
func (c *Counts) add(k LineKind) {
	switch k {
	case LineCode:
		c.Code++
	case LineComment:
		c.Comment++
	case LineBlank:
		c.Blank++
	case LineDoc:
		c.Doc++
	}
}

// Count tallies the lines of src by kind. Without a grammar (Lang("")), or
// when the source cannot be parsed, every non-blank line is code: a budget
// must not be escaped by writing in a language we do not know.
func Count(lang Lang, src []byte) Counts {
	var c Counts
	for _, k := range Classify(lang, src) {
		c.add(k)
	}
	return c
}

// nodeKind is what the line counter does with a node of a given type.
type nodeKind uint8

const (
	kindOther   nodeKind = iota // descend, or mark as code if a token
	kindComment                 // mark as comment (or doc), do not descend
	kindString                  // mark every line as code (or doc), do not descend
	kindDocHost                 // Python module/class/def: may open with a docstring
	kindDecl                    // Go top-level declaration, Ruby def/class: comments right above are doc
	kindJSXExpr                 // `{/* … */}` in JSX is a comment, braces and all
)

// kindFor decides, once per grammar symbol, how the counter treats it.
func kindFor(l Lang, name string) nodeKind {
	switch {
	case strings.Contains(name, "comment"):
		return kindComment
	case name == "concatenated_string":
		// Its parts are strings, but comments may sit between them.
		return kindOther
	case strings.Contains(name, "string"), name == "heredoc_body", name == "regex", name == "text_block":
		// Lines inside a multi-line literal belong to no token of their own.
		return kindString
	}
	switch l {
	case LangPython:
		switch name {
		case "module", "class_definition", "function_definition":
			return kindDocHost
		}
	case LangGo:
		switch name {
		case "package_clause", "function_declaration", "method_declaration",
			"type_declaration", "var_declaration", "const_declaration":
			return kindDecl
		}
	case LangRuby:
		switch name {
		case "method", "singleton_method", "class", "module", "singleton_class":
			return kindDecl
		}
	case LangJavaScript, LangTSX:
		if name == "jsx_expression" {
			return kindJSXExpr
		}
	}
	return kindOther
}

// docPrefixed reports whether the language marks doc comments by their
// opening (`///`, `//!`, `/**`), rather than by position.
func docPrefixed(l Lang) bool {
	switch l {
	case LangRust, LangC, LangCPP, LangJava, LangJavaScript, LangTypeScript, LangTSX, LangCSharp:
		return true
	}
	return false
}

// isDocComment reports whether comment text opens like a doc comment. Four
// slashes and `/***` banners are not doc, as in rustdoc; `/**/` is empty.
func isDocComment(text []byte) bool {
	switch {
	case bytes.HasPrefix(text, []byte("////")):
		return false
	case bytes.HasPrefix(text, []byte("///")), bytes.HasPrefix(text, []byte("//!")), bytes.HasPrefix(text, []byte("/*!")):
		return true
	case bytes.HasPrefix(text, []byte("/**")):
		return !bytes.HasPrefix(text, []byte("/**/")) && !bytes.HasPrefix(text, []byte("/***"))
	}
	return false
}

// symError is tree-sitter's symbol for an ERROR node (ts_builtin_sym_error).
const symError = 1<<16 - 1

// Per-line marks left by the tree walk; a line may collect several.
const (
	markCode uint8 = 1 << iota
	markComment
	markDoc
)

// Classify says, for each physical line of src (0-based; a final newline
// does not open a new line), what kind of line it is.
func Classify(lang Lang, src []byte) []LineKind {
	kinds := make([]LineKind, lineCount(src))
	blank := make([]bool, len(kinds))
	starts := make([]int, 0, len(kinds)) // byte offset of each line
	nonBlank := false
	for i, b := range src {
		if len(starts) == 0 || src[i-1] == '\n' {
			starts = append(starts, i)
			nonBlank = false
		}
		if b == '\n' {
			blank[len(starts)-1] = !nonBlank
		} else if !isSpace(b) {
			nonBlank = true
		}
	}
	if len(starts) > 0 && src[len(src)-1] != '\n' {
		blank[len(starts)-1] = !nonBlank
	}

	ft := flatten(lang, src)
	if ft == nil {
		for i := range kinds {
			if blank[i] {
				kinds[i] = LineBlank
			}
		}
		return kinds
	}
	defer ft.free()

	w := walker{lang: lang, g: grammarOf(lang), nodes: ft.nodes, src: src, starts: starts, marks: make([]uint8, len(kinds)), docPrefix: docPrefixed(lang)}
	w.walk()
	for i := range kinds {
		m := w.marks[i]
		switch {
		case blank[i]:
			kinds[i] = LineBlank
		case m&markCode != 0:
			kinds[i] = LineCode
		case m&markDoc != 0:
			kinds[i] = LineDoc
		case m&markComment != 0:
			kinds[i] = LineComment
		default:
			// No token claims the line (an unparsed stretch): charge it.
			kinds[i] = LineCode
		}
	}
	// Comments right above a declaration document it (Go, Ruby); a blank
	// line ends the group, as go/doc does.
	for _, r := range w.declRows {
		for i := r - 1; i >= 0 && i < len(kinds) && kinds[i] == LineComment; i-- {
			kinds[i] = LineDoc
		}
	}
	return kinds
}

// walker visits a syntax tree once and marks the lines each node touches.
type walker struct {
	lang      Lang
	g         *grammar
	nodes     []flatNode // the tree, in pre-order
	src       []byte
	starts    []int // byte offset of each line
	marks     []uint8
	docPrefix bool
	docStarts map[uint32]bool // start bytes of Python docstring literals
	declRows  []int           // rows where a documentable declaration starts
}

// walk visits the nodes in pre-order, jumping over the subtrees visit
// declines.
func (w *walker) walk() {
	for i := 0; i < len(w.nodes); {
		if w.visit(i) {
			i++
		} else {
			i = int(w.nodes[i].next)
		}
	}
}

// children calls f on the index of each child of node i, in order, until f
// returns false.
func (w *walker) children(i int, named bool, f func(j int) bool) {
	for j := i + 1; j < int(w.nodes[i].next); j = int(w.nodes[j].next) {
		if named && w.nodes[j].named == 0 {
			continue
		}
		if !f(j) {
			return
		}
	}
}

// onlyNamedChild is node i's only named child, or -1 when it has none or
// several.
func (w *walker) onlyNamedChild(i int) int {
	only, count := -1, 0
	w.children(i, true, func(j int) bool {
		only, count = j, count+1
		return count < 2
	})
	if count != 1 {
		return -1
	}
	return only
}

func (w *walker) kindAt(i int) nodeKind { return w.g.kindOfSym(int(w.nodes[i].sym)) }
func (w *walker) typeAt(i int) string   { return w.g.nameOfSym(int(w.nodes[i].sym)) }

// visit marks the lines of node i and reports whether to descend into it.
func (w *walker) visit(i int) bool {
	n := &w.nodes[i]
	start, end, depth := uint32(n.start), uint32(n.end), int(n.depth)
	sym := int(n.sym)
	switch w.g.kindOfSym(sym) {
	case kindComment:
		m := markComment
		if w.docPrefix && isDocComment(w.text(start, end)) {
			m = markDoc
		}
		w.mark(start, end, m)
		return false
	case kindString:
		m := markCode
		if w.docStarts[start] {
			m = markDoc
		}
		w.mark(start, end, m)
		return false
	case kindDocHost:
		w.findDocstring(i)
	case kindDecl:
		if w.lang != LangGo || depth == 1 {
			w.declRows = append(w.declRows, w.rowOf(start))
		}
	case kindJSXExpr:
		if c := w.onlyNamedChild(i); c >= 0 && w.kindAt(c) == kindComment {
			w.mark(start, end, markComment)
			return false
		}
	}
	// A node on one line is code as a whole: it holds at least one token
	// that is not a comment (tree-sitter hangs comments on the parent when
	// nothing else surrounds them), and a comment inside it cannot turn
	// the line back into a comment line. Skipping its subtree halves the
	// walk. The root, error nodes and docstring statements are the
	// exceptions.
	if depth > 0 && end > start && w.rowOf(start) == w.rowOf(end-1) &&
		!w.docStarts[start] && sym != symError {
		w.mark(start, end, markCode)
		return false
	}
	if int(n.next) == i+1 { // a leaf
		w.mark(start, end, markCode)
		return false
	}
	return true
}

// findDocstring records the docstring opening a Python module, class or
// function body (node i): a string-expression statement before any other
// statement.
func (w *walker) findDocstring(i int) {
	body := i
	if w.typeAt(i) != "module" {
		body = -1
		w.children(i, false, func(j int) bool {
			if w.g.body != 0 && uint16(w.nodes[j].field) == w.g.body {
				body = j
				return false
			}
			return true
		})
		if body < 0 {
			return
		}
	}
	w.children(body, true, func(st int) bool {
		if w.kindAt(st) == kindComment {
			return true
		}
		if w.typeAt(st) != "expression_statement" {
			return false
		}
		s := w.onlyNamedChild(st)
		if s < 0 {
			return false
		}
		switch w.typeAt(s) {
		case "string":
			w.addDocStart(uint32(w.nodes[s].start))
		case "concatenated_string":
			w.children(s, true, func(part int) bool {
				w.addDocStart(uint32(w.nodes[part].start))
				return true
			})
		}
		return false
	})
}

func (w *walker) addDocStart(b uint32) {
	if w.docStarts == nil {
		w.docStarts = make(map[uint32]bool)
	}
	w.docStarts[b] = true
}

// text is src[start:end], clamped in case of a confused tree.
func (w *walker) text(start, end uint32) []byte {
	if int(start) > len(w.src) || int(end) > len(w.src) || start >= end {
		return nil
	}
	return w.src[start:end]
}

// rowOf is the 0-based line holding byte offset b.
func (w *walker) rowOf(b uint32) int {
	i, found := slices.BinarySearch(w.starts, int(b))
	if !found {
		i--
	}
	return max(i, 0)
}

// mark sets m on every row where src[start:end] has a non-blank character.
// Scanning the bytes, rather than trusting start and end rows, keeps a token
// that ends with a newline (Rust line comments, C preprocessor lines) or
// starts with whitespace (JSX text) off the rows it only brushes.
func (w *walker) mark(start, end uint32, m uint8) {
	row := w.rowOf(start)
	done := false
	for _, b := range w.text(start, end) {
		if b == '\n' {
			row, done = row+1, false
			continue
		}
		if done || isSpace(b) {
			continue
		}
		if row < len(w.marks) {
			w.marks[row] |= m
		}
		done = true
	}
}

// lineCount is the number of physical lines: newlines, plus one for a last
// line without a newline.
func lineCount(src []byte) int {
	n := bytes.Count(src, []byte{'\n'})
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// isSpace is ASCII whitespace other than newline.
func isSpace(b byte) bool {
	switch b {
	case ' ', '\t', '\r', '\v', '\f':
		return true
	}
	return false
}
