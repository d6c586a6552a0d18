package controls

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseManifests(t *testing.T) {
	tests := []struct {
		name string
		got  func() any
		want any
	}{
		{"requirements", func() any {
			return parseRequirements("# deps\nrequests>=2 ; python_version>'3'\n-r dev.txt\n-e git+https://x/y.git#egg=mylib\nPyYAML==6.0  # yaml\n\n")
		}, []string{"requests", "mylib", "PyYAML"}},
		{"pyproject", func() any {
			names, own := parsePyproject("[project]\nname = \"app\"\ndependencies = [\n  \"httpx>=0.27\",\n  'rich',\n]\n[project.optional-dependencies]\ndev = [\"pytest\"]\n[tool.poetry.dependencies]\npython = \"^3.11\"\nclick = \"*\"\n")
			return []any{names, own}
		}, []any{[]string{"httpx", "rich", "pytest", "click"}, "app"}},
		{"go.mod", func() any {
			mod, reqs := parseGoMod("module example.com/x // the module\n\ngo 1.24\n\nrequire golang.org/x/text v0.3.0\nrequire (\n\tgithub.com/a/b v1.0.0 // indirect\n)\n")
			return []any{mod, reqs}
		}, []any{"example.com/x", []string{"golang.org/x/text", "github.com/a/b"}}},
		{"package.json", func() any {
			names, ok := parsePackageJSON([]byte(`{"name":"ui","dependencies":{"react":"^18"}}`))
			return []any{names, ok}
		}, []any{[]string{"ui", "react"}, true}},
		{"nodePackage scoped", func() any { return nodePackage("@scope/pkg/sub") }, "@scope/pkg"},
		{"manifest paths", func() any { return ManifestPaths("a/b.py")[:5] }, []string{"a/requirements.txt", "a/pyproject.toml", "a/go.mod", "a/package.json", "requirements.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadDepsAliases(t *testing.T) {
	d := readDeps(map[string][]byte{"requirements.txt": []byte("PyYAML\nbeautifulsoup4\npython-dateutil\n")})
	for _, m := range []string{"yaml", "bs4", "dateutil"} {
		if !d.pyNames[m] {
			t.Errorf("%s not declared by its distribution", m)
		}
	}
}

// FuzzManifests: the manifest decoders never panic on any input.
func FuzzManifests(f *testing.F) {
	for _, s := range []string{"requests\n", "[project]\ndependencies = [\"a\",\n", "module x\nrequire (\n", `{"dependencies":{"a":"1"}}`, "-e #egg=", "'", "\"unterminated"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parseRequirements(s)
		parsePyproject(s)
		parseGoMod(s)
		parsePackageJSON([]byte(s))
		readDeps(map[string][]byte{"requirements.txt": []byte(s), "pyproject.toml": []byte(s), "go.mod": []byte(s), "package.json": []byte(s)})
	})
}
