package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	"miam/budgets"
	"miam/delegate/wire"
	"miam/hooks/config"
	"miam/plans"
)

// RulePlan is rule 6's name in config and traces.
const RulePlan = "plan"

// Rule 6, plan first (SPEC §7-§8). The main agent's first code write of a
// turn (Write, Edit, MultiEdit or NotebookEdit of a file with a grammar,
// budgets.LangOf != "") needs a valid plan, .claude/miam-plan.json, read
// through Env.Files:
//
//   - no plan: deny with a minimal plan prefilled from the denied call;
//   - a broken plan: deny with its validation error, which names the field.
//     The plan's own Write is never judged (it lies under .claude/, exempt),
//     so a broken plan is refused at the next code write;
//   - edits of at most small_edit_lines code lines pass without a plan.
//
// Once a turn had one code write let through (a valid plan, or measure
// mode), the rule stays quiet for the rest of it (State.PlanTurn).
//
// rules.plan: deny (the default, SPEC §8), measure or off.
//
// The bouts' statuses follow the deleguer answers the hook sees
// (trackBouts): they live in State.BoutStatus, never in the plan file,
// which is the agent's.

// decidePlan applies rule 6 to a file-writing call of the main agent; c is
// what the call adds. denied reports a verdict that stands.
func decidePlan(ev Event, c change, st budgets.State, env Env) (Verdict, budgets.State, bool) {
	mode := env.Config.Rules.Plan.Or(config.Deny)
	if mode == config.Off || c.lang == "" || !c.inside || (st.PlanTurn != 0 && st.PlanTurn == st.Turn) {
		return Verdict{}, st, false
	}
	if c.edit && c.added.Code <= env.Config.Budgets.SmallEditLinesOr() {
		return Verdict{}, st, false
	}
	var reason string
	if data, exists := readFile(env, plans.File, true); !exists {
		reason = planMissingMessage(ev, c, env)
	} else if _, err := plans.Parse(plans.File, data); err != nil {
		reason = fmt.Sprintf("miam rule 6 (plan first): the plan is broken, so this %s of %s waits — %v.\n"+
			"Fix %s (at most %d lines), then retry this call.", ev.Tool.Name, c.rel, err, plans.File, plans.MaxLines)
	}
	if reason == "" {
		st.PlanTurn = st.Turn
		return Verdict{}, st, false
	}
	v, next, denied := apply(mode, Verdict{Decision: Deny, Rule: RulePlan, Reason: reason}, st)
	if !denied {
		next.PlanTurn = next.Turn
	}
	return v, next, denied
}

func planMissingMessage(ev Event, c change, env Env) string {
	test := budgets.IsTestFile(c.rel, testGlobs(env.Config))
	p := plans.Plan{Tache: "…", Bouts: []plans.Bout{{
		ID: 1, Quoi: "…", Fichier: c.rel, Moteur: plans.MoteurAuto,
		Modele: modele(c, env, test), Contrat: "…", Controle: "…",
	}}}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(p)
	var b strings.Builder
	fmt.Fprintf(&b, "miam rule 6 (plan first): this %s of %s is the turn's first code write and the project has no plan. "+
		"Write %s first, then retry. A minimal plan for this call (complete the …):\n%s",
		ev.Tool.Name, c.rel, plans.File, js.Bytes())
	fmt.Fprintf(&b, "A bout you write yourself takes \"moteur\": \"claude\" and a \"motif\" (%s); a delegated bout names its fichier and its controle. "+
		"At most %d lines. Edits of up to %d lines need no plan.",
		strings.Join(plans.Motifs, ", "), plans.MaxLines, env.Config.Budgets.SmallEditLinesOr())
	return b.String()
}

// trackBouts sets the status of the plan bout each answer (and each of its
// lot) wrote, matched by fichier == sortie. Without a valid plan it does
// nothing. A new tache starts the statuses afresh.
func trackBouts(a wire.Answer, st budgets.State, env Env) budgets.State {
	data, exists := readFile(env, plans.File, true)
	if !exists {
		return st
	}
	p, err := plans.Parse(plans.File, data)
	if err != nil {
		return st
	}
	if st.PlanTache != p.Tache {
		st.PlanTache, st.BoutStatus = p.Tache, nil
	}
	st.BoutStatus = maps.Clone(st.BoutStatus) // st may share it with the caller's
	var walk func(wire.Answer)
	walk = func(a wire.Answer) {
		rel, _ := relPath(env.Project, a.Sortie)
		if id, s, found := p.AfterAnswer(rel, answerOK(a)); a.Sortie != "" && found {
			if st.BoutStatus == nil {
				st.BoutStatus = map[int]string{}
			}
			st.BoutStatus[id] = string(s)
		}
		for _, b := range a.Lot {
			walk(b)
		}
	}
	walk(a)
	return st
}

// answerOK is an answer's ok, or, when it has none, what its fin says.
func answerOK(a wire.Answer) *bool {
	if a.OK != nil || a.Fin == "" {
		return a.OK
	}
	ok := a.Fin == wire.Valide
	return &ok
}

// boutReport is the bouts' statuses in one clause, or "".
func boutReport(st budgets.State) string {
	if len(st.BoutStatus) == 0 {
		return ""
	}
	ids := make([]int, 0, len(st.BoutStatus))
	for id := range st.BoutStatus {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%d %s", id, st.BoutStatus[id])
	}
	return fmt.Sprintf("; plan %s bouts: %s", st.PlanTache, strings.Join(parts, ", "))
}
