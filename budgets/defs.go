package budgets

import (
	"strings"
	"unicode"
	"unicode/utf8"

	sitter "github.com/smacker/go-tree-sitter"
)

// Def is a definition found in a source file: what a delegation call can
// name as a model to follow ("tests/x.py:613-637") or as a piece to write.
type Def struct {
	Name string
	Kind string // "function", "method", "class" or "type"
	// Test is set for test functions and suites: pytest and unittest tests,
	// Go Test/Benchmark/Fuzz functions, Jest/Vitest it/test/describe calls,
	// Rust #[test] functions, JUnit @Test methods, C# [Fact]/[Test]/
	// [TestMethod] methods, Ruby test_ methods and RSpec it/describe blocks,
	// GoogleTest TEST macros.
	Test bool
	// StartLine and EndLine are 1-based and inclusive; decorators and
	// attributes belong to the definition they annotate.
	StartLine, EndLine int
}

// The kinds of Def.
const (
	kindFunction = "function"
	kindMethod   = "method"
	kindClass    = "class"
	kindType     = "type"
)

// Definitions lists the functions, methods, classes and types of src in
// source order, nested ones after their parent. Without a grammar, or when
// the source cannot be parsed, it returns nil.
func Definitions(lang Lang, src []byte) []Def {
	tree, g := parse(lang, src)
	if tree == nil {
		return nil
	}
	defer tree.Close()
	w := defWalker{lang: lang, g: g, src: src}
	c := sitter.NewTreeCursor(tree.RootNode())
	defer c.Close()
	w.children(c, scope{})
	return w.defs
}

// scope is what a definition needs to know of its surroundings.
type scope struct {
	inClass bool // directly in a class (or impl, module) body: functions are methods
}

type defWalker struct {
	lang Lang
	g    *grammar
	src  []byte
	defs []Def
}

// children visits the children of the cursor's node and leaves the cursor
// where it was. A cursor rather than Node.Child(i), which is linear in i.
func (w *defWalker) children(c *sitter.TreeCursor, s scope) {
	if !c.GoToFirstChild() {
		return
	}
	for {
		n := c.CurrentNode()
		switch k := w.g.kindOf(n); {
		case k == kindComment, k == kindString, n.ChildCount() == 0:
			// No definitions inside.
		default:
			w.children(c, w.visit(n, s))
		}
		if !c.GoToNextSibling() {
			break
		}
	}
	c.GoToParent()
}

// visit records n if it is a definition and returns the scope of its
// children.
func (w *defWalker) visit(n *sitter.Node, s scope) scope {
	t := w.g.typeOf(n)
	switch w.lang {
	case LangPython:
		return w.python(n, t, s)
	case LangGo:
		return w.golang(n, t, s)
	case LangJavaScript, LangTypeScript, LangTSX:
		return w.javascript(n, t, s)
	case LangRust:
		return w.rust(n, t, s)
	case LangJava:
		return w.java(n, t, s)
	case LangC, LangCPP:
		return w.cfamily(n, t, s)
	case LangCSharp:
		return w.csharp(n, t, s)
	case LangRuby:
		return w.ruby(n, t, s)
	case LangBash:
		if t == "function_definition" {
			name := w.field(n, "name")
			// shunit2 runs every function whose name starts with "test".
			w.add(n, n, name, kindFunction, strings.HasPrefix(name, "test"))
		}
	}
	return scope{}
}

func (w *defWalker) python(n *sitter.Node, t string, s scope) scope {
	switch t {
	case "decorated_definition", "block":
		// The decorated definition and a class body keep the scope.
		return s
	case "function_definition":
		name := w.field(n, "name")
		kind := kindFunction
		if s.inClass {
			kind = kindMethod
		}
		// pytest collects test_ functions and methods; unittest collects
		// test_ methods of TestCase classes, whatever the class is called.
		w.add(w.decorated(n), n, name, kind, name == "test" || strings.HasPrefix(name, "test_"))
	case "class_definition":
		name := w.field(n, "name")
		// pytest collects the test_ methods of Test* classes.
		w.add(w.decorated(n), n, name, kindClass, strings.HasPrefix(name, "Test"))
		return scope{inClass: true}
	}
	return scope{}
}

// decorated returns the decorated_definition around a Python definition,
// so that its decorators count as part of it.
func (w *defWalker) decorated(n *sitter.Node) *sitter.Node {
	if p := n.Parent(); p != nil && w.g.typeOf(p) == "decorated_definition" {
		return p
	}
	return n
}

