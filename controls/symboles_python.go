package controls

import (
	"fmt"
	"path"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"

	"miam/budgets"
	"miam/controls/symtab"
)

// pyClass is what a class makes visible: its members, its bases, and
// whether they are all known (else attribute reads are not judged).
type pyClass struct {
	name    string
	where   string // the files defining it, for messages
	members map[string]bool
	bases   []string
	open    bool // __getattr__, setattr, a metaclass: anything goes
}

// pyModule is a Python file's top level.
type pyModule struct {
	path    string
	names   map[string]bool
	classes map[string]*pyClass
	star    bool // `from x import *`: its names are unknown
}

// pyValue is what an expression is known to be.
type pyValue struct {
	stdMod   string    // a standard module, by dotted name
	joined   *pyModule // a joined module
	class    *pyClass  // a class
	instance *pyClass  // an instance of a class
}

func (v pyValue) known() bool {
	return v.stdMod != "" || v.joined != nil || v.class != nil || v.instance != nil
}

// pyModuleOf reads a file's top level: definitions, assignments, imports,
// classes with their members.
func pyModuleOf(t *syntaxTree, p string) *pyModule {
	m := &pyModule{path: p, names: map[string]bool{}, classes: map[string]*pyClass{}}
	var top func(n *sitter.Node)
	top = func(n *sitter.Node) {
		for _, c := range namedChildren(n) {
			switch c.Type() {
			case "decorated_definition":
				top(c)
			case "function_definition":
				m.names[t.text(c.ChildByFieldName("name"))] = true
			case "class_definition":
				cl := pyClassOf(t, c, p)
				m.names[cl.name] = true
				m.classes[cl.name] = cl
			case "import_statement", "import_from_statement", "future_import_statement":
				if pyStarImport(c) {
					m.star = true
				}
				for _, b := range pyImportBindings(t, c) {
					m.names[b.local] = true
				}
			case "if_statement", "try_statement", "with_statement", "block", "else_clause",
				"elif_clause", "except_clause", "finally_clause", "for_statement", "while_statement", "with_clause":
				top(c)
				for _, n := range pyBoundNames(t, c, false) {
					m.names[n] = true
				}
			case "expression_statement", "type_alias_statement":
				for _, n := range pyBoundNames(t, c, false) {
					m.names[n] = true
				}
			}
		}
	}
	top(t.root())
	return m
}

// pyClassOf reads a class: methods, class attributes, nested classes and
// the attributes its methods assign on self.
func pyClassOf(t *syntaxTree, n *sitter.Node, p string) *pyClass {
	cl := &pyClass{name: t.text(n.ChildByFieldName("name")), where: p, members: map[string]bool{}}
	if sup := n.ChildByFieldName("superclasses"); sup != nil {
		for _, b := range namedChildren(sup) {
			switch b.Type() {
			case "keyword_argument":
				cl.open = true // metaclass=…
			case "comment":
			default:
				cl.bases = append(cl.bases, t.text(b))
			}
		}
	}
	body := n.ChildByFieldName("body")
	for _, c := range namedChildren(body) {
		def := c
		if c.Type() == "decorated_definition" {
			def = c.ChildByFieldName("definition")
		}
		if def == nil {
			continue
		}
		switch def.Type() {
		case "function_definition", "class_definition":
			name := t.text(def.ChildByFieldName("name"))
			cl.members[name] = true
			if name == "__getattr__" || name == "__getattribute__" {
				cl.open = true
			}
		default:
			for _, b := range pyBoundNames(t, def, false) {
				cl.members[b] = true
			}
		}
	}
	// self.x = … anywhere in the class; setattr makes it open.
	walk(body, func(c *sitter.Node) bool {
		switch c.Type() {
		case "assignment", "augmented_assignment", "for_statement", "for_in_clause":
			pyAttrTargets(t, c.ChildByFieldName("left"), cl.members)
		case "call":
			if f := t.text(c.ChildByFieldName("function")); f == "setattr" || f == "self.__dict__.update" {
				cl.open = true
			}
		case "named_expression":
		}
		return true
	})
	return cl
}

