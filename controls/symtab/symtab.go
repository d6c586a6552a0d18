// Package symtab holds compact symbol tables of the Python and Go standard
// libraries, for the symboles control: which modules or packages exist and
// which public names each one has. The tables are text files generated from
// the local toolchains by the program in gen/ (`go generate`), one line per
// module: its dotted name or import path, a tab, its names separated by
// spaces.
package symtab

import (
	"embed"
	"strings"
	"sync"
)

//go:generate go run ./gen

//go:embed python.txt go.txt
var files embed.FS

// Table is one language's standard library. It is read-only once loaded.
type Table struct {
	mods map[string]map[string]bool
}

// HasModule reports whether the standard library has the module (Python,
// dotted: "os.path") or package (Go, import path: "net/http").
func (t *Table) HasModule(mod string) bool {
	_, ok := t.mods[mod]
	return ok
}

// Has reports whether module mod has the public name: a function, class,
// constant, variable or submodule.
func (t *Table) Has(mod, name string) bool {
	return t.mods[mod][name]
}

// Python returns the table of the Python standard library; module
// "builtins" holds the builtin functions, types and exceptions.
var Python = sync.OnceValue(func() *Table { return load("python.txt") })

// Go returns the table of the Go standard library: every package that is
// not internal, vendored or a command, with its exported package-level
// names.
var Go = sync.OnceValue(func() *Table { return load("go.txt") })

// load parses an embedded table; a line that is not "module<TAB>names" is
// skipped, as are comments.
func load(name string) *Table {
	data, err := files.ReadFile(name)
	if err != nil {
		panic("symtab: " + err.Error()) // embedded: cannot happen
	}
	t := &Table{mods: map[string]map[string]bool{}}
	for line := range strings.Lines(string(data)) {
		mod, names, ok := strings.Cut(strings.TrimRight(line, "\n"), "\t")
		if !ok || strings.HasPrefix(mod, "#") {
			continue
		}
		set := make(map[string]bool, strings.Count(names, " ")+1)
		for _, n := range strings.Fields(names) {
			set[n] = true
		}
		t.mods[mod] = set
	}
	return t
}
