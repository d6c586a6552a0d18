package budgets

import (
	"context"
	"path"
	"strings"
	"sync"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/bash"
	"github.com/smacker/go-tree-sitter/c"
	"github.com/smacker/go-tree-sitter/cpp"
	"github.com/smacker/go-tree-sitter/csharp"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/ruby"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// Lang names a language with a tree-sitter grammar. The zero value means
// "no grammar": such files are counted as non-blank lines of code.
type Lang string

// The languages the counter understands.
const (
	LangPython     Lang = "python"
	LangGo         Lang = "go"
	LangJavaScript Lang = "javascript"
	LangTypeScript Lang = "typescript"
	LangTSX        Lang = "tsx"
	LangRust       Lang = "rust"
	LangJava       Lang = "java"
	LangC          Lang = "c"
	LangCPP        Lang = "cpp"
	LangCSharp     Lang = "csharp"
	LangRuby       Lang = "ruby"
	LangBash       Lang = "bash"
)

// LangOf picks the grammar from the file extension of path (case-insensitive),
// or Lang("") when there is none. `.h` is read as C: it is the common case and
// the C grammar parses most C++ headers well enough to tell comments from code.
func LangOf(p string) Lang {
	switch strings.ToLower(path.Ext(strings.ReplaceAll(p, `\`, "/"))) {
	case ".py", ".pyi":
		return LangPython
	case ".go":
		return LangGo
	case ".js", ".mjs", ".cjs", ".jsx":
		return LangJavaScript
	case ".ts", ".mts", ".cts":
		return LangTypeScript
	case ".tsx":
		return LangTSX
	case ".rs":
		return LangRust
	case ".java":
		return LangJava
	case ".c", ".h":
		return LangC
	case ".cc", ".cpp", ".cxx", ".hpp", ".hh":
		return LangCPP
	case ".cs":
		return LangCSharp
	case ".rb":
		return LangRuby
	case ".sh", ".bash":
		return LangBash
	}
	return ""
}

// langByName maps the names notebooks and users give a language to a Lang;
// unknown names yield Lang("") (count non-blank lines).
func langByName(name string) Lang {
	switch n := strings.ToLower(strings.TrimSpace(name)); n {
	case "python", "python3", "python2", "ipython", "ipython3":
		return LangPython
	case "go", "golang":
		return LangGo
	case "javascript", "js", "node":
		return LangJavaScript
	case "typescript", "ts":
		return LangTypeScript
	case "rust":
		return LangRust
	case "java":
		return LangJava
	case "c":
		return LangC
	case "c++", "cpp":
		return LangCPP
	case "c#", "csharp":
		return LangCSharp
	case "ruby":
		return LangRuby
	case "bash", "sh", "shell", "zsh":
		return LangBash
	}
	return ""
}

// grammar is a tree-sitter language with its node-type names indexed by
// symbol, so that walking a tree never crosses into C to ask a node's type.
type grammar struct {
	lang  *sitter.Language
	names []string   // symbol → node type
	kinds []nodeKind // symbol → what the line counter does with it
	body  uint16     // the field id of "body", 0 when the grammar has none
}

// nameOfSym is the node type of symbol sym.
func (g *grammar) nameOfSym(sym int) string {
	if sym < len(g.names) {
		return g.names[sym]
	}
	return ""
}

// kindOfSym classifies symbol sym for the line counter.
func (g *grammar) kindOfSym(sym int) nodeKind {
	if sym < len(g.kinds) {
		return g.kinds[sym]
	}
	return kindOther
}

// typeOf is n.Type() without the cgo call and allocation.
func (g *grammar) typeOf(n *sitter.Node) string {
	if s := int(n.Symbol()); s < len(g.names) {
		return g.names[s]
	}
	return n.Type()
}

// kindOf classifies n for the line counter.
func (g *grammar) kindOf(n *sitter.Node) nodeKind { return g.kindOfSym(int(n.Symbol())) }

func newGrammar(l Lang, tl *sitter.Language) *grammar {
	g := &grammar{lang: tl, body: fieldID(l, "body")}
	count := int(tl.SymbolCount())
	g.names = make([]string, count)
	g.kinds = make([]nodeKind, count)
	for i := range count {
		name := tl.SymbolName(sitter.Symbol(i))
		g.names[i] = name
		g.kinds[i] = kindFor(l, name)
	}
	return g
}

// languages maps each grammar to its tree-sitter constructor.
var languages = map[Lang]func() *sitter.Language{
	LangPython:     python.GetLanguage,
	LangGo:         golang.GetLanguage,
	LangJavaScript: javascript.GetLanguage,
	LangTypeScript: typescript.GetLanguage,
	LangTSX:        tsx.GetLanguage,
	LangRust:       rust.GetLanguage,
	LangJava:       java.GetLanguage,
	LangC:          c.GetLanguage,
	LangCPP:        cpp.GetLanguage,
	LangCSharp:     csharp.GetLanguage,
	LangRuby:       ruby.GetLanguage,
	LangBash:       bash.GetLanguage,
}

// grammarOnce builds each grammar's symbol tables on its first use only:
// the hook process handles one file, and building all twelve tables costs
// more than the whole parse of a 400-line file.
var grammarOnce = func() map[Lang]func() *grammar {
	m := make(map[Lang]func() *grammar, len(languages))
	for l, get := range languages {
		m[l] = sync.OnceValue(func() *grammar { return newGrammar(l, get()) })
	}
	return m
}()

// grammarOf returns lang's grammar, or nil when it has none.
func grammarOf(lang Lang) *grammar {
	if once := grammarOnce[lang]; once != nil {
		return once()
	}
	return nil
}

// maxParseBytes and parseTimeout bound the work handed to tree-sitter: the
// hook must answer quickly, and beyond them a plain non-blank count is good
// enough. Real files parse at several MB/s; garbage can take seconds per
// megabyte (error recovery), which is what the timeout is for.
const (
	maxParseBytes = 1 << 20
	parseTimeout  = 500 * time.Millisecond
)

// parsers recycles tree-sitter parsers, which own C allocations that are
// worth keeping across calls within one process (the daemon counts often).
var parsers = sync.Pool{New: func() any { return sitter.NewParser() }}

// parse returns the syntax tree of src, or nil when lang has no grammar, src
// is too large, or tree-sitter gives up.
func parse(lang Lang, src []byte) (*sitter.Tree, *grammar) {
	g := grammarOf(lang)
	if g == nil || len(src) == 0 || len(src) > maxParseBytes {
		return nil, nil
	}
	p := parsers.Get().(*sitter.Parser)
	defer parsers.Put(p)
	p.SetLanguage(g.lang)
	p.SetOperationLimit(int(parseTimeout.Microseconds()))
	tree, err := p.ParseCtx(context.Background(), nil, src)
	if err != nil || tree == nil {
		p.Reset() // else the next parse would resume this one
		return nil, nil
	}
	return tree, g
}
