package hooks

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"miam/budgets"
	"miam/hooks/config"
	"miam/plans"
)

// govEnv is a project with the given profile, plan (none when "") and
// extra files.
func govEnv(profile config.Profile, plan string, files ...string) Env {
	files0 := fstest.MapFS{}
	if plan != "" {
		files0[plans.File] = &fstest.MapFile{Data: []byte(plan)}
	}
	for i := 0; i+1 < len(files); i += 2 {
		files0[files[i]] = &fstest.MapFile{Data: []byte(files[i+1])}
	}
	var cfg config.Config
	cfg.Governance.Profile = profile
	return Env{Config: cfg, Project: "/p", Files: files0}
}

const brokenPlan = `{"tache": "T", "bouts": []}`

func TestSessionStart(t *testing.T) {
	persona := "agents/concierge.md"
	tests := []struct {
		name    string
		env     Env
		entry   config.ProjectPath
		source  string
		capsule *budgets.Capsule
		want    []string // in this order
		not     []string
	}{
		{name: "default, no plan", env: govEnv("", ""),
			want: []string{"miam governance — profile default.", "secrets files", "are denied.", "No current task — no plan", "Remedy: write .claude/miam-plan.json"},
			not:  []string{"blocked once", "entry persona"}},
		{name: "governed, no plan: says the gate", env: govEnv(config.ProfileGoverned, ""),
			want: []string{"profile governed", "No current task", "On profile governed, ending a turn after changing files outside any task is blocked once."}},
		{name: "strict asks", env: govEnv(config.ProfileStrict, ""), want: []string{"ask the user first"}},
		{name: "task named", env: govEnv(config.ProfileProduction, validPlan), want: []string{"Current task T1 (the tache of .claude/miam-plan.json)."},
			not: []string{"Remedy"}},
		{name: "broken plan is no task", env: govEnv(config.ProfileGoverned, brokenPlan), want: []string{"No current task — the plan is broken:", "bouts"}},
		{name: "persona first", env: govEnv("", "", persona, "You are the concierge.\n"), entry: config.ProjectPath(persona),
			want: []string{"[miam — entry persona]", "(agents/concierge.md)", "You are the concierge.", "miam governance — profile default."}},
		{name: "missing persona is said", env: govEnv("", ""), entry: config.ProjectPath(persona),
			want: []string{"agents.entry in .miam/config.yaml names agents/concierge.md, which the project does not have", "miam governance"}},
		{name: "compact re-injects the capsule", env: govEnv(config.ProfileGoverned, ""), source: "compact",
			capsule: &budgets.Capsule{Profile: "governed", NoTask: "no plan", Mutations: 3, Gates: []string{"3 changes outside any task"}},
			want:    []string{"miam governance — profile governed.", "capsule, saved before the compaction: profile governed; no task — no plan; 3 changes this session; open gates: 3 changes outside any task."}},
		{name: "startup ignores a capsule", env: govEnv(config.ProfileGoverned, ""), source: "startup",
			capsule: &budgets.Capsule{Profile: "governed", Mutations: 3}, not: []string{"capsule"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := budgets.Fresh("s")
			st.Capsule = tt.capsule
			tt.env.Config.Agents.Entry = tt.entry
			v, next := Decide(Event{Name: SessionStart, SessionID: "s", Source: nonEmpty(tt.source, "startup")}, st, tt.env)
			if v.Decision != None || v.Notice != "" {
				t.Errorf("verdict %+v, want context only", v)
			}
			at := 0
			for _, w := range tt.want {
				i := strings.Index(v.Context[at:], w)
				if i < 0 {
					t.Errorf("context lacks %q after offset %d:\n%s", w, at, v.Context)
					continue
				}
				at += i
			}
			for _, w := range tt.not {
				if strings.Contains(v.Context, w) {
					t.Errorf("context has %q:\n%s", w, v.Context)
				}
			}
			if tt.source == "compact" && next.Capsule != nil {
				t.Error("the capsule was not consumed")
			}
		})
	}
}