// pyAttrTargets records the attribute names assigned through any object in
// a target (self.x, cls.y, self.a, self.b = …).
func pyAttrTargets(t *syntaxTree, n *sitter.Node, into map[string]bool) {
	if n == nil {
		return
	}
	switch n.Type() {
	case "attribute":
		into[t.text(n.ChildByFieldName("attribute"))] = true
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "parenthesized_expression", "list_splat_pattern":
		for _, c := range namedChildren(n) {
			pyAttrTargets(t, c, into)
		}
	}
}

// pyBoundNames lists the names a statement binds: assignment targets, loop
// variables, `as` names, walrus names, globals; with deep, also those of
// nested function parameters and comprehensions.
func pyBoundNames(t *syntaxTree, n *sitter.Node, deep bool) []string {
	out, _ := pyBindings(t, n, deep)
	return out
}

// pyBindings is pyBoundNames that also returns the import statements met.
func pyBindings(t *syntaxTree, n *sitter.Node, deep bool) (out []string, imports []*sitter.Node) {
	targets := func(x *sitter.Node) {
		walk(x, func(c *sitter.Node) bool {
			switch c.Type() {
			case "identifier":
				out = append(out, t.text(c))
			case "attribute", "subscript":
				return false
			}
			return true
		})
	}
	walk(n, func(c *sitter.Node) bool {
		switch c.Type() {
		case "function_definition", "class_definition":
			out = append(out, t.text(c.ChildByFieldName("name")))
			if !deep {
				return false
			}
		case "lambda":
			if !deep {
				return false
			}
		case "assignment", "augmented_assignment", "for_statement", "for_in_clause":
			targets(c.ChildByFieldName("left"))
		case "as_pattern":
			targets(c.ChildByFieldName("alias"))
		case "named_expression":
			targets(c.ChildByFieldName("name"))
		case "global_statement", "nonlocal_statement", "case_pattern", "as_pattern_target",
			"keyword_pattern", "splat_pattern", "dict_pattern", "class_pattern":
			targets(c)
		case "except_clause", "with_item":
			// `except E as e`, `with f() as x` in older grammars.
			seenAs := false
			for i := 0; i < int(c.ChildCount()); i++ {
				k := c.Child(i)
				if k.Type() == "as" {
					seenAs = true
				} else if seenAs && k.Type() == "identifier" {
					out = append(out, t.text(k))
				}
			}
		case "parameters", "lambda_parameters":
			for _, p := range namedChildren(c) {
				switch p.Type() {
				case "identifier":
					out = append(out, t.text(p))
				case "default_parameter", "typed_default_parameter":
					out = append(out, t.text(p.ChildByFieldName("name")))
				default:
					for _, k := range namedChildren(p) {
						if k.Type() == "identifier" {
							out = append(out, t.text(k))
							break
						}
					}
				}
			}
		case "import_statement", "import_from_statement":
			imports = append(imports, c)
			for _, b := range pyImportBindings(t, c) {
				out = append(out, b.local)
			}
			return false
		}
		return true
	})
	return out, imports
}

// pyImport is one name an import statement binds.
type pyImport struct {
	local  string // the name bound
	module string // the module imported from ("" for `import m`), dots kept for relative ones
	name   string // the dotted module (import m) or the name imported (from m import name)
	line   int
}

func pyStarImport(n *sitter.Node) bool {
	for _, c := range namedChildren(n) {
		if c.Type() == "wildcard_import" {
			return true
		}
	}
	return false
}

// pyImportBindings lists what an import statement binds.
func pyImportBindings(t *syntaxTree, n *sitter.Node) []pyImport {
	var out []pyImport
	from := ""
	if n.Type() == "import_from_statement" {
		from = t.text(n.ChildByFieldName("module_name"))
	}
	if n.Type() == "future_import_statement" {
		from = "__future__"
	}
	for i := 0; i < int(n.ChildCount()); i++ {
		c := n.Child(i)
		if c == nil || n.FieldNameForChild(i) != "name" {
			continue
		}
		b := pyImport{module: from, line: line(c)}
		switch c.Type() {
		case "aliased_import":
			b.name = t.text(c.ChildByFieldName("name"))
			b.local = t.text(c.ChildByFieldName("alias"))
		default:
			b.name = t.text(c)
			b.local = b.name
			if from == "" {
				b.local, _, _ = strings.Cut(b.name, ".") // import a.b binds a
			}
		}
		out = append(out, b)
	}
	return out
}

