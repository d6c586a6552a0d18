package controls

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"miam/budgets"
	"miam/controls/symtab"
	"miam/delegate/wire"
)

// Lint is the `lint` control (SPEC §4), on code, the one tool-tier control
// of this package: it runs the project's linter on a copy of the answer in
// a temporary directory, never on the project.
//
//   - Python: `ruff check --select F,E9` where ruff is installed, else
//     pyflakes (pyflakes or pyflakes3): unused imports, undefined names,
//     syntax errors, wrong format strings… An undefined name that a joined
//     file defines is not held against the answer (it is a part of that
//     file).
//   - Go: `go vet` on the staged package — the answer, with the joined Go
//     files of its directory and a go.mod — offline (GOPROXY=off,
//     GOTOOLCHAIN=local); an answer importing packages outside the
//     standard library, which the stage cannot hold, is skipped. A plain
//     `undefined: name` is not judged: the package's other files may not
//     be joined.
//   - JavaScript, TypeScript: eslint, when the project (Input.Dir)
//     configures it, on the answer given on stdin as if it were sortie, so
//     that the project's configuration applies; errors fail, warnings do
//     not.
//
// A linter that is not installed, or a language without one, is skipped
// and said, never failed.
type Lint struct {
	// LookPath finds a linter's executable; nil means exec.LookPath.
	LookPath func(file string) (string, error)
	// Timeout bounds one linter run; 0 means 30 s.
	Timeout time.Duration
}

// Name returns "lint".
func (Lint) Name() string { return NameLint }

// Cost returns CostTool.
func (Lint) Cost() Cost { return CostTool }

// maxLintIssues bounds the issues one message lists.
const maxLintIssues = 5

// Check runs the control.
func (l Lint) Check(ctx context.Context, in Input) wire.Control {
	if in.Kind() != KindCode {
		return wire.Control{Nom: NameLint, OK: true, Message: "not code: skipped"}
	}
	if strings.TrimSpace(in.Code) == "" {
		return wire.Control{Nom: NameLint, OK: true, Message: "no code: skipped"}
	}
	timeout := l.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var (
		tool   string
		issues []string
		skip   string
	)
	switch in.Lang {
	case budgets.LangPython:
		tool, issues, skip = l.python(ctx, in)
	case budgets.LangGo:
		tool, issues, skip = l.golang(ctx, in)
	case budgets.LangJavaScript, budgets.LangTypeScript, budgets.LangTSX:
		tool, issues, skip = l.eslint(ctx, in)
	default:
		skip = "no linter for this language"
	}
	if skip != "" {
		return wire.Control{Nom: NameLint, OK: true, Message: skip + ": skipped"}
	}
	if len(issues) == 0 {
		return wire.Control{Nom: NameLint, OK: true, Message: tool + ": clean"}
	}
	more := ""
	if len(issues) > maxLintIssues {
		more = fmt.Sprintf("; and %d more", len(issues)-maxLintIssues)
		issues = issues[:maxLintIssues]
	}
	return result(NameLint, []string{tool + ": " + strings.Join(issues, "; ") + more})
}

func (l Lint) lookPath(file string) (string, bool) {
	look := l.LookPath
	if look == nil {
		look = exec.LookPath
	}
	p, err := look(file)
	return p, err == nil && p != ""
}

// stage writes files (relative paths) into a new temporary directory and
// returns it with its remover.
func stage(files map[string]string) (dir string, remove func(), err error) {
	dir, err = os.MkdirTemp("", "miam-lint-*")
	if err != nil {
		return "", func() {}, err
	}
	remove = func() { os.RemoveAll(dir) }
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			remove()
			return "", func() {}, err
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			remove()
			return "", func() {}, err
		}
	}
	return dir, remove, nil
}

// run runs a linter and returns its output; exit codes are the parser's
// business, but a linter that cannot start or times out is an error.
func run(ctx context.Context, dir string, env []string, stdin string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s timed out", path.Base(name))
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return "", err
	}
	return out.String(), nil
}

// lintLine is "file:line:col: message" as pyflakes, ruff and go vet print.
var lintLine = regexp.MustCompile(`^(?:vet: )?(.*?\.(?:py|go)):(\d+):(\d+):?\s*(.*)$`)

// undefinedName digs the name out of pyflakes' and ruff's messages.
var undefinedName = regexp.MustCompile("(?i)undefined name [`'\"]([A-Za-z_][A-Za-z0-9_]*)[`'\"]")

