package controls

import (
	"context"
	"encoding/json"
	"path"
	"regexp"
	"strings"
)

// manifestNames are the dependency manifests symboles reads, by base name.
var manifestNames = []string{"requirements.txt", "pyproject.toml", "go.mod", "package.json"}

// ManifestPaths lists where a project declares its dependencies for a
// request writing sortie: each manifest name at the project root and in
// every directory above sortie.
func ManifestPaths(sortie string) []string {
	var out []string
	dir := path.Dir(path.Clean("/" + stripRange(sortie)))
	for {
		for _, m := range manifestNames {
			out = append(out, strings.TrimPrefix(path.Join(dir, m), "/"))
		}
		if dir == "/" || dir == "." {
			return out
		}
		dir = path.Dir(dir)
	}
}

// LoadManifests reads the manifests of ManifestPaths(sortie) one by one
// with load, keeping those that exist: the value for Input.Manifests. A
// manifest that cannot be read is left out.
func LoadManifests(ctx context.Context, load Loader, project, sortie string) map[string][]byte {
	out := map[string][]byte{}
	for _, p := range ManifestPaths(sortie) {
		if m, err := load(ctx, project, []string{p}); err == nil {
			if b, ok := m[p]; ok {
				out[p] = b
			}
		}
	}
	return out
}

// deps is what a project declares: for each ecosystem, whether a manifest
// was seen and the names it declares.
type deps struct {
	python, goMod, node bool
	// pyNames are Python distribution and import names, normalised
	// (pyNorm).
	pyNames map[string]bool
	// goModule is go.mod's module path; goRequires the required modules.
	goModule   string
	goRequires []string
	// nodeNames are package.json's dependencies of every kind.
	nodeNames map[string]bool
	// sources names the manifests read, for messages ("requirements.txt").
	pySource, nodeSource string
}

// readDeps gathers the declarations of the manifests among files (by base
// name; files may hold joined files too).
func readDeps(files ...map[string][]byte) deps {
	d := deps{pyNames: map[string]bool{}, nodeNames: map[string]bool{}}
	for _, fs := range files {
		for p, b := range fs {
			switch path.Base(p) {
			case "requirements.txt":
				d.python = true
				d.pySource = p
				for _, n := range parseRequirements(string(b)) {
					d.addPython(n)
				}
			case "pyproject.toml":
				d.python = true
				if d.pySource == "" {
					d.pySource = p
				}
				names, own := parsePyproject(string(b))
				for _, n := range names {
					d.addPython(n)
				}
				if own != "" {
					d.addPython(own)
				}
			case "go.mod":
				d.goMod = true
				mod, reqs := parseGoMod(string(b))
				if mod != "" {
					d.goModule = mod
				}
				d.goRequires = append(d.goRequires, reqs...)
			case "package.json":
				names, ok := parsePackageJSON(b)
				if ok {
					d.node = true
					d.nodeSource = p
					for _, n := range names {
						d.nodeNames[n] = true
					}
				}
			}
		}
	}
	return d
}

// pyAliases maps distribution names to the module names they install when
// these differ.
var pyAliases = map[string][]string{
	"pyyaml": {"yaml"}, "beautifulsoup4": {"bs4"}, "scikit_learn": {"sklearn"},
	"pillow": {"pil"}, "python_dateutil": {"dateutil"}, "opencv_python": {"cv2"},
	"opencv_python_headless": {"cv2"}, "attrs": {"attr", "attrs"}, "protobuf": {"google"},
	"python_dotenv": {"dotenv"}, "pyjwt": {"jwt"}, "psycopg2_binary": {"psycopg2"},
	"psycopg": {"psycopg"}, "msgpack_python": {"msgpack"}, "pymupdf": {"fitz"},
	"google_cloud_storage": {"google"}, "google_api_python_client": {"googleapiclient"},
	"scikit_image": {"skimage"}, "pyserial": {"serial"}, "pycryptodome": {"crypto"},
	"python_multipart": {"multipart"}, "pytest_asyncio": {"pytest_asyncio"},
	"typing_extensions": {"typing_extensions"}, "setuptools": {"setuptools", "pkg_resources"},
}

// addPython records a distribution and the module names it installs.
func (d *deps) addPython(dist string) {
	n := pyNorm(dist)
	if n == "" {
		return
	}
	d.pyNames[n] = true
	for _, a := range pyAliases[n] {
		d.pyNames[a] = true
	}
	if rest, ok := strings.CutPrefix(n, "python_"); ok {
		d.pyNames[rest] = true
	}
	if rest, ok := strings.CutPrefix(n, "py"); ok && rest != "" {
		d.pyNames[rest] = true
	}
	for _, suf := range []string{"_binary", "_python", "_py"} {
		if rest, ok := strings.CutSuffix(n, suf); ok && rest != "" {
			d.pyNames[rest] = true
		}
	}
}

// pyNorm normalises a distribution or module name (PEP 503, with _ for -).
func pyNorm(s string) string {
	return strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
}

