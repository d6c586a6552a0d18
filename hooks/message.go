package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"miam/budgets"
)

// DelegateCall is the ready-to-copy deleguer call a deny message carries,
// prefilled from the denied call.
type DelegateCall struct {
	Consigne string   `json:"consigne"`
	Type     string   `json:"type"`
	Fichiers []string `json:"fichiers,omitempty"`
	Sortie   string   `json:"sortie,omitempty"`
	Modele   string   `json:"modele,omitempty"`
	Attendus []string `json:"attendus,omitempty"`
}

// deleguerTool is the name Claude Code gives miam's tool when the server is
// registered under the name "miam" (SPEC §12).
const deleguerTool = "mcp__miam__deleguer"

// exceptionRoute is the same closing line for every delegation deny.
const exceptionRoute = "If this really must be written by hand (reasons: concurrence, securite, debogage-multi-fichiers, secret), " +
	"open an exception first: mcp__miam__exception {\"raison\": \"…\", \"fichiers\": [%q], \"lignes\": %d} or `miam exception RAISON --fichiers %s --lignes %d`."

func testsMessage(ev Event, c change, env Env) string {
	var b strings.Builder
	fmt.Fprintf(&b, "miam rule 1 (tests): tests are delegated, not written by hand. This %s adds %s to the test file %s; the limit is %d per call.\n",
		ev.Tool.Name, plural(c.added.Code, "code line", "code lines"), c.rel, env.Config.Budgets.TestsLinesOr())
	writeCall(&b, c, env, "tests")
	return b.String()
}

func budgetMessage(ev Event, c change, st budgets.State, env Env) string {
	var b strings.Builder
	total := st.SinceDelegation + c.added.Code
	fmt.Fprintf(&b, "miam rule 2 (write budget): %d code lines since your last delegation; budget %d. This %s of %s adds %d (you had written %d).\n",
		total, env.Config.Budgets.CodeLinesOr(), ev.Tool.Name, c.rel, c.added.Code, st.SinceDelegation)
	kind := "code"
	if c.test {
		kind = "tests"
	}
	writeCall(&b, c, env, kind)
	return b.String()
}

// writeCall appends the ready deleguer call, the wait instruction and the
// exception route.
func writeCall(b *strings.Builder, c change, env Env, kind string) {
	call := prefill(c, env, kind)
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false) // the model copies this text: keep < and > as typed
	_ = enc.Encode(call)
	fmt.Fprintf(b, "Delegate it instead — copy this call and complete the consigne:\n%s %s", deleguerTool, js.Bytes())
	b.WriteString("It answers at once; when it returns ok: null, run its `reprise` command once with run_in_background: true, then go on or end your turn. A successful delegation resets the budget.\n")
	b.WriteString(executorLine(env) + "\n")
	fmt.Fprintf(b, exceptionRoute, c.rel, c.added.Code, c.rel, c.added.Code)
}

// prefill builds the deleguer call from the denied call: the output file, a
// nearby range to imitate and the names the content defines.
func prefill(c change, env Env, kind string) DelegateCall {
	lang := c.lang
	defs := budgets.Definitions(lang, []byte(c.body))
	var names []string
	seen := map[string]bool{}
	for _, d := range defs {
		if kind == "tests" && !d.Test {
			continue
		}
		if d.Name == "" || seen[d.Name] {
			continue
		}
		seen[d.Name] = true
		names = append(names, d.Name)
	}
	what := "the code"
	switch kind {
	case "tests":
		what = "the tests"
	case "texte":
		what = "the documentation"
	case "docstrings":
		// The delegate writes them as code, checked by the docstrings control.
		what, kind = "the docstrings", "code"
	}
	consigne := fmt.Sprintf("Write %s in %s", what, c.rel)
	if len(names) > 0 {
		consigne += ": " + strings.Join(names, ", ")
	}
	if what == "the documentation" {
		consigne += ". <say what it must cover, for which reader>"
	} else {
		consigne += ". <say what each must do or check>"
	}
	return DelegateCall{
		Consigne: consigne,
		Type:     kind,
		Sortie:   c.rel,
		Modele:   modele(c, env, kind == "tests"),
		Attendus: names,
	}
}

// modele picks a range to imitate: the definition around the edit in the
// file on disk, else the first fitting definition of that file, else the
// first of a sibling file of the same kind.
func modele(c change, env Env, test bool) string {
	if c.before != nil {
		defs := budgets.Definitions(c.lang, c.before)
		if d, ok := nearest(defs, lineOf(c.before, c.anchor), test); ok {
			return fmt.Sprintf("%s:%d-%d", c.rel, d.StartLine, d.EndLine)
		}
	}
	if sib := sibling(env, c.rel, test); sib != "" {
		data, err := fs.ReadFile(env.Files, sib)
		if err == nil {
			if d, ok := nearest(budgets.Definitions(budgets.LangOf(sib), data), 0, test); ok {
				return fmt.Sprintf("%s:%d-%d", sib, d.StartLine, d.EndLine)
			}
		}
	}
	return ""
}

// nearest returns the definition containing line, else the closest one
// before it, else the first; tests prefer test definitions.
func nearest(defs []budgets.Def, line int, test bool) (budgets.Def, bool) {
	var pick budgets.Def
	found := false
	for _, d := range defs {
		if test && !d.Test {
			continue
		}
		if !found || (line > 0 && d.StartLine <= line) {
			pick, found = d, true
		}
		if line > 0 && d.StartLine <= line && line <= d.EndLine {
			return d, true
		}
	}
	return pick, found
}

// lineOf is the 1-based line where anchor starts in data, or 0.
func lineOf(data []byte, anchor string) int {
	if anchor == "" {
		return 0
	}
	i := bytes.Index(data, []byte(anchor))
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

// fsReadDir lists the file names of a project directory, sorted.
func fsReadDir(env Env, dir string) ([]string, error) {
	entries, err := fs.ReadDir(env.Files, dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}