// pyChecker judges one Python answer.
type pyChecker struct {
	t        *syntaxTree
	deps     deps
	std      *symtab.Table
	modules  map[string]*pyModule // joined modules by dotted name (every suffix)
	classes  map[string]*pyClass  // classes of the answer and the joined files, merged by name
	topNames map[string]bool      // names bound at the top of the joined files
	bound    map[string]bool      // names the answer binds anywhere
	star     bool
	sortie   string
	problems []string
	ownTops  map[string]bool // top-level packages of the project (dirs of joined files)
}

// pythonSymbols runs the Python checks; checked is false when the answer
// cannot be parsed.
func pythonSymbols(in Input, d deps) (problems []string, checked bool) {
	t := parseTree(budgets.LangPython, []byte(dedentCode(in.Code)))
	if t == nil {
		return nil, false
	}
	defer t.Close()
	c := &pyChecker{t: t, deps: d, std: symtab.Python(), modules: map[string]*pyModule{},
		classes: map[string]*pyClass{}, topNames: map[string]bool{}, bound: map[string]bool{},
		sortie: stripRange(in.Request.Sortie), ownTops: map[string]bool{}}
	for _, p := range joinedOf(in, budgets.LangPython) {
		jt := parseTree(budgets.LangPython, in.Files[p])
		if jt == nil {
			continue
		}
		m := pyModuleOf(jt, p)
		jt.Close()
		for _, name := range pyModuleNames(p) {
			c.modules[name] = m
		}
		for n := range m.names {
			c.topNames[n] = true
		}
		c.star = c.star || m.star
		for _, cl := range m.classes {
			c.mergeClass(cl)
		}
		if first, _, ok := strings.Cut(p, "/"); ok {
			c.ownTops[pyNorm(first)] = true
		}
	}
	if c.sortie != "" {
		if first, _, ok := strings.Cut(c.sortie, "/"); ok {
			c.ownTops[pyNorm(first)] = true
		}
	}
	answer := pyModuleOf(t, c.sortie)
	for _, cl := range answer.classes {
		c.mergeClass(cl)
	}
	if c.sortie != "" {
		for _, name := range pyModuleNames(c.sortie) {
			if m, ok := c.modules[name]; ok {
				for n := range answer.names {
					m.names[n] = true
				}
			}
		}
	}
	c.star = c.star || answer.star
	bound, imports := pyBindings(t, t.root(), true)
	for _, n := range bound {
		c.bound[n] = true
	}
	env := c.moduleEnv(imports)
	c.scope(t.root(), env, nil)
	return c.problems, true
}

// pyModuleNames are the dotted names a file can be imported as: every
// suffix of its path ("src/app/x.py": src.app.x, app.x, x).
func pyModuleNames(p string) []string {
	p = strings.TrimSuffix(strings.TrimSuffix(p, ".py"), ".pyi")
	p = strings.TrimSuffix(p, "/__init__")
	parts := strings.Split(p, "/")
	var out []string
	for i := range parts {
		out = append(out, strings.Join(parts[i:], "."))
	}
	return out
}

// mergeClass adds a class definition to the classes known by name.
func (c *pyChecker) mergeClass(cl *pyClass) {
	have, ok := c.classes[cl.name]
	if !ok {
		cp := *cl
		cp.members = map[string]bool{}
		for m := range cl.members {
			cp.members[m] = true
		}
		c.classes[cl.name] = &cp
		return
	}
	for m := range cl.members {
		have.members[m] = true
	}
	have.bases = append(have.bases, cl.bases...)
	have.open = have.open || cl.open
	if !strings.Contains(have.where, cl.where) {
		have.where += " and " + cl.where
	}
}

// closedBases are bases that add no instance attributes worth knowing.
var closedBases = map[string]bool{"object": true, "ABC": true, "abc.ABC": true}

// hasMember reports whether class cl, its bases included, has name; ok is
// false when some base is unknown (or the class is open).
func (c *pyChecker) hasMember(cl *pyClass, name string, depth int) (has, ok bool) {
	if cl.open || depth > 8 {
		return false, false
	}
	if cl.members[name] {
		return true, true
	}
	for _, b := range cl.bases {
		if closedBases[b] || strings.HasPrefix(b, "Generic[") {
			continue
		}
		bc, known := c.classes[b]
		if !known {
			if i := strings.LastIndexByte(b, '.'); i >= 0 {
				bc, known = c.classes[b[i+1:]]
			}
		}
		if !known || bc == cl {
			return false, false
		}
		h, k := c.hasMember(bc, name, depth+1)
		if !k {
			return false, false
		}
		if h {
			return true, true
		}
	}
	return false, true
}

