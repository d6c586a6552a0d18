package controls

import (
	"context"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"

	"miam/budgets"
)

// maxTreeBytes bounds the source the symboles control parses itself; larger
// sources are skipped (and said).
const maxTreeBytes = 1 << 20

// syntaxTree is a parsed source with the helpers the controls use to read
// it. Close it when done.
type syntaxTree struct {
	tree *sitter.Tree
	src  []byte
}

// treeLanguage is the tree-sitter grammar controls parse with themselves
// (symboles), nil for the others.
func treeLanguage(lang budgets.Lang) *sitter.Language {
	switch lang {
	case budgets.LangPython:
		return python.GetLanguage()
	case budgets.LangGo:
		return golang.GetLanguage()
	case budgets.LangJavaScript:
		return javascript.GetLanguage()
	case budgets.LangTypeScript:
		return typescript.GetLanguage()
	case budgets.LangTSX:
		return tsx.GetLanguage()
	}
	return nil
}

// parseTree parses src, or returns nil when lang has no grammar here, src is
// too large or the parser gives up (500 ms).
func parseTree(lang budgets.Lang, src []byte) *syntaxTree {
	l := treeLanguage(lang)
	if l == nil || len(src) > maxTreeBytes {
		return nil
	}
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(l)
	p.SetOperationLimit(500_000)
	t, err := p.ParseCtx(context.Background(), nil, src)
	if err != nil || t == nil {
		return nil
	}
	return &syntaxTree{tree: t, src: src}
}

func (t *syntaxTree) Close() { t.tree.Close() }

func (t *syntaxTree) root() *sitter.Node { return t.tree.RootNode() }

// text is n's source, "" for nil or a confused node.
func (t *syntaxTree) text(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	s, e := int(n.StartByte()), int(n.EndByte())
	if s > e || e > len(t.src) {
		return ""
	}
	return string(t.src[s:e])
}

// line is n's 1-based line.
func line(n *sitter.Node) int { return int(n.StartPoint().Row) + 1 }

// walk calls f on n and its descendants in source order; f returns false to
// skip a node's children. One cursor serves the whole walk.
func walk(n *sitter.Node, f func(*sitter.Node) bool) {
	if n == nil {
		return
	}
	c := sitter.NewTreeCursor(n)
	defer c.Close()
	for {
		if f(c.CurrentNode()) && c.GoToFirstChild() {
			continue
		}
		for !c.GoToNextSibling() {
			if !c.GoToParent() {
				return
			}
		}
	}
}

// namedChildren lists n's named children.
func namedChildren(n *sitter.Node) []*sitter.Node {
	if n == nil {
		return nil
	}
	out := make([]*sitter.Node, 0, n.NamedChildCount())
	for i := 0; i < int(n.NamedChildCount()); i++ {
		if c := n.NamedChild(i); c != nil {
			out = append(out, c)
		}
	}
	return out
}