// pyRequirement is the name at the start of a PEP 508 requirement.
var pyRequirement = regexp.MustCompile(`^\s*([A-Za-z0-9][A-Za-z0-9._-]*)`)

// parseRequirements lists the distributions of a requirements.txt: one per
// line, comments and options (-r, -c, --index-url) skipped, `-e …#egg=name`
// read for its name.
func parseRequirements(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.HasPrefix(line, "-") {
			if _, egg, ok := strings.Cut(line, "#egg="); ok {
				if m := pyRequirement.FindStringSubmatch(egg); m != nil {
					out = append(out, m[1])
				}
			}
			continue
		}
		if m := pyRequirement.FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// parsePyproject reads the dependencies a pyproject.toml declares —
// [project] dependencies and optional-dependencies, [dependency-groups],
// Poetry's [tool.poetry.*dependencies] tables — and the project's own name.
// It is a line reader for these few shapes, not a TOML parser.
func parsePyproject(text string) (names []string, own string) {
	table := ""
	inArray := false
	addStrings := func(s string) {
		for _, q := range quoted(s) {
			if m := pyRequirement.FindStringSubmatch(q); m != nil {
				names = append(names, m[1])
			}
		}
	}
	for raw := range strings.Lines(text) {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		if inArray {
			addStrings(line)
			if strings.Contains(line, "]") {
				inArray = false
			}
			continue
		}
		if strings.HasPrefix(line, "[") {
			table = strings.Trim(line, "[] ")
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key = strings.Trim(strings.TrimSpace(key), `"'`)
		value = strings.TrimSpace(value)
		arrayValue := strings.HasPrefix(value, "[")
		switch {
		case table == "project" && key == "name":
			if q := quoted(value); len(q) > 0 {
				own = q[0]
			}
		case table == "project" && key == "dependencies",
			table == "project.optional-dependencies" && arrayValue,
			table == "dependency-groups" && arrayValue:
			addStrings(value)
			inArray = arrayValue && !strings.Contains(value, "]")
		case strings.HasPrefix(table, "tool.poetry") && strings.HasSuffix(table, "dependencies"):
			if key != "python" {
				names = append(names, key)
			}
		case table == "tool.poetry" && key == "name":
			if q := quoted(value); len(q) > 0 {
				own = q[0]
			}
		}
	}
	return names, own
}

// quoted lists the "…" and '…' strings of s, without escapes.
func quoted(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		q := s[i]
		if q != '"' && q != '\'' {
			continue
		}
		j := strings.IndexByte(s[i+1:], q)
		if j < 0 {
			break
		}
		out = append(out, s[i+1:i+1+j])
		i += j + 1
	}
	return out
}

// parseGoMod reads go.mod's module path and required module paths.
func parseGoMod(text string) (module string, requires []string) {
	inBlock := false
	for raw := range strings.Lines(text) {
		line := raw
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case inBlock && f[0] == ")":
			inBlock = false
		case inBlock:
			requires = append(requires, strings.Trim(f[0], `"`))
		case f[0] == "module" && len(f) > 1:
			module = strings.Trim(f[1], `"`)
		case f[0] == "require" && len(f) > 1 && f[1] == "(":
			inBlock = true
		case f[0] == "require" && len(f) > 1:
			requires = append(requires, strings.Trim(f[1], `"`))
		}
	}
	return module, requires
}

// parsePackageJSON lists package.json's name and dependencies of every
// kind; ok is false when it is no JSON object.
func parsePackageJSON(b []byte) (names []string, ok bool) {
	var pkg struct {
		Name                 string         `json:"name"`
		Dependencies         map[string]any `json:"dependencies"`
		DevDependencies      map[string]any `json:"devDependencies"`
		PeerDependencies     map[string]any `json:"peerDependencies"`
		OptionalDependencies map[string]any `json:"optionalDependencies"`
		Imports              map[string]any `json:"imports"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		return nil, false
	}
	if pkg.Name != "" {
		names = append(names, pkg.Name)
	}
	for _, m := range []map[string]any{pkg.Dependencies, pkg.DevDependencies, pkg.PeerDependencies, pkg.OptionalDependencies, pkg.Imports} {
		for n := range m {
			names = append(names, n)
		}
	}
	return names, true
}

// nodePackage is the package part of a bare import specifier:
// "lodash/fp" → "lodash", "@scope/pkg/sub" → "@scope/pkg".
func nodePackage(spec string) string {
	parts := strings.Split(spec, "/")
	if strings.HasPrefix(spec, "@") && len(parts) > 1 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// goRequired reports whether import path p belongs to the module or one of
// its requirements.
func (d deps) goRequired(p string) bool {
	under := func(mod string) bool { return mod != "" && (p == mod || strings.HasPrefix(p, mod+"/")) }
	if under(d.goModule) {
		return true
	}
	for _, r := range d.goRequires {
		if under(r) {
			return true
		}
	}
	return false
}