// moduleEnv binds what the answer's imports and classes make visible.
func (c *pyChecker) moduleEnv(imports []*sitter.Node) map[string]pyValue {
	env := map[string]pyValue{}
	for name, cl := range c.classes {
		env[name] = pyValue{class: cl}
	}
	for _, n := range imports {
		for _, b := range pyImportBindings(c.t, n) {
			if v := c.checkImport(b); v.known() {
				env[b.local] = v
			} else {
				delete(env, b.local)
			}
		}
	}
	return env
}

// resolveModule finds a module by name: standard ("std"), joined, or "".
func (c *pyChecker) resolveModule(module string) (std string, joined *pyModule) {
	if strings.HasPrefix(module, ".") {
		dots := len(module) - len(strings.TrimLeft(module, "."))
		dir := path.Dir(c.sortie)
		for range dots - 1 {
			dir = path.Dir(dir)
		}
		rest := strings.ReplaceAll(strings.TrimLeft(module, "."), ".", "/")
		for _, name := range pyModuleNames(path.Join(dir, rest) + ".py") {
			if m, ok := c.modules[name]; ok && strings.Contains(m.path, "/") == strings.Contains(path.Join(dir, rest), "/") {
				return "", m
			}
		}
		if m, ok := c.modules[strings.ReplaceAll(strings.TrimPrefix(path.Join(dir, rest), "./"), "/", ".")]; ok {
			return "", m
		}
		return "", nil
	}
	if m, ok := c.modules[module]; ok {
		return "", m
	}
	if c.std.HasModule(module) {
		return module, nil
	}
	return "", nil
}

// checkImport judges one imported name and returns what it binds.
func (c *pyChecker) checkImport(b pyImport) pyValue {
	if b.module == "" { // import a.b.c
		std, joined := c.resolveModule(b.name)
		switch {
		case joined != nil:
			if b.local == b.name {
				return pyValue{joined: joined}
			}
			return pyValue{}
		case std != "":
			top, _, _ := strings.Cut(b.name, ".")
			if b.local == top {
				return pyValue{stdMod: top}
			}
			return pyValue{stdMod: std}
		}
		c.unknownModule(b.name, b.line)
		return pyValue{}
	}
	if b.module == "__future__" {
		return pyValue{}
	}
	std, joined := c.resolveModule(b.module)
	switch {
	case joined != nil:
		if cl, ok := joined.classes[b.name]; ok {
			return pyValue{class: c.classes[cl.name]}
		}
		if !joined.names[b.name] && !joined.star && !c.isSubmodule(joined, b.name) {
			c.problems = append(c.problems, fmt.Sprintf("line %d: `%s` is not defined in %s: use a name it defines", b.line, b.name, joined.path))
		}
	case std != "":
		if c.std.HasModule(std + "." + b.name) {
			return pyValue{stdMod: std + "." + b.name}
		}
		if !c.std.Has(std, b.name) {
			c.problems = append(c.problems, fmt.Sprintf("line %d: `%s` is not in the standard module %s", b.line, b.name, std))
		}
	case !strings.HasPrefix(b.module, "."):
		c.unknownModule(b.module, b.line)
	}
	return pyValue{}
}

// isSubmodule reports whether name is a joined module inside package m.
func (c *pyChecker) isSubmodule(m *pyModule, name string) bool {
	dir := strings.TrimSuffix(m.path, "/__init__.py")
	if dir == m.path {
		return false
	}
	_, ok := c.modules[strings.ReplaceAll(dir, "/", ".")+"."+name]
	return ok
}

// unknownModule reports an import that is neither standard, joined, the
// project's own nor a declared dependency — when a manifest is known.
func (c *pyChecker) unknownModule(module string, ln int) {
	top, _, _ := strings.Cut(module, ".")
	if c.std.HasModule(top) {
		c.problems = append(c.problems, fmt.Sprintf("line %d: module `%s` is not in the standard library", ln, module))
		return
	}
	if !c.deps.python || c.deps.pyNames[pyNorm(top)] || c.ownTops[pyNorm(top)] {
		return
	}
	if _, ok := c.modules[top]; ok {
		return
	}
	c.problems = append(c.problems, fmt.Sprintf("line %d: module `%s` is neither in the standard library, the joined files nor %s: use a declared dependency", ln, top, declaredIn(c.deps.pySource, "the project's dependencies")))
}