func TestUserPromptTask(t *testing.T) {
	notification := "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"
	tests := []struct {
		name   string
		env    Env
		prompt string
		want   string // "" means no context
	}{
		{name: "governed, no plan", env: govEnv(config.ProfileGoverned, ""),
			want: "miam governance: no current task — no plan (.claude/miam-plan.json is missing). Remedy: write"},
		{name: "production, task", env: govEnv(config.ProfileProduction, validPlan),
			want: "miam governance: current task T1 (the tache of .claude/miam-plan.json)."},
		{name: "default: the directive said it once", env: govEnv(config.ProfileDefault, "")},
		{name: "strict: the directive said it once", env: govEnv(config.ProfileStrict, "")},
		{name: "task notification continues the turn", env: govEnv(config.ProfileGoverned, ""), prompt: notification},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := Event{Name: UserPromptSubmit, SessionID: "s", Prompt: nonEmpty(tt.prompt, "fix the bug")}
			v, _ := Decide(ev, budgets.Fresh("s"), tt.env)
			if tt.want == "" {
				if strings.Contains(v.Context, "miam governance") {
					t.Errorf("context %q, want none from governance", v.Context)
				}
				return
			}
			if !strings.HasPrefix(v.Context, tt.want) {
				t.Errorf("context %q, want prefix %q", v.Context, tt.want)
			}
			if n := strings.Count(v.Context, "\n"); n > 1 {
				t.Errorf("context has %d lines, want at most 2", n+1)
			}
		})
	}
}

func TestPostToolUseCountsMutations(t *testing.T) {
	bash := func(cmd string) Event {
		return toolEvent(PostToolUse, "Bash", "tb", BashInput{Command: cmd})
	}
	sub := toolEvent(PostToolUse, "Write", "tw", WriteInput{FilePath: "/p/x.txt", Content: "a\n"})
	sub.AgentID = "a0123456789abcdef"
	tests := []struct {
		name string
		ev   Event
		want int
	}{
		{"Write", toolEvent(PostToolUse, "Write", "tw", WriteInput{FilePath: "/p/x.txt", Content: "a\n"}), 1},
		{"Edit", toolEvent(PostToolUse, "Edit", "te", EditInput{FilePath: "/p/x.txt", OldString: "a", NewString: "b"}), 1},
		{"MultiEdit", toolEvent(PostToolUse, "MultiEdit", "tm", MultiEditInput{FilePath: "/p/x.txt", Edits: []EditStep{{OldString: "a", NewString: "b"}}}), 1},
		{"NotebookEdit", toolEvent(PostToolUse, "NotebookEdit", "tn", NotebookEditInput{NotebookPath: "/p/n.ipynb", NewSource: "x"}), 1},
		{"subagent Write counts too", sub, 1},
		{"mutating Bash", bash("touch a.txt"), 1},
		{"redirection", bash("echo hi > a.txt"), 1},
		{"destructive Bash", bash("rm -rf build"), 1},
		{"unknown command is mutating", bash("./deploy.sh"), 1},
		{"read-only Bash", bash("git status && ls -la | grep x"), 0},
		{"cat is read-only", bash("cat README.md"), 0},
		{"Read", toolEvent(PostToolUse, "Read", "tr", ReadInput{FilePath: "/p/x.txt"}), 0},
		{"Grep", toolEvent(PostToolUse, "Grep", "tg", GrepInput{Pattern: "x"}), 0},
		{"PreToolUse never counts", toolEvent(PreToolUse, "Write", "tw", WriteInput{FilePath: "/p/x.txt", Content: "a\n"}), 0},
		{"a failed edit never counts", toolEvent(PostToolUseFailure, "Write", "tw", WriteInput{FilePath: "/p/x.txt", Content: "a\n"}), 0},
		// A failed mutating command may have changed files before failing.
		{"a failed mutating command counts", toolEvent(PostToolUseFailure, "Bash", "tb", BashInput{Command: "touch a"}), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := budgets.Fresh("s")
			st.Mutations = 2
			v, next := Decide(tt.ev, st, govEnv(config.ProfileGoverned, ""))
			if got := next.Mutations - 2; got != tt.want {
				t.Errorf("mutations +%d, want +%d", got, tt.want)
			}
			if tt.ev.Name == PostToolUse && strings.Contains(v.Context+v.Notice, "governance") {
				t.Errorf("PostToolUse said %q", v.Context+v.Notice)
			}
		})
	}
}

