package hooks

import (
	"fmt"
	"path"
	"strings"

	"miam/budgets"
	"miam/delegate/wire"
	"miam/hooks/config"
)

// RuleCommit is rule 3's name in config and traces.
const RuleCommit = "commit"

// Rule 3: a `git commit` of the main agent passes when this turn had a
// successful delegation, or when the command (its message) names the
// demande_id of a valid delegation of this session — the commit then comes
// from that delegation. Otherwise it is denied.

// isGitCommit reports whether a command line runs `git commit`, skipping
// git's global options (-C DIR, -c KEY=VALUE, --git-dir=…).
func isGitCommit(calls [][]string) bool {
	for _, c := range calls {
		if len(c) == 0 || path.Base(c[0]) != "git" {
			continue
		}
		for i := 1; i < len(c); i++ {
			a := c[i]
			if a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" {
				i++
				continue
			}
			if strings.HasPrefix(a, "-") {
				continue
			}
			if a == "commit" {
				return true
			}
			break
		}
	}
	return false
}

// decideCommit applies rule 3 to a Bash call.
func decideCommit(in *BashInput, st budgets.State, env Env) (Verdict, budgets.State) {
	mode := env.Config.Rules.Commit.Or(config.Deny)
	if mode == config.Off {
		return Verdict{}, st
	}
	calls, _, ok := shellCommands(in.Command)
	if !ok || !isGitCommit(calls) || st.ThisTurn.Delegations > 0 {
		return Verdict{}, st
	}
	for _, id := range st.Valides {
		if id != "" && strings.Contains(in.Command, id) {
			return Verdict{}, st
		}
	}
	v, next, _ := deny(mode, RuleCommit, func() string {
		return fmt.Sprintf("miam rule 3 (commit): no delegation succeeded this turn (%s written by hand), so this commit is not one of delegated work. "+
			"Delegate the remaining work first (%s), or, if the commit comes from a valid delegation of this session, name its demande_id in the commit message.",
			plural(st.ThisTurn.Written.Code, "code line", "code lines"), deleguerTool)
	}, st)
	return v, next
}

// recordAnswer keeps what a valid answer (and each of its lot) did: its
// output file for rules 3 and 13, its lines for the turn report.
func recordAnswer(a wire.Answer, st budgets.State, env Env) budgets.State {
	if (a.OK != nil && *a.OK || a.Fin == wire.Valide) && a.DemandeID != "" {
		if a.Sortie != "" {
			rel, _ := relPath(env.Project, a.Sortie)
			if st.Valides == nil {
				st.Valides = map[string]string{}
			}
			st.Valides[rel] = a.DemandeID
		}
		if a.Diff != nil {
			st.ThisTurn.Delegated += a.Diff.Added
			st.Session.Delegated += a.Diff.Added
		}
	}
	for _, b := range a.Lot {
		st = recordAnswer(b, st, env)
	}
	return st
}