// scope checks the statements under n with env; cls is the class whose
// methods n's functions are, nil outside a class body. One walk gathers the
// scope's bindings, its calls and attribute reads, and its nested functions
// and classes; the reads are judged once the bindings are typed.
func (c *pyChecker) scope(n *sitter.Node, env map[string]pyValue, cls *pyClass) {
	var reads, nested []*sitter.Node
	assigned := map[string][]pyValue{}
	var pending [][2]*sitter.Node // name, call assigned to it, typed after the walk
	walk(n, func(x *sitter.Node) bool {
		if x == n {
			return true
		}
		switch x.Type() {
		case "function_definition", "class_definition":
			nested = append(nested, x)
			return false
		case "call", "attribute":
			reads = append(reads, x)
		case "assignment":
			left, right := x.ChildByFieldName("left"), x.ChildByFieldName("right")
			if left != nil && left.Type() == "identifier" && right != nil {
				if right.Type() == "call" {
					pending = append(pending, [2]*sitter.Node{left, right})
				} else {
					assigned[c.t.text(left)] = append(assigned[c.t.text(left)], pyValue{})
				}
				return true
			}
			for _, name := range pyBoundNames(c.t, left, false) {
				assigned[name] = append(assigned[name], pyValue{})
			}
		case "augmented_assignment", "for_statement", "for_in_clause", "as_pattern", "named_expression",
			"except_clause", "with_item", "global_statement", "nonlocal_statement":
			targets := x
			if l := x.ChildByFieldName("left"); l != nil {
				targets = l
			}
			for _, name := range pyBoundNames(c.t, targets, false) {
				assigned[name] = append(assigned[name], pyValue{})
			}
		case "lambda":
			return false
		}
		return true
	})
	for _, p := range pending {
		v := pyValue{}
		if f := c.resolve(p[1].ChildByFieldName("function"), env); f.class != nil {
			v = pyValue{instance: f.class}
		}
		assigned[c.t.text(p[0])] = append(assigned[c.t.text(p[0])], v)
	}
	for name, vs := range assigned {
		same := vs[0].instance != nil
		for _, v := range vs[1:] {
			same = same && v.instance == vs[0].instance
		}
		if same {
			env[name] = vs[0]
		} else {
			delete(env, name)
		}
	}
	for _, x := range reads {
		if x.Type() == "call" {
			c.call(x, env)
		} else {
			c.attribute(x, env)
		}
	}
	for _, x := range nested {
		if x.Type() == "function_definition" {
			c.function(x, env, cls)
			continue
		}
		cl := c.classes[c.t.text(x.ChildByFieldName("name"))]
		if sup := x.ChildByFieldName("superclasses"); sup != nil {
			c.scope(sup, env, nil)
		}
		c.scope(x.ChildByFieldName("body"), env, cl)
	}
}

// function checks a function with its own locals: parameters annotated
// with a known class, self and cls of methods.
func (c *pyChecker) function(fn *sitter.Node, outer map[string]pyValue, cls *pyClass) {
	env := make(map[string]pyValue, len(outer))
	for k, v := range outer {
		env[k] = v
	}
	params := namedChildren(fn.ChildByFieldName("parameters"))
	static := false
	if p := fn.Parent(); p != nil && p.Type() == "decorated_definition" {
		static = strings.Contains(c.t.text(p), "@staticmethod")
	}
	for i, p := range params {
		name, typ := "", ""
		switch p.Type() {
		case "identifier":
			name = c.t.text(p)
		case "typed_parameter":
			for _, k := range namedChildren(p) {
				if k.Type() == "identifier" {
					name = c.t.text(k)
					break
				}
			}
			typ = c.t.text(p.ChildByFieldName("type"))
		case "default_parameter", "typed_default_parameter":
			name = c.t.text(p.ChildByFieldName("name"))
			typ = c.t.text(p.ChildByFieldName("type"))
		}
		if name == "" {
			continue
		}
		delete(env, name)
		switch {
		case i == 0 && cls != nil && !static:
			env[name] = pyValue{instance: cls}
		case typ != "":
			if cl, ok := c.classes[strings.Trim(typ, `"'`)]; ok {
				env[name] = pyValue{instance: cl}
			}
		}
	}
	c.scope(fn.ChildByFieldName("body"), env, nil)
	if rt := fn.ChildByFieldName("return_type"); rt != nil {
		c.scope(rt, outer, nil)
	}
}