func TestPreCompactCapsule(t *testing.T) {
	st := budgets.Fresh("s")
	st.Mutations = 4
	st.Waits = map[string]budgets.Wait{"d1": {Reprise: "miam attendre d1"}, "d2": {Launched: true}}
	tests := []struct {
		name string
		env  Env
		want budgets.Capsule
	}{
		{"no task", govEnv(config.ProfileGoverned, ""), budgets.Capsule{Profile: "governed", NoTask: "no plan (.claude/miam-plan.json is missing)", Mutations: 4,
			Gates: []string{"4 changes outside any task", "delegation d1 running with nothing waiting for it"}}},
		{"task", govEnv("", validPlan), budgets.Capsule{Profile: "default", Tache: "T1", Mutations: 4,
			Gates: []string{"delegation d1 running with nothing waiting for it"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, next := Decide(Event{Name: PreCompact, SessionID: "s"}, st, tt.env)
			if !v.IsZero() {
				t.Errorf("verdict %+v, want none (PreCompact output has no effect)", v)
			}
			if next.Capsule == nil {
				t.Fatal("no capsule saved")
			}
			if d := cmp.Diff(tt.want, *next.Capsule); d != "" {
				t.Errorf("capsule (-want +got):\n%s", d)
			}
			if st.Capsule != nil {
				t.Error("Decide changed its input state")
			}
		})
	}
}

func TestSubagentStopNeverBlocks(t *testing.T) {
	tests := []struct {
		name      string
		env       Env
		mutations int
		want      string // substring of the notice; "" means none
	}{
		{"governed, red", govEnv(config.ProfileGoverned, ""), 2, "no task — no plan (.claude/miam-plan.json is missing); 2 changes this session; open gates: 2 changes outside any task."},
		{"governed, green", govEnv(config.ProfileGoverned, validPlan), 2, "task T1; 2 changes this session; gates: all green."},
		{"default, red", govEnv(config.ProfileDefault, ""), 1, "open gates: 1 change outside any task."},
		{"default, green: quiet", govEnv(config.ProfileDefault, ""), 0, ""},
		{"the compaction's internal subagent", govEnv(config.ProfileGoverned, validPlan), 0, "at the end of an internal subagent (a compaction): task T1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := budgets.Fresh("s")
			st.Mutations = tt.mutations
			ev := Event{Name: SubagentStop, SessionID: "s", AgentID: "a1", AgentType: "general-purpose"}
			if strings.Contains(tt.name, "compaction") {
				ev.AgentType = ""
			}
			v, _ := Decide(ev, st, tt.env)
			if v.Decision != None {
				t.Errorf("decision %s: SubagentStop never blocks", v.Decision)
			}
			if tt.want == "" {
				if v.Notice != "" {
					t.Errorf("notice %q, want none", v.Notice)
				}
				return
			}
			if !strings.Contains(v.Notice, tt.want) || (ev.AgentType != "" && !strings.Contains(v.Notice, "subagent general-purpose")) {
				t.Errorf("notice %q lacks %q", v.Notice, tt.want)
			}
		})
	}
}

func planOff(env Env) Env {
	env.Config.Rules.Plan = config.Off
	return env
}

