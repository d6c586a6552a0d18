package controls

import (
	"fmt"
	"path"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"

	"miam/budgets"
)

// nodeBuiltins are Node's builtin modules, importable without "node:".
var nodeBuiltins = func() map[string]bool {
	m := map[string]bool{}
	for _, name := range strings.Fields(`assert async_hooks buffer child_process cluster console constants crypto
		dgram diagnostics_channel dns domain events fs http http2 https inspector module net os path
		perf_hooks process punycode querystring readline repl stream string_decoder sys test timers tls
		trace_events tty url util v8 vm wasi worker_threads zlib`) {
		m[name] = true
	}
	return m
}()

// jsExports is what a joined JavaScript or TypeScript module exports.
type jsExports struct {
	path  string
	names map[string]bool
	open  bool // export * or no recognisable exports: not judged
}

// jsExportsOf reads a module's ES and CommonJS exports.
func jsExportsOf(lang budgets.Lang, p string, src []byte) jsExports {
	e := jsExports{path: p, names: map[string]bool{}}
	t := parseTree(lang, src)
	if t == nil {
		e.open = true
		return e
	}
	defer t.Close()
	walk(t.root(), func(n *sitter.Node) bool {
		switch n.Type() {
		case "export_statement":
			text := t.text(n)
			if strings.HasPrefix(text, "export *") {
				e.open = true
			}
			if strings.HasPrefix(text, "export default") {
				e.names["default"] = true
			}
			if d := n.ChildByFieldName("declaration"); d != nil {
				if name := d.ChildByFieldName("name"); name != nil {
					e.names[t.text(name)] = true
				}
				walk(d, func(k *sitter.Node) bool {
					if k.Type() == "variable_declarator" {
						e.names[t.text(k.ChildByFieldName("name"))] = true
						return false
					}
					return k == d || k.Type() == "lexical_declaration" || k.Type() == "variable_declaration"
				})
			}
			walk(n, func(k *sitter.Node) bool {
				if k.Type() == "export_specifier" {
					name := k.ChildByFieldName("alias")
					if name == nil {
						name = k.ChildByFieldName("name")
					}
					e.names[t.text(name)] = true
				}
				return true
			})
			return false
		case "assignment_expression":
			left := t.text(n.ChildByFieldName("left"))
			switch {
			case left == "module.exports":
				e.names["default"] = true
				right := n.ChildByFieldName("right")
				if right != nil && right.Type() == "object" {
					for _, k := range namedChildren(right) {
						switch k.Type() {
						case "shorthand_property_identifier":
							e.names[t.text(k)] = true
						case "pair", "method_definition":
							e.names[strings.Trim(t.text(k.ChildByFieldName("key")), `"'`)] = true
							e.names[strings.Trim(t.text(k.ChildByFieldName("name")), `"'`)] = true
						default:
							e.open = true
						}
					}
				} else {
					e.open = true
				}
			case strings.HasPrefix(left, "module.exports."), strings.HasPrefix(left, "exports."):
				e.names[left[strings.LastIndexByte(left, '.')+1:]] = true
			}
		}
		return true
	})
	if len(e.names) == 0 {
		e.open = true
	}
	return e
}

// jsSymbols checks a JavaScript or TypeScript answer's imports.
func jsSymbols(in Input, d deps) (problems []string, checked bool) {
	t := parseTree(in.Lang, []byte(in.Code))
	if t == nil {
		return nil, false
	}
	defer t.Close()
	joined := map[string]string{} // path without extension → path
	for _, p := range joinedOf(in, budgets.LangJavaScript, budgets.LangTypeScript, budgets.LangTSX) {
		base := strings.TrimSuffix(p, path.Ext(p))
		joined[base] = p
		if path.Base(base) == "index" {
			joined[path.Dir(base)] = p
		}
	}
	dir := sortieDir(in)
	resolve := func(spec string) (jsExports, bool) {
		target := path.Join(dir, spec)
		target = strings.TrimSuffix(target, path.Ext(target))
		p, ok := joined[target]
		if !ok {
			return jsExports{}, false
		}
		return jsExportsOf(budgets.LangOf(p), p, in.Files[p]), true
	}
	namespaces := map[string]jsExports{}
	check := func(n *sitter.Node, spec string, names []string) {
		switch {
		case strings.HasPrefix(spec, "."):
			e, ok := resolve(spec)
			if !ok || e.open {
				return
			}
			for _, name := range names {
				if !e.names[name] {
					problems = append(problems, fmt.Sprintf("line %d: `%s` is not exported by %s: import a name it exports", line(n), name, e.path))
				}
			}
		case strings.HasPrefix(spec, "node:"), nodeBuiltins[strings.Split(spec, "/")[0]], strings.HasPrefix(spec, "#"):
		case d.node && !d.nodeNames[nodePackage(spec)] && !d.nodeNames["@types/"+nodePackage(spec)]:
			problems = append(problems, fmt.Sprintf("line %d: package `%s` is not declared in %s: use a declared dependency", line(n), nodePackage(spec), declaredIn(d.nodeSource, "package.json")))
		}
	}
	walk(t.root(), func(n *sitter.Node) bool {
		switch n.Type() {
		case "import_statement":
			spec := strings.Trim(t.text(n.ChildByFieldName("source")), "\"'`")
			var names []string
			walk(n, func(k *sitter.Node) bool {
				switch k.Type() {
				case "import_specifier":
					names = append(names, t.text(k.ChildByFieldName("name")))
				case "namespace_import":
					for _, id := range namedChildren(k) {
						if e, ok := resolve(spec); ok && strings.HasPrefix(spec, ".") {
							namespaces[t.text(id)] = e
						}
					}
				case "import_clause":
					for _, id := range namedChildren(k) {
						if id.Type() == "identifier" {
							names = append(names, "default")
						}
					}
				}
				return true
			})
			check(n, spec, names)
			return false
		case "call_expression":
			if t.text(n.ChildByFieldName("function")) != "require" {
				return true
			}
			args := namedChildren(n.ChildByFieldName("arguments"))
			if len(args) != 1 || args[0].Type() != "string" {
				return true
			}
			spec := strings.Trim(t.text(args[0]), "\"'`")
			var names []string
			if p := n.Parent(); p != nil && p.Type() == "variable_declarator" {
				if pat := p.ChildByFieldName("name"); pat != nil && pat.Type() == "object_pattern" {
					for _, k := range namedChildren(pat) {
						switch k.Type() {
						case "shorthand_property_identifier_pattern":
							names = append(names, t.text(k))
						case "pair_pattern":
							names = append(names, t.text(k.ChildByFieldName("key")))
						}
					}
				}
			}
			check(n, spec, names)
		case "member_expression":
			obj := n.ChildByFieldName("object")
			if obj == nil || obj.Type() != "identifier" {
				return true
			}
			if e, ok := namespaces[t.text(obj)]; ok && !e.open {
				if prop := t.text(n.ChildByFieldName("property")); !e.names[prop] {
					problems = append(problems, fmt.Sprintf("line %d: `%s.%s` does not exist: %s exports no `%s`", line(n), t.text(obj), prop, e.path, prop))
				}
			}
		}
		return true
	})
	return problems, true
}
