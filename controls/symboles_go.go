package controls

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"

	"miam/budgets"
	"miam/controls/symtab"
)

// goImportName is the name an import path binds by default: its last
// element, less a major version ("math/rand/v2" → rand, "gopkg.in/yaml.v3"
// → yaml).
func goImportName(p string) string {
	parts := strings.Split(p, "/")
	last := parts[len(parts)-1]
	if goMajor.MatchString(last) && len(parts) > 1 {
		last = parts[len(parts)-2]
	}
	if i := strings.Index(last, ".v"); i > 0 {
		last = last[:i]
	}
	return strings.ReplaceAll(last, "-", "_")
}

var goMajor = regexp.MustCompile(`^v[0-9]+$`)

// goSymbols checks a Go answer's imports and the exported names it reads
// from standard packages.
func goSymbols(in Input, d deps) (problems []string, checked bool) {
	t := parseTree(budgets.LangGo, []byte(in.Code))
	if t == nil {
		return nil, false
	}
	defer t.Close()
	std := symtab.Go()
	// The module's root element, seen in joined files' imports when go.mod
	// is not known ("miam/budgets" → miam).
	ownRoots := map[string]bool{}
	if d.goModule != "" {
		ownRoots[strings.Split(d.goModule, "/")[0]] = true
	}
	for _, p := range joinedOf(in, budgets.LangGo) {
		for _, imp := range goImportPaths(in.Files[p]) {
			if !std.HasModule(imp) {
				ownRoots[strings.Split(imp, "/")[0]] = true
			}
		}
	}
	stdRoots := map[string]bool{}
	for _, p := range []string{"archive", "compress", "container", "crypto", "database", "debug", "embed", "encoding",
		"go", "hash", "html", "image", "index", "io", "log", "math", "mime", "net", "os", "path", "regexp",
		"runtime", "sort", "strconv", "strings", "sync", "syscall", "testing", "text", "time", "unicode", "iter", "maps", "slices"} {
		stdRoots[p] = true
	}
	pkgs := map[string]string{} // local name → standard import path
	walk(t.root(), func(n *sitter.Node) bool {
		if n.Type() != "import_spec" {
			return true
		}
		p, err := strconv.Unquote(t.text(n.ChildByFieldName("path")))
		if err != nil {
			return false
		}
		first := strings.Split(p, "/")[0]
		switch {
		case std.HasModule(p):
			name := goImportName(p)
			if alias := n.ChildByFieldName("name"); alias != nil {
				name = t.text(alias)
			}
			pkgs[name] = p
		case p == "C":
		case ownRoots[first] || d.goRequired(p):
		case !strings.Contains(first, "."):
			if stdRoots[first] || std.HasModule(first) {
				problems = append(problems, fmt.Sprintf("line %d: package %q is not in the standard library", line(n), p))
			}
		case d.goMod:
			problems = append(problems, fmt.Sprintf("line %d: package %q is in no module go.mod requires: use a required module or the standard library", line(n), p))
		}
		return false
	})
	// A local variable named like a package hides it.
	walk(t.root(), func(n *sitter.Node) bool {
		switch n.Type() {
		case "short_var_declaration", "var_spec", "parameter_declaration", "range_clause", "const_spec":
			left := n.ChildByFieldName("left")
			if left == nil {
				left = n.ChildByFieldName("name")
			}
			walk(left, func(k *sitter.Node) bool {
				if k.Type() == "identifier" {
					delete(pkgs, t.text(k))
				}
				return true
			})
		}
		return true
	})
	walk(t.root(), func(n *sitter.Node) bool {
		var pkg, name *sitter.Node
		switch n.Type() {
		case "selector_expression":
			pkg, name = n.ChildByFieldName("operand"), n.ChildByFieldName("field")
		case "qualified_type":
			pkg, name = n.ChildByFieldName("package"), n.ChildByFieldName("name")
		default:
			return true
		}
		if pkg == nil || name == nil || (pkg.Type() != "identifier" && pkg.Type() != "package_identifier") {
			return true
		}
		p, ok := pkgs[t.text(pkg)]
		if ok && !std.Has(p, t.text(name)) {
			problems = append(problems, fmt.Sprintf("line %d: `%s.%s` does not exist: package %s (standard library) has no exported `%s`", line(n), t.text(pkg), t.text(name), p, t.text(name)))
		}
		return true
	})
	return problems, true
}

// goImportPaths lists the import paths of a Go file.
func goImportPaths(src []byte) []string {
	t := parseTree(budgets.LangGo, src)
	if t == nil {
		return nil
	}
	defer t.Close()
	var out []string
	walk(t.root(), func(n *sitter.Node) bool {
		switch n.Type() {
		case "import_spec":
			if p, err := strconv.Unquote(t.text(n.ChildByFieldName("path"))); err == nil {
				out = append(out, p)
			}
			return false
		case "function_declaration", "method_declaration", "type_declaration":
			return false
		}
		return true
	})
	return out
}
