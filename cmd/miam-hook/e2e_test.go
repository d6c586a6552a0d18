package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"miam/fixtures/fakeapi"
)

// world is what a scenario's checks may look at after the CLI ran.
type world struct {
	sandbox
	api      *fakeapi.Server
	payloads []payload
	out      []byte // the CLI's stream-json
	hookBin  string // absolute path of the miam-hook that was registered
}

// path is a project file's absolute path, as the Write tool requires.
func (w *world) path(rel string) string { return filepath.Join(w.proj, rel) }

// scenario is one headless Claude Code session against a scripted model.
type scenario struct {
	name       string
	prompt     string
	steps      func(proj string) []fakeapi.Step
	check      func(t *testing.T, w *world)
	transcript string // when set, -update keeps the session transcript as fixtures/transcripts/<transcript>
	// defaults runs on miam's default config: the sandbox's project config
	// (e2eProjectConfig, rule 6 off) is removed.
	defaults bool
}

// TestE2E drives the real Claude Code CLI with miam installed in a throwaway
// project and a scripted fake model, and checks what happened on the host:
// files on disk and what the model was told. It is the proof that the hooks
// work; the unit tests only show that the decisions are right.
func TestE2E(t *testing.T) {
	root := repoRoot(t)
	claude := claudeBin(t, root)
	bindir := buildBinaries(t, root)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			runScenario(t, root, claude, bindir, sc)
		})
	}
}

func runScenario(t *testing.T, root, claude, bindir string, sc scenario) {
	s := newSandbox(t)
	install := exec.Command(filepath.Join(bindir, "miam"), "install", "--dir", s.proj)
	install.Env = claudeEnv(s, "") // the same HOME and XDG dirs: no user config leaks in
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("miam install --dir %s: %v\n%s", s.proj, err, out)
	}
	addCaptureHooks(t, s.proj, s.capdir)
	if sc.defaults {
		if err := os.Remove(filepath.Join(s.proj, ".miam", "config.yaml")); err != nil {
			t.Fatal(err)
		}
	}

	api := fakeapi.New(sc.steps(s.proj))
	defer api.Close()
	w := &world{sandbox: s, api: api, hookBin: filepath.Join(bindir, "miam-hook")}
	w.out = runClaude(t, claude, s, api.URL(), sc.prompt)
	w.payloads = readPayloads(t, s.capdir)

	if p := api.Pending(); len(p) > 0 {
		t.Errorf("the model script did not play out; steps never requested: %v\nstream-json tail:\n%s", p, tail(string(w.out), 3000))
	}
	for _, r := range api.Unmatched() {
		t.Logf("request answered by no step (last user message: %q)", lastUserText(r))
	}
	sid := sessionID(t, w.payloads)
	checkState(t, s.proj, sid)
	sc.check(t, w)

	if *update {
		var tr []byte
		if sc.transcript != "" {
			tr = transcript(t, s, sid)
		}
		scr := newScrubber(s, bindir, w.payloads, tr)
		writeFixtures(t, root, sc.name, s.proj, scr, w.payloads)
		if tr != nil {
			writeClean(t, filepath.Join(root, "fixtures", "transcripts", sc.transcript), scr.scrub(tr))
		}
	}
}

// checkState asserts that miam-hook persisted the session's state where SPEC §1 puts it.
func checkState(t *testing.T, proj, sid string) {
	t.Helper()
	path := filepath.Join(proj, ".miam", "state", "session-"+sid+".json")
	if _, err := os.Stat(path); err != nil {
		found, _ := filepath.Glob(filepath.Join(proj, ".miam", "state", "*"))
		t.Errorf("miam-hook state: %v (.miam/state holds %v)", err, found)
	}
}

func sessionID(t *testing.T, payloads []payload) string {
	t.Helper()
	for _, p := range payloads {
		if id, _ := p.Data["session_id"].(string); id != "" {
			return id
		}
	}
	t.Fatalf("no captured payload carries a session_id (%d payloads)", len(payloads))
	return ""
}