func (w *defWalker) golang(n *sitter.Node, t string, _ scope) scope {
	switch t {
	case "function_declaration":
		name := w.field(n, "name")
		w.add(n, n, name, kindFunction, w.goTest(n, name))
	case "method_declaration":
		w.add(n, n, w.field(n, "name"), kindMethod, false)
	case "type_declaration":
		specs := 0
		for i := 0; i < int(n.NamedChildCount()); i++ {
			if c := n.NamedChild(i); c != nil && w.g.kindOf(c) != kindComment {
				specs++
			}
		}
		for i := 0; i < int(n.NamedChildCount()); i++ {
			spec := n.NamedChild(i)
			if spec == nil || (w.g.typeOf(spec) != "type_spec" && w.g.typeOf(spec) != "type_alias") {
				continue
			}
			// A lone spec spans its `type` keyword; grouped ones their own lines.
			at := spec
			if specs == 1 {
				at = n
			}
			w.add(at, at, w.field(spec, "name"), kindType, false)
		}
	}
	return scope{}
}

// goTest reports whether a Go function is one `go test` runs: TestX,
// BenchmarkX or FuzzX (X not lower-case) taking one *testing.T, B or F.
func (w *defWalker) goTest(n *sitter.Node, name string) bool {
	var param string
	for prefix, typ := range map[string]string{"Test": ".T", "Benchmark": ".B", "Fuzz": ".F"} {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(rest); rest != "" && unicode.IsLower(r) {
			return false
		}
		param = typ
	}
	if param == "" {
		return false
	}
	params := n.ChildByFieldName("parameters")
	if params == nil || params.NamedChildCount() != 1 {
		return false
	}
	typ := strings.Join(strings.Fields(w.field(params.NamedChild(0), "type")), "")
	return strings.HasPrefix(typ, "*") && strings.HasSuffix(typ, param)
}

func (w *defWalker) javascript(n *sitter.Node, t string, s scope) scope {
	switch t {
	case "function_declaration", "generator_function_declaration", "function_signature":
		w.add(n, n, w.field(n, "name"), kindFunction, false)
	case "class_declaration", "abstract_class_declaration", "class":
		if name := w.field(n, "name"); name != "" {
			w.add(n, n, name, kindClass, false)
		}
		return scope{inClass: true}
	case "class_body":
		return s
	case "method_definition", "abstract_method_signature":
		w.add(n, n, w.field(n, "name"), kindMethod, false)
	case "interface_declaration", "type_alias_declaration", "enum_declaration":
		w.add(n, n, w.field(n, "name"), kindType, false)
	case "variable_declarator":
		switch v := n.ChildByFieldName("value"); {
		case v == nil:
		case w.g.typeOf(v) == "arrow_function", w.g.typeOf(v) == "function_expression",
			w.g.typeOf(v) == "function", w.g.typeOf(v) == "generator_function":
			// `const f = () => …` is how modern JS defines a function;
			// a lone declarator spans its `const`.
			at := n
			if p := n.Parent(); p != nil && p.NamedChildCount() == 1 {
				at = p
			}
			w.add(at, at, w.field(n, "name"), kindFunction, false)
		}
	case "call_expression":
		w.jsTest(n)
	}
	return scope{}
}

// jsTest records a Jest/Vitest/Mocha `it('name', …)`, `test(…)` or
// `describe(…)` call, including `it.only`, `test.each(table)(…)` and
// the like; the name must be a string literal.
func (w *defWalker) jsTest(n *sitter.Node) {
	callee := n.ChildByFieldName("function")
	for callee != nil {
		switch w.g.typeOf(callee) {
		case "member_expression":
			callee = callee.ChildByFieldName("object")
			continue
		case "call_expression":
			callee = callee.ChildByFieldName("function")
			continue
		}
		break
	}
	if callee == nil || w.g.typeOf(callee) != "identifier" {
		return
	}
	kind := kindFunction
	switch w.text(callee) {
	case "it", "test", "fit", "xit", "xtest":
	case "describe", "fdescribe", "xdescribe", "suite":
		kind = kindClass
	default:
		return
	}
	first := firstArgument(n)
	if first == nil {
		return
	}
	switch w.g.typeOf(first) {
	case "string", "template_string":
		w.add(n, n, unquote(w.text(first)), kind, true)
	}
}

func (w *defWalker) rust(n *sitter.Node, t string, s scope) scope {
	switch t {
	case "function_item":
		kind := kindFunction
		if s.inClass {
			kind = kindMethod
		}
		start, test := n, false
		// Attributes are the function's previous siblings.
		for p := n.PrevNamedSibling(); p != nil; p = p.PrevNamedSibling() {
			pt := w.g.typeOf(p)
			if pt == "attribute_item" {
				start = p
				test = test || rustTestAttr(w.text(p))
				continue
			}
			if w.g.kindOf(p) == kindComment {
				continue
			}
			break
		}
		w.add(start, n, w.field(n, "name"), kind, test)
	case "struct_item", "enum_item", "union_item", "trait_item", "type_item":
		w.add(n, n, w.field(n, "name"), kindType, false)
		if t == "trait_item" {
			return scope{inClass: true}
		}
	case "impl_item":
		return scope{inClass: true}
	case "declaration_list":
		return s
	}
	return scope{}
}

