package hooks

import (
	"fmt"
	"path"
	"strings"

	"miam/budgets"
	"miam/hooks/config"
)

// RuleDocs is rule 10's name in config and traces.
const RuleDocs = "docs"

// Rule 10, docs (SPEC §8): documentation is the delegate's work, as tests
// are (rule 1). A call of the main agent that adds more than
// budgets.docs_lines lines to a documentation file (Markdown or
// reStructuredText outside plan/, which is exempt as a whole), or as many
// docstring lines to a source file in a batch (more docstring lines than
// code lines), is denied with a ready deleguer call.
// Agent instruction files (CLAUDE.md, AGENTS.md) are local config, exempt
// like .claude/ (SPEC §6).

// docLines is what rule 10 weighs in a change: the non-blank lines added to
// a documentation file, else the docstring lines added to a source file when
// they are a batch of docstrings, i.e. more than the code the call adds:
// code with its own docstrings is rule 2's business.
func docLines(c change) (n int, docFile bool) {
	if isDocFile(c.rel) {
		// No grammar: the counter reports non-blank lines as code.
		return c.added.Code + c.added.Doc, true
	}
	if c.added.Doc <= c.added.Code {
		return 0, false
	}
	return c.added.Doc, false
}

func isDocFile(rel string) bool {
	switch strings.ToLower(path.Ext(rel)) {
	case ".md", ".markdown", ".mdx", ".rst":
	default:
		return false
	}
	switch path.Base(rel) {
	case "CLAUDE.md", "CLAUDE.local.md", "AGENTS.md":
		return false
	}
	return true
}

// decideDocs applies rule 10 to a file-writing call of the main agent.
// denied reports a verdict that stands.
func decideDocs(ev Event, c change, st budgets.State, env Env) (Verdict, budgets.State, bool) {
	mode := env.Config.Rules.Docs.Or(config.Deny)
	n, docFile := docLines(c)
	if mode == config.Off || c.test || n <= env.Config.Budgets.DocsLinesOr() {
		return Verdict{}, st, false
	}
	if i := coveringException(st, c.rel, n); i >= 0 {
		st, _ = useException(st, i, n)
		return Verdict{}, st, false
	}
	return deny(mode, RuleDocs, func() string { return docsMessage(ev, c, n, docFile, env) }, st)
}

func docsMessage(ev Event, c change, n int, docFile bool, env Env) string {
	var b strings.Builder
	what, kind := "docstring lines to", "docstrings"
	if docFile {
		what, kind = "lines of documentation to", "texte"
	}
	fmt.Fprintf(&b, "miam rule 10 (docs): documentation is delegated, not written by hand. This %s adds %d %s %s; the limit is %d per call.\n",
		ev.Tool.Name, n, what, c.rel, env.Config.Budgets.DocsLinesOr())
	mc := c
	mc.added.Code = n // the exception route asks for the lines this rule weighs
	writeCall(&b, mc, env, kind)
	return b.String()
}
