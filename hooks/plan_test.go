package hooks

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"miam/budgets"
	"miam/delegate/wire"
	"miam/hooks/config"
	"miam/plans"
)

const validPlan = `{"tache": "T1", "bouts": [
 {"id": 1, "quoi": "helpers", "fichier": "src/x.py", "moteur": "auto", "controle": "pytest"},
 {"id": 2, "quoi": "lock", "moteur": "claude", "motif": "concurrence"}]}`

func planEnv(mode config.Mode, plan string) Env {
	files := fstest.MapFS{"src/old.py": &fstest.MapFile{Data: []byte("def f():\n    return 1\n")}}
	if plan != "" {
		files[plans.File] = &fstest.MapFile{Data: []byte(plan)}
	}
	var cfg config.Config
	cfg.Rules.Plan = mode
	return Env{Config: cfg, Project: "/p", Files: files}
}

func TestPlanRule(t *testing.T) {
	write := toolEvent(PreToolUse, "Write", "tw", WriteInput{FilePath: "/p/src/x.py", Content: assigns("x", 5)})
	small := toolEvent(PreToolUse, "Edit", "te", EditInput{FilePath: "/p/src/old.py", OldString: "return 1", NewString: "return 2"})
	text := toolEvent(PreToolUse, "Write", "tt", WriteInput{FilePath: "/p/notes.txt", Content: "a\nb\n"})
	planWrite := toolEvent(PreToolUse, "Write", "tp", WriteInput{FilePath: "/p/.claude/miam-plan.json", Content: "{}"})
	tests := []struct {
		name     string
		mode     config.Mode
		plan     string
		quiet    bool // the turn already had a code write
		call     Event
		want     Decision
		reason   string // substring of the reason
		measured int
		planTurn int
	}{
		{name: "no plan: denied", mode: config.Deny, call: write, want: Deny, reason: `"fichier": "src/x.py"`},
		{name: "broken plan: denied naming the field", mode: config.Deny, call: write, want: Deny,
			plan: `{"tache":"T","bouts":[{"id":1,"quoi":"q","moteur":"claude"}]}`, reason: "bouts[0].motif: required when moteur is claude"},
		{name: "valid plan: allowed", mode: config.Deny, plan: validPlan, call: write, planTurn: 1},
		{name: "small edit: allowed", mode: config.Deny, call: small},
		{name: "no grammar: allowed", mode: config.Deny, call: text},
		{name: "plan file itself: exempt", mode: config.Deny, call: planWrite},
		{name: "quiet after a write this turn", mode: config.Deny, quiet: true, call: write, planTurn: 1},
		{name: "measure: counted once, allowed", mode: config.Measure, call: write, measured: 1, planTurn: 1},
		{name: "off", mode: config.Off, call: write},
		{name: "unset is deny (SPEC §8)", call: write, want: Deny, reason: `"fichier": "src/x.py"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := budgets.Fresh("s")
			st.Turn, st.TurnOpen = 1, true
			if tt.quiet {
				st.PlanTurn = 1
			}
			v, next := Decide(tt.call, st, planEnv(tt.mode, tt.plan))
			if v.Decision != tt.want {
				t.Fatalf("decision = %q, want %q (%s)", v.Decision, tt.want, v.Reason)
			}
			if tt.want == Deny && v.Rule != RulePlan {
				t.Errorf("rule = %q, want %q", v.Rule, RulePlan)
			}
			if !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("reason %q lacks %q", v.Reason, tt.reason)
			}
			if got := next.ThisTurn.Measured[RulePlan]; got != tt.measured {
				t.Errorf("measured = %d, want %d", got, tt.measured)
			}
			if next.PlanTurn != tt.planTurn {
				t.Errorf("PlanTurn = %d, want %d", next.PlanTurn, tt.planTurn)
			}
		})
	}
}

// TestPlanRuleTurn: one denied write, then the plan, then the turn's writes
// pass; the next turn checks again.
func TestPlanRuleTurn(t *testing.T) {
	write := toolEvent(PreToolUse, "Write", "tw", WriteInput{FilePath: "/p/src/x.py", Content: assigns("x", 5)})
	st := budgets.Fresh("s")
	st.Turn, st.TurnOpen = 1, true
	env := planEnv(config.Deny, "")
	v, st := Decide(write, st, env)
	if v.Decision != Deny {
		t.Fatalf("first write without a plan: %q", v.Decision)
	}
	env = planEnv(config.Deny, validPlan)
	if v, st = Decide(write, st, env); v.Decision == Deny {
		t.Fatalf("write after the plan: denied: %s", v.Reason)
	}
	env = planEnv(config.Deny, "") // the plan is gone: the turn stays open
	if v, st = Decide(write, st, env); v.Decision == Deny {
		t.Fatalf("second write of the turn denied: %s", v.Reason)
	}
	_, st = Decide(Event{Name: UserPromptSubmit, SessionID: "s"}, st, env)
	if v, _ = Decide(write, st, env); v.Decision != Deny {
		t.Fatalf("next turn without a plan: %q", v.Decision)
	}
}

func TestTrackBouts(t *testing.T) {
	post := func(resp string) Event {
		ev := toolEvent(PostToolUse, "mcp__miam__deleguer", "td", map[string]string{"consigne": "c"})
		ev.Response, _ = json.Marshal(resp)
		return ev
	}
	tests := []struct {
		name string
		plan string
		resp string
		want map[int]string
	}{
		{"ok true: valide", validPlan, `{"ok":true,"demande_id":"d1","sortie":"/p/src/x.py"}`, map[int]string{1: "valide"}},
		{"ok false: echec", validPlan, `{"ok":false,"demande_id":"d1","sortie":"src/x.py"}`, map[int]string{1: "echec"}},
		{"ok null: delegue", validPlan, `{"ok":null,"demande_id":"d1","sortie":"src/x.py","reprise":"miam attendre d1"}`, map[int]string{1: "delegue"}},
		{"lot", validPlan, `{"ok":true,"lot":[{"ok":true,"demande_id":"d2","sortie":"src/x.py"}]}`, map[int]string{1: "valide"}},
		{"other file", validPlan, `{"ok":true,"demande_id":"d1","sortie":"src/y.py"}`, nil},
		{"no plan", "", `{"ok":true,"demande_id":"d1","sortie":"src/x.py"}`, nil},
		{"broken plan", `{}`, `{"ok":true,"demande_id":"d1","sortie":"src/x.py"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := budgets.Fresh("s")
			st.Turn, st.TurnOpen = 1, true
			_, next := Decide(post(tt.resp), st, planEnv(config.Deny, tt.plan))
			if diff := cmp.Diff(tt.want, next.BoutStatus); diff != "" {
				t.Errorf("BoutStatus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTrackBoutsNewTache(t *testing.T) {
	st := budgets.Fresh("s")
	st.PlanTache, st.BoutStatus = "old", map[int]string{7: "valide"}
	yes := true
	next := trackBouts(answerFor(&yes, "src/x.py"), st, planEnv(config.Deny, validPlan))
	if diff := cmp.Diff(map[int]string{1: "valide"}, next.BoutStatus); diff != "" {
		t.Errorf("BoutStatus (-want +got):\n%s", diff)
	}
	if st.BoutStatus[7] != "valide" || len(st.BoutStatus) != 1 {
		t.Error("trackBouts changed its input")
	}
	if got := turnReport(next); !strings.Contains(got, "plan T1 bouts: 1 valide") {
		t.Errorf("turn report %q lacks the bouts", got)
	}
}

func answerFor(ok *bool, sortie string) wire.Answer {
	return wire.Answer{OK: ok, DemandeID: "d", Sortie: sortie}
}