// resolve tells what an expression is, as far as env knows.
func (c *pyChecker) resolve(n *sitter.Node, env map[string]pyValue) pyValue {
	if n == nil {
		return pyValue{}
	}
	switch n.Type() {
	case "identifier":
		return env[c.t.text(n)]
	case "attribute":
		obj := c.resolve(n.ChildByFieldName("object"), env)
		attr := c.t.text(n.ChildByFieldName("attribute"))
		switch {
		case obj.stdMod != "":
			if c.std.HasModule(obj.stdMod + "." + attr) {
				return pyValue{stdMod: obj.stdMod + "." + attr}
			}
		case obj.joined != nil:
			if cl, ok := obj.joined.classes[attr]; ok {
				return pyValue{class: c.classes[cl.name]}
			}
		}
	case "call":
		if f := c.resolve(n.ChildByFieldName("function"), env); f.class != nil {
			return pyValue{instance: f.class}
		}
	case "parenthesized_expression":
		if kids := namedChildren(n); len(kids) == 1 {
			return c.resolve(kids[0], env)
		}
	}
	return pyValue{}
}

// call checks a call of a bare name.
func (c *pyChecker) call(x *sitter.Node, env map[string]pyValue) {
	f := x.ChildByFieldName("function")
	if f == nil || f.Type() != "identifier" || c.star {
		return
	}
	name := c.t.text(f)
	if _, ok := env[name]; ok || c.bound[name] || c.topNames[name] || c.std.Has("builtins", name) || isDunder(name) {
		return
	}
	c.problems = append(c.problems, fmt.Sprintf("line %d: `%s()` is called but defined nowhere (not in the answer, the joined files nor Python's builtins)", line(x), name))
}

// attribute checks a read of obj.attr where obj is known.
func (c *pyChecker) attribute(x *sitter.Node, env map[string]pyValue) {
	if p := x.Parent(); p != nil && (p.Type() == "assignment" || p.Type() == "augmented_assignment") &&
		p.ChildByFieldName("left") == x {
		return // a write
	}
	if p := x.Parent(); p != nil && (p.Type() == "pattern_list" || p.Type() == "tuple_pattern") {
		return
	}
	attr := c.t.text(x.ChildByFieldName("attribute"))
	if isDunder(attr) {
		return
	}
	objNode := x.ChildByFieldName("object")
	obj := c.resolve(objNode, env)
	ln := line(x)
	switch {
	case obj.stdMod != "":
		if !c.std.Has(obj.stdMod, attr) && !c.std.HasModule(obj.stdMod+"."+attr) {
			c.problems = append(c.problems, fmt.Sprintf("line %d: `%s.%s` does not exist: the standard module %s has no `%s`", ln, c.t.text(objNode), attr, obj.stdMod, attr))
		}
	case obj.joined != nil:
		if !obj.joined.names[attr] && !obj.joined.star && !c.isSubmodule(obj.joined, attr) {
			c.problems = append(c.problems, fmt.Sprintf("line %d: `%s.%s` does not exist: %s defines no `%s`", ln, c.t.text(objNode), attr, obj.joined.path, attr))
		}
	case obj.class != nil || obj.instance != nil:
		cl := obj.class
		if cl == nil {
			cl = obj.instance
		}
		if has, ok := c.hasMember(cl, attr, 0); ok && !has {
			c.problems = append(c.problems, fmt.Sprintf("line %d: `%s.%s` does not exist: class %s (%s) has no attribute or method `%s`", ln, c.t.text(objNode), attr, cl.name, cl.where, attr))
		}
	}
}

func isDunder(s string) bool {
	return len(s) > 4 && strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__")
}

// dedentCode removes the indentation common to every non-blank line, so
// that a method sent alone parses as a top-level function.
func dedentCode(code string) string {
	lines := strings.Split(code, "\n")
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	if common <= 0 {
		return code
	}
	for i, l := range lines {
		if len(l) >= common {
			lines[i] = l[common:]
		} else {
			lines[i] = strings.TrimLeft(l, " \t")
		}
	}
	return strings.Join(lines, "\n")
}