// rustTestAttr reports whether an attribute marks a test: #[test],
// #[tokio::test], #[async_std::test(…)], #[rstest].
func rustTestAttr(attr string) bool {
	attr = strings.TrimPrefix(strings.TrimSpace(attr), "#")
	attr = strings.TrimSuffix(strings.TrimPrefix(attr, "["), "]")
	if i := strings.IndexAny(attr, "(="); i >= 0 {
		attr = attr[:i]
	}
	attr = strings.TrimSpace(attr)
	return attr == "test" || strings.HasSuffix(attr, "::test") || attr == "rstest"
}

func (w *defWalker) java(n *sitter.Node, t string, _ scope) scope {
	switch t {
	case "class_declaration", "enum_declaration", "record_declaration":
		w.add(n, n, w.field(n, "name"), kindClass, false)
	case "interface_declaration", "annotation_type_declaration":
		w.add(n, n, w.field(n, "name"), kindType, false)
	case "method_declaration", "constructor_declaration":
		test := false
		if mods := w.childOfType(n, "modifiers"); mods != nil {
			for i := 0; i < int(mods.NamedChildCount()); i++ {
				a := mods.NamedChild(i)
				if a == nil {
					continue
				}
				switch w.g.typeOf(a) {
				case "marker_annotation", "annotation":
					switch lastDotted(w.field(a, "name")) {
					case "Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate":
						test = true
					}
				}
			}
		}
		w.add(n, n, w.field(n, "name"), kindMethod, test)
	}
	return scope{}
}

func (w *defWalker) cfamily(n *sitter.Node, t string, s scope) scope {
	switch t {
	case "function_definition":
		decl := n.ChildByFieldName("declarator")
		name := w.declName(decl)
		kind := kindFunction
		if s.inClass || strings.Contains(name, "::") {
			kind = kindMethod
		}
		if suite, test, ok := w.gtest(decl); ok {
			w.add(n, n, suite+"."+test, kindFunction, true)
			return scope{}
		}
		w.add(n, n, name, kind, false)
	case "class_specifier", "struct_specifier", "union_specifier", "enum_specifier":
		if n.ChildByFieldName("body") == nil {
			return scope{} // a use, not a definition
		}
		if p := n.Parent(); p != nil && w.g.typeOf(p) == "type_definition" {
			return scope{inClass: true} // the typedef names it
		}
		kind := kindType
		if w.lang == LangCPP && (t == "class_specifier" || t == "struct_specifier") {
			kind = kindClass
		}
		if name := w.field(n, "name"); name != "" {
			w.add(n, n, name, kind, false)
		}
		return scope{inClass: true}
	case "type_definition":
		// `typedef struct {…} point;` is one type, named by its declarator.
		w.add(n, n, w.declName(n.ChildByFieldName("declarator")), kindType, false)
	case "field_declaration_list":
		return s
	}
	return scope{}
}

// declName digs the declared name out of a C declarator
// (`*f(int)`, `(*g)(void)`, `Greeter::greet(…)`).
func (w *defWalker) declName(d *sitter.Node) string {
	for i := 0; d != nil && i < 64; i++ {
		switch w.g.typeOf(d) {
		case "identifier", "field_identifier", "type_identifier", "qualified_identifier",
			"destructor_name", "operator_name", "primitive_type":
			return w.text(d)
		}
		next := d.ChildByFieldName("declarator")
		if next == nil && d.NamedChildCount() > 0 {
			next = d.NamedChild(0)
		}
		d = next
	}
	return ""
}

// gtest recognises GoogleTest's `TEST(Suite, Name) {…}` and its variants,
// which tree-sitter reads as a function named TEST.
func (w *defWalker) gtest(decl *sitter.Node) (suite, test string, ok bool) {
	if decl == nil || w.g.typeOf(decl) != "function_declarator" {
		return "", "", false
	}
	switch w.field(decl, "declarator") {
	case "TEST", "TEST_F", "TEST_P", "TYPED_TEST", "TYPED_TEST_P":
	default:
		return "", "", false
	}
	params := decl.ChildByFieldName("parameters")
	if params == nil || params.NamedChildCount() != 2 {
		return "", "", false
	}
	return strings.TrimSpace(w.text(params.NamedChild(0))), strings.TrimSpace(w.text(params.NamedChild(1))), true
}