// python lints a Python answer with ruff or pyflakes.
func (l Lint) python(ctx context.Context, in Input) (tool string, issues []string, skip string) {
	name := "answer.py"
	if s := stripRange(in.Request.Sortie); s != "" {
		name = path.Base(s)
	}
	var args []string
	if p, ok := l.lookPath("ruff"); ok {
		tool = p
		args = []string{"check", "--isolated", "--no-cache", "--select", "F,E9", "--output-format", "concise", name}
	} else if p, ok := l.lookPath("pyflakes"); ok {
		tool, args = p, []string{name}
	} else if p, ok := l.lookPath("pyflakes3"); ok {
		tool, args = p, []string{name}
	} else {
		return "", nil, "neither ruff nor pyflakes is installed"
	}
	dir, remove, err := stage(map[string]string{name: dedentCode(in.Code)})
	if err != nil {
		return "", nil, "cannot stage the file (" + err.Error() + ")"
	}
	defer remove()
	out, err := run(ctx, dir, nil, "", tool, args...)
	label := strings.TrimSuffix(filepath.Base(tool), "3")
	if err != nil {
		return "", nil, label + " did not run (" + err.Error() + ")"
	}
	joined := joinedNames(in)
	for _, ln := range strings.Split(out, "\n") {
		m := lintLine.FindStringSubmatch(strings.TrimSpace(ln))
		if m == nil || filepath.Base(m[1]) != name {
			continue
		}
		msg := strings.TrimPrefix(m[4], "[*] ")
		if u := undefinedName.FindStringSubmatch(msg); u != nil && joined[u[1]] {
			continue
		}
		issues = append(issues, fmt.Sprintf("line %s: %s", m[2], msg))
	}
	return label, issues, ""
}

// joinedNames are the identifiers that the joined Python files define or
// import at their top level.
func joinedNames(in Input) map[string]bool {
	names := map[string]bool{}
	for _, p := range joinedOf(in, budgets.LangPython) {
		if t := parseTree(budgets.LangPython, in.Files[p]); t != nil {
			for n := range pyModuleOf(t, p).names {
				names[n] = true
			}
			t.Close()
		}
	}
	return names
}

// goVetUndefined matches the type checker's plain "undefined: name".
var goVetUndefined = regexp.MustCompile(`^undefined: [A-Za-z_][A-Za-z0-9_]*$`)

// golang vets a Go answer staged with its package's joined files.
func (l Lint) golang(ctx context.Context, in Input) (tool string, issues []string, skip string) {
	goBin, ok := l.lookPath("go")
	if !ok {
		return "", nil, "the go command is not installed"
	}
	code := in.Code
	pkg := goPackageName(code)
	std := symtab.Go()
	for _, imp := range goImportPaths([]byte(code)) {
		if !std.HasModule(imp) && imp != "C" {
			return "", nil, fmt.Sprintf("go vet cannot load %q offline", imp)
		}
	}
	sortie := stripRange(in.Request.Sortie)
	name := "answer.go"
	if sortie != "" {
		name = path.Base(sortie)
	}
	files := map[string]string{}
	for _, p := range joinedOf(in, budgets.LangGo) {
		if p == sortie || (sortie != "" && path.Dir(p) != path.Dir(sortie)) || path.Base(p) == name {
			continue
		}
		other := string(in.Files[p])
		if pkg != "" && goPackageName(other) != pkg {
			continue
		}
		if pkg == "" {
			pkg = goPackageName(other)
		}
		bad := false
		for _, imp := range goImportPaths(in.Files[p]) {
			bad = bad || !std.HasModule(imp)
		}
		if !bad {
			files[path.Base(p)] = other
		}
	}
	shift := 0 // lines added before the answer's
	if goPackageName(code) == "" {
		shift = 2
		if pkg == "" {
			pkg = "main"
		}
		code = "package " + pkg + "\n\n" + code
	}
	files[name] = code
	goVersion := "1.24"
	for p, b := range in.Manifests {
		if path.Base(p) == "go.mod" {
			if m := goDirective.FindSubmatch(b); m != nil {
				goVersion = string(m[1])
			}
		}
	}
	files["go.mod"] = "module staged\n\ngo " + goVersion + "\n"
	dir, remove, err := stage(files)
	if err != nil {
		return "", nil, "cannot stage the package (" + err.Error() + ")"
	}
	defer remove()
	// CGO_ENABLED=0: vet must never hand the model's #cgo directives to the
	// C toolchain; nothing of the answer runs outside the sandbox.
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local", "GOWORK=off", "GO111MODULE=on", "CGO_ENABLED=0")
	out, err := run(ctx, dir, env, "", goBin, "vet", ".")
	if err != nil {
		return "", nil, "go vet did not run (" + err.Error() + ")"
	}
	for _, ln := range strings.Split(out, "\n") {
		m := lintLine.FindStringSubmatch(strings.TrimSpace(ln))
		if m == nil {
			continue
		}
		if filepath.Base(m[1]) != name {
			continue // the joined files' problems are not the answer's
		}
		msg := m[4]
		if goVetUndefined.MatchString(msg) {
			continue
		}
		issues = append(issues, fmt.Sprintf("line %d: %s", atoiOr(m[2])-shift, msg))
	}
	return "go vet", issues, ""
}

