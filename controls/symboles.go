package controls

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"miam/budgets"
	"miam/delegate/wire"
)

// Symboles is the `symboles` control (SPEC §4), on code: every name the
// answer imports, calls or reads as an attribute of a module or class it
// can see must exist — in the answer itself, the joined files, the
// language's builtins and standard library (package symtab, generated from
// the local toolchains), or the project's declared dependencies
// (Input.Manifests or joined manifests: requirements.txt, pyproject.toml,
// go.mod, package.json). Each invented name is reported with where it was
// expected to live.
//
// Python: imports, bare calls, attributes of standard modules, of joined
// modules and of the classes of the answer and the joined files (through
// `self`, `cls`, `x = C(…)` and parameters annotated `C`), a class with a
// base the control cannot see or a __getattr__ being left alone. Go:
// imports, and the exported names read from standard packages (methods and
// fields are the lint control's, through go vet). JavaScript and
// TypeScript: imports of joined modules (named and namespace), bare
// package imports against Node's builtins and package.json. A third-party
// import is only judged when a manifest of its ecosystem is known. Other
// languages pass with a message saying they were skipped.
type Symboles struct{}

// Name returns "symboles".
func (Symboles) Name() string { return NameSymboles }

// Cost returns CostPure.
func (Symboles) Cost() Cost { return CostPure }

// maxSymbolProblems bounds the names one message lists.
const maxSymbolProblems = 6

// Check runs the control.
func (Symboles) Check(_ context.Context, in Input) wire.Control {
	if in.Kind() != KindCode {
		return wire.Control{Nom: NameSymboles, OK: true, Message: "not code: skipped"}
	}
	if strings.TrimSpace(in.Code) == "" {
		return wire.Control{Nom: NameSymboles, OK: true, Message: "no code: skipped"}
	}
	var (
		problems []string
		checked  bool
	)
	d := readDeps(in.Manifests, in.Files)
	switch in.Lang {
	case budgets.LangPython:
		problems, checked = pythonSymbols(in, d)
	case budgets.LangGo:
		problems, checked = goSymbols(in, d)
	case budgets.LangJavaScript, budgets.LangTypeScript, budgets.LangTSX:
		problems, checked = jsSymbols(in, d)
	default:
		return wire.Control{Nom: NameSymboles, OK: true, Message: "symbols are checked in Python, Go, JavaScript and TypeScript only: skipped"}
	}
	if !checked {
		return wire.Control{Nom: NameSymboles, OK: true, Message: "could not parse the code: skipped"}
	}
	return result(NameSymboles, limitProblems(problems))
}

// limitProblems keeps the first problems once each and says how many more
// there were.
func limitProblems(ps []string) []string {
	var out []string
	for _, p := range ps {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) > maxSymbolProblems {
		n := len(out) - maxSymbolProblems
		out = append(out[:maxSymbolProblems], fmt.Sprintf("and %d more", n))
	}
	return out
}

// joinedOf lists the joined files of a language, by path, sorted.
func joinedOf(in Input, langs ...budgets.Lang) []string {
	var out []string
	for p := range in.Files {
		if slices.Contains(langs, budgets.LangOf(p)) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// sortieDir is the directory of the answer's file, "." when unknown.
func sortieDir(in Input) string {
	if s := stripRange(in.Request.Sortie); s != "" {
		return path.Dir(s)
	}
	if s := stripRange(in.Request.Modele); s != "" {
		return path.Dir(s)
	}
	for _, f := range in.Request.Fichiers {
		return path.Dir(stripRange(f))
	}
	return "."
}

// declaredIn names the manifest a dependency was looked for in.
func declaredIn(source, fallback string) string {
	if source == "" {
		return fallback
	}
	return source
}