func TestStopGate(t *testing.T) {
	tests := []struct {
		name      string
		env       Env
		mutations int
		active    bool
		idleWait  bool // rule 8 blocks too
		want      Decision
		reason    []string
		notice    string
	}{
		{name: "governed, writes, no plan: blocked once", env: govEnv(config.ProfileGoverned, ""), mutations: 2, want: Deny,
			reason: []string{"miam governance (gate): this session made 2 changes", "no plan (.claude/miam-plan.json is missing)",
				"Remedy: write .claude/miam-plan.json", "Then end your turn (profile governed"}},
		{name: "production, broken plan: blocked", env: govEnv(config.ProfileProduction, brokenPlan), mutations: 1, want: Deny,
			reason: []string{"the plan is broken"}},
		{name: "second Stop passes", env: govEnv(config.ProfileGoverned, ""), mutations: 2, active: true},
		{name: "a task exists: passes", env: govEnv(config.ProfileGoverned, validPlan), mutations: 2},
		{name: "reads only: passes", env: govEnv(config.ProfileGoverned, ""), mutations: 0},
		{name: "default: a notice, no block", env: govEnv(config.ProfileDefault, ""), mutations: 2,
			notice: "miam governance (gate): this session made 2 changes"},
		{name: "strict: a notice, no block", env: govEnv(config.ProfileStrict, ""), mutations: 2, notice: "(Profile strict: not blocked.)"},
		{name: "default with plans off: quiet", env: planOff(govEnv(config.ProfileDefault, "")), mutations: 2},
		{name: "governed with plans off: still blocked", env: planOff(govEnv(config.ProfileGoverned, "")), mutations: 2, want: Deny,
			reason: []string{"miam governance (gate)"}},
		{name: "with rule 8: one block, both reasons", env: govEnv(config.ProfileGoverned, ""), mutations: 1, idleWait: true, want: Deny,
			reason: []string{"miam turn report", "delegation d9 is still running", "miam governance (gate)"}},
		{name: "rule 8 alone still blocks", env: govEnv(config.ProfileGoverned, validPlan), mutations: 1, idleWait: true, want: Deny,
			reason: []string{"delegation d9 is still running"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := budgets.Fresh("s")
			st.Turn, st.TurnOpen, st.Mutations = 1, true, tt.mutations
			if tt.idleWait {
				st.Waits = map[string]budgets.Wait{"d9": {Reprise: "miam attendre d9"}}
			}
			v, next := Decide(Event{Name: Stop, SessionID: "s", StopHookActive: tt.active}, st, tt.env)
			if v.Decision != tt.want {
				t.Fatalf("decision %s, want %s (%s)", v.Decision, tt.want, v.Reason)
			}
			for _, w := range tt.reason {
				if !strings.Contains(v.Reason, w) {
					t.Errorf("reason lacks %q:\n%s", w, v.Reason)
				}
			}
			if !strings.Contains(v.Notice, tt.notice) || (tt.notice == "" && v.Notice != "") {
				t.Errorf("notice %q, want %q", v.Notice, tt.notice)
			}
			if next.TurnOpen != (tt.want == Deny) {
				t.Errorf("turn open %v after decision %s", next.TurnOpen, v.Decision)
			}
			if got := next.Session.Denied[RuleGate]; (got == 1) != (tt.want == Deny && strings.Contains(v.Reason, "gate")) {
				t.Errorf("gate denies counted %d", got)
			}
		})
	}
}

// A state file that could not be read is a fresh session: the decision
// allows and says so.
func TestBrokenStateAllowsWithTheError(t *testing.T) {
	st := budgets.Fresh("s")
	st.Broken = "unparsable: unexpected end of JSON input"
	v, next := Decide(Event{Name: Stop, SessionID: "s"}, st, govEnv(config.ProfileGoverned, ""))
	if v.Decision != None {
		t.Errorf("decision %s, want none", v.Decision)
	}
	if !strings.Contains(v.Notice, "unexpected end of JSON input") || !strings.Contains(v.Notice, "allowed") {
		t.Errorf("notice %q lacks the error", v.Notice)
	}
	if next.Broken != "" {
		t.Error("Broken kept")
	}
	v, _ = Decide(Event{Name: SessionStart, SessionID: "s", Source: "startup"}, st, govEnv("", ""))
	if !strings.HasPrefix(v.Context, "miam: the session state file was unusable") {
		t.Errorf("SessionStart context %q does not start with the error", v.Context)
	}
}

// A failure inside governance's decision allows, with the error.
func TestGovernancePanicAllows(t *testing.T) {
	env := govEnv(config.ProfileGoverned, "")
	env.Files = panicFS{}
	st := budgets.Fresh("s")
	st.Mutations = 3
	v, next := Decide(Event{Name: Stop, SessionID: "s"}, st, env)
	if v.Decision != None {
		t.Errorf("decision %s, want none", v.Decision)
	}
	if !strings.Contains(v.Notice, "miam governance: internal error on Stop (boom); allowed.") {
		t.Errorf("notice %q", v.Notice)
	}
	if next.Mutations != 3 {
		t.Errorf("mutations %d, want 3", next.Mutations)
	}
}