func atoiOr(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// goPackageName is the package clause's name of a Go file, "" without one.
func goPackageName(code string) string {
	m := goPackageClause.FindStringSubmatch(code)
	if m == nil {
		return ""
	}
	return m[1]
}

var goDirective = regexp.MustCompile(`(?m)^go\s+(\d+\.\d+)`)

var goPackageClause = regexp.MustCompile(`(?m)^package\s+([A-Za-z_][A-Za-z0-9_]*)`)

// eslintConfigs are the files that configure eslint in a project.
var eslintConfigs = []string{"eslint.config.js", "eslint.config.mjs", "eslint.config.cjs", "eslint.config.ts",
	".eslintrc", ".eslintrc.js", ".eslintrc.cjs", ".eslintrc.json", ".eslintrc.yml", ".eslintrc.yaml"}

// eslint lints a JavaScript or TypeScript answer with the project's eslint.
func (l Lint) eslint(ctx context.Context, in Input) (tool string, issues []string, skip string) {
	if in.Dir == "" {
		return "", nil, "the project's directory is unknown, so is its eslint configuration"
	}
	configured := false
	for _, c := range eslintConfigs {
		if _, err := os.Stat(filepath.Join(in.Dir, c)); err == nil {
			configured = true
		}
	}
	if b, err := os.ReadFile(filepath.Join(in.Dir, "package.json")); err == nil && bytes.Contains(b, []byte(`"eslintConfig"`)) {
		configured = true
	}
	if !configured {
		return "", nil, "the project does not configure eslint"
	}
	bin := filepath.Join(in.Dir, "node_modules", ".bin", "eslint")
	if _, err := os.Stat(bin); err != nil {
		p, ok := l.lookPath("eslint")
		if !ok {
			return "", nil, "eslint is not installed"
		}
		bin = p
	}
	sortie := stripRange(in.Request.Sortie)
	if sortie == "" {
		sortie = "answer" + map[budgets.Lang]string{budgets.LangTypeScript: ".ts", budgets.LangTSX: ".tsx"}[in.Lang]
		if in.Lang == budgets.LangJavaScript {
			sortie = "answer.js"
		}
	}
	out, err := run(ctx, in.Dir, nil, in.Code, bin, "--stdin", "--stdin-filename", filepath.Join(in.Dir, filepath.FromSlash(sortie)), "--format", "json")
	if err != nil {
		return "", nil, "eslint did not run (" + err.Error() + ")"
	}
	var reports []struct {
		Messages []struct {
			Line     int    `json:"line"`
			Column   int    `json:"column"`
			Message  string `json:"message"`
			RuleID   string `json:"ruleId"`
			Severity int    `json:"severity"`
		} `json:"messages"`
	}
	start := strings.IndexByte(out, '[')
	if start < 0 || json.Unmarshal([]byte(out[start:]), &reports) != nil {
		return "", nil, "eslint's output could not be read (" + short(strings.TrimSpace(out)) + ")"
	}
	for _, r := range reports {
		for _, m := range r.Messages {
			if m.Severity < 2 {
				continue
			}
			rule := ""
			if m.RuleID != "" {
				rule = " (" + m.RuleID + ")"
			}
			issues = append(issues, fmt.Sprintf("line %d: %s%s", m.Line, m.Message, rule))
		}
	}
	return "eslint", issues, ""
}