func lastUserText(r fakeapi.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return tail(r.Messages[i].Text(), 300)
		}
	}
	return ""
}

// write is the input of Claude Code's Write tool.
func write(path, content string) map[string]string {
	return map[string]string{"file_path": path, "content": content}
}

// python returns a Python module of exactly code code lines (two-line
// functions named after prefix), comments comment-only lines and blanks blank
// lines, spread between the functions.
func python(prefix string, code, comments, blanks int) string {
	var b strings.Builder
	fns := code / 2
	for i := range fns {
		for range share(comments, fns, i) {
			fmt.Fprintf(&b, "# %s: note about step %d of the computation\n", prefix, i)
		}
		fmt.Fprintf(&b, "def %s_%d(x):\n    return x + %d\n", prefix, i, i)
		for range share(blanks, fns, i) {
			b.WriteString("\n")
		}
	}
	if code%2 == 1 {
		fmt.Fprintf(&b, "%s_LAST = %d\n", strings.ToUpper(prefix), code)
	}
	return b.String()
}

// share is the i-th of n near-equal parts of total.
func share(total, n, i int) int {
	return total/n + btoi(i < total%n)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pytest returns a pytest module of n code lines and nothing else.
func pytest(n int) string {
	var b strings.Builder
	for i := range n / 2 {
		fmt.Fprintf(&b, "def test_case_%d():\n    assert %d + 1 == %d\n", i, i, i+1)
	}
	if n%2 == 1 {
		b.WriteString("import math\n")
	}
	return b.String()
}

// toolResult returns the tool_result the model received for id, failing when
// the model never got one.
func toolResult(t *testing.T, w *world, id string) fakeapi.Content {
	t.Helper()
	res, ok := w.api.ToolResult(id)
	if !ok {
		t.Fatalf("the model never received a tool_result for %s", id)
	}
	return res
}

// wantFile asserts whether a project file exists after the run.
func wantFile(t *testing.T, w *world, rel string, exists bool) {
	t.Helper()
	_, err := os.Stat(w.path(rel))
	switch {
	case exists && err != nil:
		t.Errorf("%s should have been written: %v", rel, err)
	case !exists && err == nil:
		t.Errorf("%s was written although the write should have been denied", rel)
	}
}

// wantAllowed asserts that the tool call went through: no error reached the model.
func wantAllowed(t *testing.T, w *world, id, rel string) {
	t.Helper()
	if res := toolResult(t, w, id); res.IsError {
		t.Errorf("write of %s was refused: %s", rel, res.ResultText())
	}
	wantFile(t, w, rel, true)
}

// wantDenied asserts that the call was denied through PreToolUse JSON (the
// reason reaches the model without the hook's command line, which only an
// exit-2 deny shows) and that the reason contains every one of want.
func wantDenied(t *testing.T, w *world, id, rel string, want ...string) string {
	t.Helper()
	res := toolResult(t, w, id)
	text := res.ResultText()
	t.Logf("the model was told, for %s:\n%s", rel, text)
	if !res.IsError {
		t.Errorf("write of %s was not refused; the model got: %s", rel, text)
	}
	for _, s := range want {
		if !strings.Contains(text, s) {
			t.Errorf("deny text for %s lacks %q:\n%s", rel, s, text)
		}
	}
	if strings.Contains(text, w.hookBin) || strings.HasPrefix(text, "PreToolUse:Write hook error: [") {
		t.Errorf("deny for %s came through exit 2 (the hook's command line reached the model), not JSON:\n%s", rel, text)
	}
	wantFile(t, w, rel, false)
	return text
}

// done is the model's closing answer, after the result of tool_use id.
func done(id string) fakeapi.Step {
	return fakeapi.Step{Name: "end turn after " + id, When: fakeapi.AfterToolResult(id), Reply: []fakeapi.Block{fakeapi.Text("Done.")}}
}

var scenarios = []scenario{
	{
		// Rule 6 on the defaults: the turn's first code write waits for a
		// plan; once the plan is written, the same write goes through.
		name:     "plan_first",
		prompt:   "SCENARIO-P: write the parser",
		defaults: true,
		steps: func(proj string) []fakeapi.Step {
			plan := `{"tache": "parser", "bouts": [{"id": 1, "quoi": "parse the header", "fichier": "src/parser.py",` +
				` "moteur": "claude", "motif": "debogage-multi-fichiers"}]}` + "\n"
			code := python("parse", 8, 0, 0)
			return []fakeapi.Step{
				{Name: "write without plan", When: fakeapi.FirstUserContains("SCENARIO-P"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_p_code1", "Write", write(filepath.Join(proj, "src/parser.py"), code)),
				}},
				{Name: "write the plan", When: fakeapi.AfterToolResult("toolu_p_code1"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_p_plan", "Write", write(filepath.Join(proj, ".claude/miam-plan.json"), plan)),
				}},
				{Name: "write again", When: fakeapi.AfterToolResult("toolu_p_plan"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_p_code2", "Write", write(filepath.Join(proj, "src/parser.py"), code)),
				}},
				done("toolu_p_code2"),
			}
		},
		check: func(t *testing.T, w *world) {
			if res := toolResult(t, w, "toolu_p_code1"); !res.IsError || !strings.Contains(res.ResultText(), "miam-plan.json") {
				t.Errorf("the first write was not refused with a request for the plan (error %v): %s", res.IsError, res.ResultText())
			}
			wantAllowed(t, w, "toolu_p_plan", ".claude/miam-plan.json")
			wantAllowed(t, w, "toolu_p_code2", "src/parser.py")
		},
	},
	{
		// Rule 1: a test file of more than 10 lines is the delegate's work.
		name:   "test_write_denied",
		prompt: "SCENARIO-A: add tests for calc",
		steps: func(proj string) []fakeapi.Step {
			return []fakeapi.Step{
				{Name: "write tests", When: fakeapi.FirstUserContains("SCENARIO-A"), Reply: []fakeapi.Block{
					fakeapi.Text("I will write the tests."),
					fakeapi.ToolUse("toolu_a_test", "Write", write(filepath.Join(proj, "tests/test_calc.py"), pytest(20))),
				}},
				done("toolu_a_test"),
			}
		},
		check: func(t *testing.T, w *world) {
			wantDenied(t, w, "toolu_a_test", "tests/test_calc.py", "deleguer")
		},
	},
	{
		// Rule 1 leaves small test edits to the agent.
		name:   "test_write_small",
		prompt: "SCENARIO-B: add a small test",
		steps: func(proj string) []fakeapi.Step {
			return []fakeapi.Step{
				{Name: "write small test", When: fakeapi.FirstUserContains("SCENARIO-B"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_b_test", "Write", write(filepath.Join(proj, "tests/test_small.py"), pytest(5))),
				}},
				done("toolu_b_test"),
			}
		},
		check: func(t *testing.T, w *world) {
			wantAllowed(t, w, "toolu_b_test", "tests/test_small.py")
		},
	},
	{
		// Rule 2: 12 code lines per file pass twice (24 ≤ 30) although the
		// comments and blanks would exceed the budget if they counted; the
		// third file brings the total to 36 and is denied.
		// It runs on the defaults, so the plan comes first (rule 6); its
		// transcript is the README's replay demo.
		name:       "write_budget",
		prompt:     "SCENARIO-C: write the three modules",
		transcript: "claude-" + claudeVersion + "-budget.jsonl",
		defaults:   true,
		steps: func(proj string) []fakeapi.Step {
			plan := `{"tache": "modules", "bouts": [{"id": 1, "quoi": "modules a, b and c", "fichier": "src/a.py",` +
				` "moteur": "claude", "motif": "debogage-multi-fichiers"}]}` + "\n"
			return []fakeapi.Step{
				{Name: "write the plan", When: fakeapi.FirstUserContains("SCENARIO-C"), Reply: []fakeapi.Block{
					fakeapi.Text("Planning first."),
					fakeapi.ToolUse("toolu_c_plan", "Write", write(filepath.Join(proj, ".claude/miam-plan.json"), plan)),
				}},
				{Name: "write a", When: fakeapi.AfterToolResult("toolu_c_plan"), Reply: []fakeapi.Block{
					fakeapi.Text("Writing module a."),
					fakeapi.ToolUse("toolu_c_a", "Write", write(filepath.Join(proj, "src/a.py"), python("alpha", 12, 30, 8))),
				}},
				{Name: "write b", When: fakeapi.AfterToolResult("toolu_c_a"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_c_b", "Write", write(filepath.Join(proj, "src/b.py"), python("beta", 12, 30, 8))),
				}},
				{Name: "write c", When: fakeapi.AfterToolResult("toolu_c_b"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_c_c", "Write", write(filepath.Join(proj, "src/c.py"), python("gamma", 12, 6, 4))),
				}},
				done("toolu_c_c"),
			}
		},
		check: func(t *testing.T, w *world) {
			wantAllowed(t, w, "toolu_c_a", "src/a.py")
			wantAllowed(t, w, "toolu_c_b", "src/b.py")
			text := wantDenied(t, w, "toolu_c_c", "src/c.py")
			if !strings.Contains(text, "36") && !strings.Contains(text, "budget 30") {
				t.Errorf("deny text for src/c.py names neither the 36 lines nor the budget of 30:\n%s", text)
			}
		},
	},
	{
		// Subagents are not counted: a foreground subagent writes 40 code
		// lines, then the main agent still has its whole budget for 12.
		name:   "subagent_not_counted",
		prompt: "SCENARIO-D-MAIN: delegate the big module",
		steps: func(proj string) []fakeapi.Step {
			return []fakeapi.Step{
				{Name: "main starts subagent", When: fakeapi.FirstUserContains("SCENARIO-D-MAIN"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_d_agent", "Agent", map[string]any{
						"description": "Write big module", "prompt": "SCENARIO-D-SUB: write src/big.py",
						"subagent_type": "general-purpose", "run_in_background": false,
					}),
				}},
				{Name: "subagent writes", When: fakeapi.FirstUserContains("SCENARIO-D-SUB"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_d_big", "Write", write(filepath.Join(proj, "src/big.py"), python("big", 40, 4, 4))),
				}},
				{Name: "subagent reports", When: fakeapi.AfterToolResult("toolu_d_big"), Reply: []fakeapi.Block{
					fakeapi.Text("SUBAGENT-REPORT: src/big.py written."),
				}},
				{Name: "main writes after", When: fakeapi.AfterToolResult("toolu_d_agent"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_d_after", "Write", write(filepath.Join(proj, "src/after.py"), python("after", 12, 2, 2))),
				}},
				done("toolu_d_after"),
			}
		},
		check: func(t *testing.T, w *world) {
			wantAllowed(t, w, "toolu_d_big", "src/big.py")
			wantAllowed(t, w, "toolu_d_after", "src/after.py")
			if res := toolResult(t, w, "toolu_d_agent"); !strings.Contains(res.ResultText(), "SUBAGENT-REPORT") {
				t.Errorf("the subagent's report did not reach the main agent: %s", res.ResultText())
			}
			var sub bool
			for _, p := range w.payloads {
				if p.Event == "PreToolUse" && p.Tool == "Write" && p.Data["agent_id"] != nil {
					sub = true
				}
			}
			if !sub {
				t.Errorf("no PreToolUse Write carried an agent_id: the write did not happen inside the subagent")
			}
		},
	},
}