func (w *defWalker) csharp(n *sitter.Node, t string, _ scope) scope {
	switch t {
	case "class_declaration", "struct_declaration", "record_declaration", "record_struct_declaration":
		w.add(n, n, w.field(n, "name"), kindClass, false)
	case "interface_declaration", "enum_declaration", "delegate_declaration":
		w.add(n, n, w.field(n, "name"), kindType, false)
	case "method_declaration", "constructor_declaration", "destructor_declaration":
		w.add(n, n, w.field(n, "name"), kindMethod, w.csTest(n))
	case "local_function_statement":
		w.add(n, n, w.field(n, "name"), kindFunction, w.csTest(n))
	}
	return scope{}
}

// csTest reports whether a C# method carries an xUnit, NUnit or MSTest
// test attribute.
func (w *defWalker) csTest(n *sitter.Node) bool {
	for i := 0; i < int(n.NamedChildCount()); i++ {
		list := n.NamedChild(i)
		if list == nil || w.g.typeOf(list) != "attribute_list" {
			continue
		}
		for j := 0; j < int(list.NamedChildCount()); j++ {
			a := list.NamedChild(j)
			if a == nil || w.g.typeOf(a) != "attribute" {
				continue
			}
			name := strings.TrimSuffix(lastDotted(w.field(a, "name")), "Attribute")
			switch name {
			case "Fact", "Theory", "Test", "TestCase", "TestCaseSource", "TestMethod", "DataTestMethod":
				return true
			}
		}
	}
	return false
}

func (w *defWalker) ruby(n *sitter.Node, t string, s scope) scope {
	switch t {
	case "method":
		name := w.field(n, "name")
		kind := kindFunction
		if s.inClass {
			kind = kindMethod
		}
		w.add(n, n, name, kind, strings.HasPrefix(name, "test_"))
	case "singleton_method":
		w.add(n, n, w.field(n, "name"), kindMethod, false)
	case "class", "module":
		w.add(n, n, w.field(n, "name"), kindClass, false)
		return scope{inClass: true}
	case "body_statement":
		return s
	case "call":
		w.rspec(n)
	}
	return scope{}
}

// rspec records RSpec and minitest-spec blocks: `it "…" do`, `describe X`,
// `context "…"`, `test "…" do`.
func (w *defWalker) rspec(n *sitter.Node) {
	if n.ChildByFieldName("block") == nil {
		return
	}
	kind := kindFunction
	switch w.field(n, "method") {
	case "it", "specify", "example", "scenario", "test", "its":
	case "describe", "context", "feature", "shared_examples", "shared_context":
		kind = kindClass
	default:
		return
	}
	if r := n.ChildByFieldName("receiver"); r != nil && w.text(r) != "RSpec" {
		return
	}
	first := firstArgument(n)
	if first == nil {
		return
	}
	switch w.g.typeOf(first) {
	case "string":
		w.add(n, n, unquote(w.text(first)), kind, true)
	case "constant", "scope_resolution":
		if kind == kindClass {
			w.add(n, n, w.text(first), kind, true)
		}
	}
}

// add records a definition spanning from start's first line to end's last.
func (w *defWalker) add(start, end *sitter.Node, name, kind string, test bool) {
	first := int(start.StartPoint().Row) + 1
	last := int(end.EndPoint().Row) + 1
	if end.EndPoint().Column == 0 && last > first {
		last-- // the node ends with a newline
	}
	w.defs = append(w.defs, Def{Name: name, Kind: kind, Test: test, StartLine: first, EndLine: last})
}

// field is the text of n's child in the named field, or "".
func (w *defWalker) field(n *sitter.Node, name string) string {
	if n == nil {
		return ""
	}
	return w.text(n.ChildByFieldName(name))
}

// childOfType finds n's first named child of type t.
func (w *defWalker) childOfType(n *sitter.Node, t string) *sitter.Node {
	for i := 0; i < int(n.NamedChildCount()); i++ {
		if c := n.NamedChild(i); c != nil && w.g.typeOf(c) == t {
			return c
		}
	}
	return nil
}

// text is the source of n, clamped in case of a confused tree.
func (w *defWalker) text(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	start, end := int(n.StartByte()), int(n.EndByte())
	if start > len(w.src) || end > len(w.src) || start >= end {
		return ""
	}
	return string(w.src[start:end])
}

// unquote strips the quotes of a string literal; escapes stay as written.
func unquote(s string) string {
	if len(s) >= 2 {
		switch s[0] {
		case '"', '\'', '`':
			if s[len(s)-1] == s[0] {
				return s[1 : len(s)-1]
			}
		}
	}
	return s
}

// lastDotted is the last part of a dotted name (org.junit.Test → Test).
func lastDotted(s string) string {
	return s[strings.LastIndexByte(s, '.')+1:]
}

// firstArgument is the first argument node of a call, or nil.
func firstArgument(call *sitter.Node) *sitter.Node {
	args := call.ChildByFieldName("arguments")
	if args == nil || args.NamedChildCount() == 0 {
		return nil
	}
	return args.NamedChild(0)
}
