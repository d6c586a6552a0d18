// Package miam_test checks the repository's shape: every package documents
// its one job, and imports point one way (STYLE.md, "Import arrows").
package miam_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

type goPackage struct {
	ImportPath string
	Doc        string
	GoFiles    []string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) []goPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestEveryPackageHasADocComment(t *testing.T) {
	for _, p := range listPackages(t) {
		if len(p.GoFiles) > 0 && strings.TrimSpace(p.Doc) == "" {
			t.Errorf("package %s has no package doc comment stating its job", p.ImportPath)
		}
	}
}

// allowed lists, for each of our packages, the packages of ours it may
// import (directly or not). Packages not listed may import anything of ours
// that does not make a cycle; cmd/... is the top.
var allowed = map[string][]string{
	"miam/budgets":        {},
	"miam/plans":          {},
	"miam/sandbox":        {},
	"miam/delegate/wire":  {},
	"miam/hooks/config":   {},
	"miam/hooks/trace":    {},
	"miam/hooks/policies": {"miam/budgets", "miam/hooks/config"},
	"miam/hooks":          {"miam/budgets", "miam/plans", "miam/delegate/wire", "miam/hooks/config", "miam/hooks/policies", "miam/hooks/trace"},
	"miam/controls":       {"miam/sandbox", "miam/delegate/wire", "miam/budgets"},
	"miam/delegate":       {"miam/controls", "miam/sandbox", "miam/delegate/wire", "miam/budgets"},
}

func TestImportArrowsPointOneWay(t *testing.T) {
	for _, p := range listPackages(t) {
		ok, listed := allowed[p.ImportPath]
		if !listed {
			continue
		}
		set := map[string]bool{}
		for _, a := range ok {
			set[a] = true
		}
		for _, d := range p.Deps {
			if (d == "miam" || strings.HasPrefix(d, "miam/")) && !set[d] && !strings.HasPrefix(d, p.ImportPath+"/") {
				t.Errorf("%s imports %s: arrows go cmd → hooks → {budgets, plans}, cmd → delegate → controls → sandbox", p.ImportPath, d)
			}
		}
	}
}

func TestFixturesImportedOnlyByTests(t *testing.T) {
	for _, p := range listPackages(t) {
		if strings.HasPrefix(p.ImportPath, "miam/fixtures") {
			continue // the fakes share their own helpers (fakestream)
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "miam/fixtures") {
				t.Errorf("%s imports %s outside tests", p.ImportPath, imp)
			}
		}
	}
}