type panicFS struct{}

func (panicFS) Open(string) (fs.File, error) { panic("boom") }

func TestNeedsStateSessionEvents(t *testing.T) {
	for _, ev := range []Event{
		{Name: SessionStart}, {Name: PreCompact}, {Name: SubagentStop}, {Name: Stop}, {Name: UserPromptSubmit},
		toolEvent(PostToolUse, "Write", "", WriteInput{FilePath: "/p/x", Content: "a"}),
		toolEvent(PostToolUse, "Bash", "", BashInput{Command: "touch x"}),
	} {
		if !NeedsState(ev) {
			t.Errorf("NeedsState(%s %s) = false", ev.Name, ev.Tool.Name)
		}
	}
	// PreToolUse is untouched: a read-only Read of no secret needs nothing.
	if NeedsState(Event{Name: PreToolUse, AgentID: "a", Tool: DecodeTool("Read", []byte(`{"file_path":"/p/x"}`))}) {
		t.Error("NeedsState(subagent Read) = true")
	}
}

// TestEvidenceReminder: on gated profiles, the main agent's first mutation
// of a turn gets the reminder; a second one, a subagent's, a read-only call
// or another profile's do not.
func TestEvidenceReminder(t *testing.T) {
	write := toolEvent(PostToolUse, "Write", "tw", map[string]any{"file_path": "/p/src/a.py", "content": "x = 1\n"})
	read := toolEvent(PostToolUse, "Read", "tr", map[string]any{"file_path": "/p/src/a.py"})
	sub := write
	sub.AgentID = "a1"
	tests := []struct {
		name    string
		profile config.Profile
		events  []Event
		want    int // reminders among the verdicts
	}{
		{"governed: once per turn", config.ProfileGoverned, []Event{write, write}, 1},
		{"production", config.ProfileProduction, []Event{write}, 1},
		{"default: none", config.ProfileDefault, []Event{write}, 0},
		{"a read: none", config.ProfileGoverned, []Event{read}, 0},
		{"a subagent's write: none", config.ProfileGoverned, []Event{sub}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := budgets.Fresh("s")
			st.Turn, st.TurnOpen = 1, true
			got := 0
			for _, ev := range tt.events {
				var v Verdict
				v, st = Decide(ev, st, govEnv(tt.profile, ""))
				if strings.Contains(v.Context, "run what proves the change works") {
					got++
				}
			}
			if got != tt.want {
				t.Errorf("%d reminders, want %d", got, tt.want)
			}
		})
	}
}

// TestFailedCommandsCountAsMutations: a mutating Bash command that fails
// may have changed files; a failed Write or an interrupted command did not.
func TestFailedCommandsCountAsMutations(t *testing.T) {
	fail := func(tool string, input any, interrupted bool) Event {
		ev := toolEvent(PostToolUseFailure, tool, "tf", input)
		ev.Error, ev.Interrupted = "Exit code 1", interrupted
		return ev
	}
	tests := []struct {
		name string
		ev   Event
		want int
	}{
		{"mutating command failed", fail("Bash", map[string]any{"command": "echo x > f.txt; false"}, false), 1},
		{"read-only command failed", fail("Bash", map[string]any{"command": "grep -r nothing ."}, false), 0},
		{"interrupted", fail("Bash", map[string]any{"command": "touch f; sleep 100"}, true), 0},
		{"failed Write", fail("Write", map[string]any{"file_path": "/p/a.py", "content": "x\n"}, false), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := budgets.Fresh("s")
			st.Turn, st.TurnOpen = 1, true
			_, next := Decide(tt.ev, st, govEnv(config.ProfileGoverned, ""))
			if next.Mutations != tt.want {
				t.Errorf("mutations %d, want %d", next.Mutations, tt.want)
			}
		})
	}
}
