package budgets

import (
	"bytes"
	"strings"
	"unicode/utf8"

	sitter "github.com/smacker/go-tree-sitter"
)

// SyntaxError is one place where tree-sitter could not read the source: an
// ERROR node (text it could not fit into the grammar) or a MISSING node (a
// token it had to invent, such as a closing bracket, to finish the tree).
type SyntaxError struct {
	// Line and Column are 1-based; Column counts characters (runes), not
	// bytes. A MISSING node that tree-sitter places on a blank line (a
	// closer expected at the end of the file) is reported just after the
	// last non-blank character before it, where the reader looks for it.
	Line, Column int
	// Missing is set for a MISSING node: something the source lacks, which
	// is how a truncated answer usually shows.
	Missing bool
	// Text is the offending source line, trimmed of surrounding blanks and
	// cut to about 120 characters.
	Text string
}

// maxSyntaxText bounds SyntaxError.Text, in runes.
const maxSyntaxText = 120

// SyntaxErrors lists the ERROR and MISSING nodes of src in source order; an
// empty result means the source parses cleanly. An ERROR node is reported
// once, without the errors nested in it. It returns nil as well when lang has
// no grammar or src could not be parsed at all (too large, or tree-sitter
// gave up): CheckSyntax tells those cases apart.
func SyntaxErrors(lang Lang, src []byte) []SyntaxError {
	errs, _ := CheckSyntax(lang, src)
	return errs
}

// CheckSyntax is SyntaxErrors that also reports whether src was checked at
// all: parsed is false when lang has no grammar, src is larger than the
// parser accepts, or tree-sitter gave up within its time limit. Empty source
// is checked and has no errors.
func CheckSyntax(lang Lang, src []byte) (errs []SyntaxError, parsed bool) {
	if grammarOf(lang) == nil {
		return nil, false
	}
	if len(src) == 0 {
		return nil, true
	}
	tree, _ := parse(lang, src)
	if tree == nil {
		return nil, false
	}
	defer tree.Close()
	root := tree.RootNode()
	if !root.HasError() {
		return nil, true
	}
	w := syntaxWalker{src: src}
	c := sitter.NewTreeCursor(root)
	defer c.Close()
	w.walk(c)
	return w.errs, true
}

type syntaxWalker struct {
	src  []byte
	errs []SyntaxError
}

// walk records the cursor's node if it is an error, else visits its
// children when their subtree holds one; the cursor ends where it started.
func (w *syntaxWalker) walk(c *sitter.TreeCursor) {
	n := c.CurrentNode()
	switch {
	case n.IsMissing():
		w.add(n, true)
		return
	case n.IsError():
		w.add(n, false)
		return
	case !n.HasError():
		return
	}
	if !c.GoToFirstChild() {
		return
	}
	for {
		w.walk(c)
		if !c.GoToNextSibling() {
			break
		}
	}
	c.GoToParent()
}

func (w *syntaxWalker) add(n *sitter.Node, missing bool) {
	off := min(int(n.StartByte()), len(w.src))
	lineStart := bytes.LastIndexByte(w.src[:off], '\n') + 1
	if missing && len(bytes.TrimSpace(lineOf(w.src, lineStart))) == 0 {
		if end := len(bytes.TrimRight(w.src[:lineStart], " \t\r\n")); end > 0 {
			off = end
			lineStart = bytes.LastIndexByte(w.src[:off], '\n') + 1
		}
	}
	w.errs = append(w.errs, SyntaxError{
		Line:    bytes.Count(w.src[:lineStart], []byte{'\n'}) + 1,
		Column:  utf8.RuneCount(w.src[lineStart:off]) + 1,
		Missing: missing,
		Text:    shorten(strings.TrimSpace(string(lineOf(w.src, lineStart)))),
	})
}

// lineOf is the line of src starting at byte start, without its newline.
func lineOf(src []byte, start int) []byte {
	rest := src[start:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// shorten cuts s to maxSyntaxText runes, marking the cut with "…", and
// replaces invalid UTF-8 so the text can go into JSON and prompts as is.
func shorten(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= maxSyntaxText {
		return s
	}
	r := []rune(s)
	return string(r[:maxSyntaxText]) + "…"
}
