package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"miam/budgets"
	"miam/delegate/wire"
	"miam/fixtures/fakeapi"
	"miam/fixtures/fakeollama"
	"miam/hooks"
)

// localModel is the model the fake Ollama has loaded and the user config names.
const localModel = "qwen2.5-coder:7b"

// calc is the bout every delegate scenario hands over, and what the fake
// engine answers to it.
var (
	calcCall = map[string]any{
		"consigne": "Write src/calc.py with add(a, b) returning a + b",
		"sortie":   "src/calc.py",
		"attendus": []string{"add"},
	}
	// calcAnswer passes the daemon's full code controls, docstrings included.
	calcAnswer = fakeollama.Answer("\"\"\"Calculator.\"\"\"\n\n\ndef add(a, b):\n    \"\"\"Return a + b.\"\"\"\n    return a + b\n")
)

// delegateScenario is one headless session in which the model delegates
// through miam's MCP server (as `miam install` registers it in .mcp.json)
// to the daemon, whose local engine is a fake Ollama.
type delegateScenario struct {
	name    string
	prompt  string
	replies []fakeollama.Reply // the local engine's answers, in order
	steps   func(d *delegation) []fakeapi.Step
	check   func(t *testing.T, d *delegation)
	// setup, when set, runs once the project is installed, before the CLI.
	setup func(t *testing.T, d *delegation)
	// noDaemon: the scenario keeps the daemon from starting.
	noDaemon bool
}

// delegation is what a delegate scenario's steps and checks see.
type delegation struct {
	world
	ollama   *fakeollama.Server
	stateDir string // $XDG_STATE_HOME/miam, the daemon's state

	mu    sync.Mutex
	snaps map[string]snapshot // see after
}

// snapshot is the host as the model's next move after a tool call found it.
type snapshot struct {
	state budgets.State
	files map[string]bool // the project's src/*.py
}

// TestE2EDelegate drives the real Claude Code CLI through a whole delegation:
// ToolSearch loads mcp__miam__deleguer, `miam mcp` starts the daemon on the
// first call, the daemon runs the bout on a fake Ollama, checks it and
// writes the file; when the answer is slower than call_wait_s the model runs
// the `reprise` command in the background and is woken by Claude Code's
// task notification. The checks are on the host: files, what the model was
// told, the hook's session state.
func TestE2EDelegate(t *testing.T) {
	root := repoRoot(t)
	claude := claudeBin(t, root)
	bindir := buildBinaries(t, root)
	for _, sc := range delegateScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			runDelegate(t, root, claude, bindir, sc)
		})
	}
}

func runDelegate(t *testing.T, root, claude, bindir string, sc delegateScenario) {
	s := newSandbox(t)
	// XDG dirs away from HOME's defaults, so that the daemon's state showing
	// up there proves the variables themselves reached `miam mcp`.
	stateHome, configHome := filepath.Join(s.root, "xdg-state"), filepath.Join(s.root, "xdg-config")
	d := &delegation{stateDir: filepath.Join(stateHome, "miam"), snaps: map[string]snapshot{}}
	t.Cleanup(func() { stopDaemon(t, d.stateDir) }) // before TempDir's removal: cleanups run last first

	d.ollama = fakeollama.New(fakeollama.Config{Installed: []string{localModel}, Loaded: []string{localModel}, Replies: sc.replies})
	defer d.ollama.Close()
	writeFile(t, filepath.Join(configHome, "miam", "config.yaml"), []byte(fmt.Sprintf(`engines:
  order: [local]
  local:
    host: %s
    model: %s
delegation:
  call_wait_s: 1
  essais: 1
`, d.ollama.URL(), localModel)))

	// The CLI's environment: the pinned one, with these XDG dirs, and the
	// built binaries first on PATH so that `reprise` runs as given.
	env := []string{"PATH=" + bindir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"XDG_STATE_HOME=" + stateHome, "XDG_CONFIG_HOME=" + configHome}
	for _, kv := range claudeEnv(s, "") {
		k, _, _ := strings.Cut(kv, "=")
		if k != "PATH" && k != "XDG_STATE_HOME" && k != "XDG_CONFIG_HOME" && k != "ANTHROPIC_BASE_URL" {
			env = append(env, kv)
		}
	}

	install := exec.Command(filepath.Join(bindir, "miam"), "install", "--dir", s.proj)
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("miam install --dir %s: %v\n%s", s.proj, err, out)
	}
	checkMCPRegistration(t, s.proj, filepath.Join(bindir, "miam"))
	addCaptureHooks(t, s.proj, s.capdir)

	d.world = world{sandbox: s, hookBin: filepath.Join(bindir, "miam-hook")}
	d.api = fakeapi.New(sc.steps(d)) // the steps read d.api only when a request comes
	defer d.api.Close()
	if sc.setup != nil {
		sc.setup(t, d)
	}
	start := time.Now()
	d.out = runClaudeEnv(t, claude, s, append(env, "ANTHROPIC_BASE_URL="+d.api.URL()), sc.prompt)
	t.Logf("claude -p ran %v", time.Since(start).Round(10*time.Millisecond))
	d.payloads = readPayloads(t, s.capdir)

	if p := d.api.Pending(); len(p) > 0 {
		t.Errorf("the model script did not play out; steps never requested: %v\nstream-json tail:\n%s\ndaemon log:\n%s",
			p, tail(string(d.out), 3000), readLog(d.stateDir))
	}
	for _, r := range d.api.Unmatched() {
		t.Errorf("request answered by no step (last user message: %q)", lastUserText(r))
	}
	sid := sessionID(t, d.payloads)
	checkState(t, s.proj, sid)
	// The daemon's files under our XDG_STATE_HOME: `miam mcp` got it. A
	// daemon that could not start leaves only the log miam mcp opened.
	daemonFile := "daemon.json"
	if sc.noDaemon {
		daemonFile = "daemon.log"
	}
	if _, err := os.Stat(filepath.Join(d.stateDir, daemonFile)); err != nil {
		t.Errorf("no daemon state under XDG_STATE_HOME (%v): the MCP server did not get the session's environment", err)
	}
	logDaemonEnv(t, d.stateDir)
	if n := d.ollama.Unused(); n != 0 {
		t.Errorf("%d scripted engine replies unused", n)
	}
	for _, r := range d.ollama.Requests() {
		if r.Model != localModel {
			t.Errorf("the engine was asked for model %q, want %q", r.Model, localModel)
		}
	}
	sc.check(t, d)

	if *update {
		scr := newScrubber(s, bindir, d.payloads)
		d.scrubRun(scr)
		writeFixtures(t, root, sc.name, s.proj, scr, d.payloads)
	}
}

// checkMCPRegistration asserts what `miam install` registered: the built
// miam, run as `miam mcp`, with no env of its own (the session's reaches it).
func checkMCPRegistration(t *testing.T, proj, miamBin string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(proj, ".mcp.json"))
	if err != nil {
		t.Fatalf("miam install wrote no .mcp.json: %v", err)
	}
	var doc struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf(".mcp.json: %v", err)
	}
	srv, ok := doc.MCPServers["miam"]
	if !ok || srv.Command != miamBin || strings.Join(srv.Args, " ") != "mcp" || len(srv.Env) != 0 {
		t.Fatalf(".mcp.json does not register %s mcp, without env, as \"miam\":\n%s", miamBin, data)
	}
}

// after matches the model's next move after tool_use id, like
// fakeapi.AfterToolResult, and keeps the hook's session state at that
// moment: Claude Code sends that request only once the tool's PostToolUse
// hooks have run, so this is the state the tool call left.
func (d *delegation) after(id string) fakeapi.Matcher {
	m := fakeapi.AfterToolResult(id)
	return func(r fakeapi.Request) bool {
		if !m(r) {
			return false
		}
		snap := snapshot{files: map[string]bool{}}
		states, _ := filepath.Glob(filepath.Join(d.proj, ".miam", "state", "session-*.json"))
		if len(states) != 1 {
			return true // no snapshot: stateAfter says so
		}
		st, err := readState(states[0])
		if err != nil {
			return true
		}
		snap.state = st
		src, _ := filepath.Glob(filepath.Join(d.proj, "src", "*.py"))
		for _, f := range src {
			snap.files["src/"+filepath.Base(f)] = true
		}
		d.mu.Lock()
		d.snaps[id] = snap
		d.mu.Unlock()
		return true
	}
}

// snapAfter is what after(id) kept.
func (d *delegation) snapAfter(t *testing.T, id string) snapshot {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	snap, ok := d.snaps[id]
	if !ok {
		t.Fatalf("no session state was read when the result of %s reached the model", id)
	}
	return snap
}

// stateAfter is the session state after(id) kept.
func (d *delegation) stateAfter(t *testing.T, id string) budgets.State {
	t.Helper()
	return d.snapAfter(t, id).state
}

// finalState is the session state the hook left at the end.
func (d *delegation) finalState(t *testing.T) budgets.State {
	t.Helper()
	st, err := readState(filepath.Join(d.proj, ".miam", "state", "session-"+sessionID(t, d.payloads)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func readState(path string) (budgets.State, error) {
	var st budgets.State
	data, err := budgets.ReadStateFile(path)
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(data, &st)
}

// lazy is a tool input computed when the fake API sends it, from what the
// model has been told so far: the model's own reading of earlier results.
type lazy func() any

func (f lazy) MarshalJSON() ([]byte, error) { return json.Marshal(f()) }

// answer decodes the deleguer answer the model received for tool_use id:
// Claude Code gives it the structured content as a compact JSON string.
func (d *delegation) answer(id string) (wire.Answer, string, bool) {
	res, ok := d.api.ToolResult(id)
	if !ok {
		return wire.Answer{}, "", false
	}
	text := res.ResultText()
	var a wire.Answer
	if res.IsError || json.Unmarshal([]byte(text), &a) != nil {
		return wire.Answer{}, text, false
	}
	return a, text, true
}

// reprise is the model running the answer's reprise command as given.
func (d *delegation) reprise(id string) lazy {
	return func() any {
		cmd := "echo 'no reprise in the deleguer answer'; exit 3"
		if a, _, ok := d.answer(id); ok && a.Reprise != "" {
			cmd = a.Reprise
		}
		return map[string]any{"command": cmd, "run_in_background": true, "description": "wait for miam"}
	}
}

// suivre is the model polling the request the deleguer call id answered.
func (d *delegation) suivre(id string) lazy {
	return func() any {
		a, _, _ := d.answer(id)
		return map[string]any{"demande_id": a.DemandeID, "attente_s": 30}
	}
}

var outputFileTag = regexp.MustCompile(`<output-file>([^<]+)</output-file>`)

// notification returns the task notification that woke the model: the last
// user message of the latest request carrying one.
func (d *delegation) notification() (string, bool) {
	reqs := d.api.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		for j := len(reqs[i].Messages) - 1; j >= 0; j-- {
			if m := reqs[i].Messages[j]; m.Role == "user" {
				if text := m.Text(); strings.Contains(text, "<task-notification>") {
					return text, true
				}
				break
			}
		}
	}
	return "", false
}

// wantAnswer asserts the deleguer answer the model got and returns it.
func wantAnswer(t *testing.T, d *delegation, id string) wire.Answer {
	t.Helper()
	a, text, ok := d.answer(id)
	if !ok {
		t.Fatalf("the deleguer result is not an answer:\n%s\ndaemon log:\n%s", text, readLog(d.stateDir))
	}
	t.Logf("deleguer answered: %s", text)
	return a
}

// wantCalc asserts src/calc.py holds what the fake engine answered.
func wantCalc(t *testing.T, d *delegation) {
	t.Helper()
	got, err := os.ReadFile(d.path("src/calc.py"))
	if err != nil {
		t.Fatalf("the delegation did not write src/calc.py: %v\ndaemon log:\n%s", err, readLog(d.stateDir))
	}
	if string(got) != calcAnswer.Text {
		t.Errorf("src/calc.py = %q, want the engine's answer %q", got, calcAnswer.Text)
	}
}

// search is the ToolSearch call that loads the deferred deleguer schema.
var search = map[string]any{"query": "select:mcp__miam__deleguer", "max_results": 5}

const deleguerTool = "mcp__miam__deleguer"

var delegateScenarios = []delegateScenario{
	{
		// SPEC §8 fallback: the daemon cannot start (another one holds its
		// lock and answers nothing), so deleguer fails for want of an
		// executor; the delegation rules open for the turn and a 40-line
		// Write, over the budget of 30, passes with a notice.
		name:     "fallback_no_daemon",
		prompt:   "SCENARIO-F: delegate calc, else write it",
		noDaemon: true,
		setup: func(t *testing.T, d *delegation) {
			if err := os.MkdirAll(d.stateDir, 0o700); err != nil {
				t.Fatal(err)
			}
			lock, err := os.OpenFile(filepath.Join(d.stateDir, "serve.lock"), os.O_CREATE|os.O_RDWR, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { lock.Close() })
			if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				t.Fatal(err)
			}
		},
		steps: func(d *delegation) []fakeapi.Step {
			return []fakeapi.Step{
				{Name: "load deleguer", When: fakeapi.FirstUserContains("SCENARIO-F"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_f_search", "ToolSearch", search),
				}},
				{Name: "delegate calc", When: d.after("toolu_f_search"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_f_deleguer", deleguerTool, calcCall),
				}},
				{Name: "write it by hand", When: d.after("toolu_f_deleguer"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_f_hand", "Write", write(d.path("src/calc.py"), python("calc", 40, 0, 0))),
				}},
				{Name: "end", When: d.after("toolu_f_hand"), Reply: []fakeapi.Block{fakeapi.Text("Written by hand.")}},
			}
		},
		check: func(t *testing.T, d *delegation) {
			res := toolResult(t, d.w(), "toolu_f_deleguer")
			if !res.IsError || !strings.Contains(res.ResultText(), wire.UnreachableText) {
				t.Errorf("deleguer should have failed for want of an executor: %s\ndaemon log:\n%s", res.ResultText(), readLog(d.stateDir))
			}
			if st := d.stateAfter(t, "toolu_f_deleguer"); !st.Fallback() {
				t.Errorf("the failed deleguer did not open the fallback: turn %d, fallback_turn %d", st.Turn, st.FallbackTurn)
			}
			wantAllowed(t, d.w(), "toolu_f_hand", "src/calc.py")
			st := d.finalState(t)
			if st.ThisTurn.Opened[hooks.RuleWriteBudget] != 1 || st.ThisTurn.Written.Code != 40 {
				t.Errorf("the 40-line Write should be charged and counted as opened by the fallback: opened %v, written %+v", st.ThisTurn.Opened, st.ThisTurn.Written)
			}
			var told bool
			for _, r := range d.api.Requests() {
				for _, m := range r.Messages {
					told = told || strings.Contains(m.Text(), "no executor answers this turn")
				}
			}
			if !told {
				t.Errorf("the model was not told that the write went through for want of an executor")
			}
		},
	},
	{
		// The engine answers after call_wait_s: deleguer says ok: null with
		// a reprise; the model runs it in the background, ends its turn, is
		// woken by the task notification and reads the valide answer.
		name:    "delegate_wait",
		prompt:  "SCENARIO-W: write the helpers, then delegate calc",
		replies: []fakeollama.Reply{fakeollama.Delayed(3*time.Second, calcAnswer)},
		steps: func(d *delegation) []fakeapi.Step {
			return []fakeapi.Step{
				{Name: "write helpers by hand", When: fakeapi.FirstUserContains("SCENARIO-W"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_w_hand", "Write", write(d.path("src/helpers.py"), python("helper", 12, 2, 2))),
				}},
				{Name: "load deleguer", When: d.after("toolu_w_hand"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_w_search", "ToolSearch", search),
				}},
				{Name: "delegate calc", When: d.after("toolu_w_search"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_w_deleguer", deleguerTool, calcCall),
				}},
				{Name: "run reprise in the background", When: d.after("toolu_w_deleguer"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_w_wait", "Bash", d.reprise("toolu_w_deleguer")),
				}},
				// Rule 12: polling the awaited request is refused.
				{Name: "poll with suivre", When: d.after("toolu_w_wait"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_w_suivre", "mcp__miam__suivre", d.suivre("toolu_w_deleguer")),
				}},
				{Name: "end turn while waiting", When: d.after("toolu_w_suivre"), Reply: []fakeapi.Block{
					fakeapi.Text("The delegation runs; I will be woken when it ends."),
				}},
				// The hook injected the conduct for the answer's fin with the
				// notification: nothing to Read.
				{Name: "woken: valide, end", When: fakeapi.LastUserContains("<task-notification>"), Reply: []fakeapi.Block{
					fakeapi.Text("The delegation is valide: src/calc.py is written."),
				}},
			}
		},
		check: func(t *testing.T, d *delegation) {
			wantAllowed(t, d.w(), "toolu_w_hand", "src/helpers.py")
			if res := toolResult(t, d.w(), "toolu_w_search"); res.IsError || !strings.Contains(string(res.Result), deleguerTool) {
				t.Errorf("ToolSearch did not load %s: %s", deleguerTool, res.Result)
			}

			a := wantAnswer(t, d, "toolu_w_deleguer")
			_, text, _ := d.answer("toolu_w_deleguer")
			if a.OK != nil || !strings.Contains(text, `"ok":null`) || a.DemandeID == "" || a.Reprise != "miam attendre "+a.DemandeID {
				t.Errorf("deleguer should have answered ok: null with reprise `miam attendre <id>` (call_wait_s 1, engine 3 s): %s", text)
			}
			// The background Bash ran the reprise exactly as given.
			var ran bool
			for _, p := range d.payloads {
				if p.Event == "PreToolUse" && p.Tool == "Bash" {
					in, _ := p.Data["tool_input"].(map[string]any)
					ran = in["command"] == a.Reprise && in["run_in_background"] == true
				}
			}
			if !ran {
				t.Errorf("no background Bash ran %q", a.Reprise)
			}
			if res := toolResult(t, d.w(), "toolu_w_wait"); res.IsError || !strings.Contains(res.ResultText(), "running in background") {
				t.Errorf("the reprise did not start in the background: %s", res.ResultText())
			}
			if res := toolResult(t, d.w(), "toolu_w_suivre"); !res.IsError || !strings.Contains(res.ResultText(), "you will be woken at the end") {
				t.Errorf("suivre during the wait was not denied by rule 12: %s", res.ResultText())
			}
			note, ok := d.notification()
			if !ok {
				t.Fatal("the model was never woken by a task notification")
			}
			if !strings.Contains(note, "<status>completed</status>") || !strings.Contains(note, "exit code 0") {
				t.Errorf("the wait did not complete cleanly:\n%s", note)
			}

			// Rule 11: deleguer's ok: null came with the way to wait.
			if !requestMentions(d.api.Requests(), "toolu_w_deleguer", "run_in_background: true") {
				t.Errorf("no context after the ok: null deleguer told the model how to wait")
			}
			// The wake-up carried the conduct for valide, read by the hook
			// from the task's output file: the model needed no Read.
			var woken bool
			for _, r := range d.api.Requests() {
				if !strings.Contains(string(r.Raw), "<task-notification>") {
					continue
				}
				for _, m := range r.Messages {
					woken = woken || (strings.Contains(m.Text(), "ended valide") && strings.Contains(m.Text(), a.DemandeID))
				}
			}
			if !woken {
				t.Errorf("the wake-up request does not carry the conduct for valide of %s", a.DemandeID)
			}
			wantCalc(t, d)

			// The hook's write budget: deleguer answered ok: null, so its
			// PostToolUse leaves it; the valide read at the wake-up resets it.
			if st := d.stateAfter(t, "toolu_w_deleguer"); st.SinceDelegation != 12 || st.Session.Delegations != 0 {
				t.Errorf("a pending (ok: null) deleguer changed the budget: since_delegation %d, delegations %d; want 12, 0",
					st.SinceDelegation, st.Session.Delegations)
			}
			if final := d.finalState(t); final.SinceDelegation != 0 || final.Session.Delegations != 1 {
				t.Errorf("after the background valide: since_delegation %d, delegations %d; want 0, 1",
					final.SinceDelegation, final.Session.Delegations)
			}
		},
	},
	{
		// The engine answers at once: deleguer returns ok: true valide, and
		// its PostToolUse resets the write budget, so a Write denied before
		// the delegation passes after it.
		name:    "delegate_instant",
		prompt:  "SCENARIO-I: write the modules, delegate calc",
		replies: []fakeollama.Reply{calcAnswer},
		steps: func(d *delegation) []fakeapi.Step {
			b := write(d.path("src/b.py"), python("beta", 12, 2, 2))
			return []fakeapi.Step{
				{Name: "write a by hand", When: fakeapi.FirstUserContains("SCENARIO-I"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_i_a", "Write", write(d.path("src/a.py"), python("alpha", 24, 4, 4))),
				}},
				{Name: "write b by hand: over budget", When: d.after("toolu_i_a"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_i_b_denied", "Write", b),
				}},
				{Name: "load deleguer", When: d.after("toolu_i_b_denied"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_i_search", "ToolSearch", search),
				}},
				{Name: "delegate calc", When: d.after("toolu_i_search"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_i_deleguer", deleguerTool, calcCall),
				}},
				{Name: "write b again", When: d.after("toolu_i_deleguer"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_i_b", "Write", b),
				}},
				done("toolu_i_b"),
			}
		},
		check: func(t *testing.T, d *delegation) {
			wantAllowed(t, d.w(), "toolu_i_a", "src/a.py")
			if st := d.stateAfter(t, "toolu_i_a"); st.SinceDelegation != 24 {
				t.Errorf("since_delegation after the 24-line hand write = %d, want 24", st.SinceDelegation)
			}
			// Before the delegation, 12 more lines are over the budget.
			res := toolResult(t, d.w(), "toolu_i_b_denied")
			text := res.ResultText()
			t.Logf("the model was told, for src/b.py before the delegation:\n%s", text)
			if !res.IsError || !strings.Contains(text, "36") || !strings.Contains(text, deleguerTool) ||
				strings.Contains(text, d.hookBin) {
				t.Errorf("the Write of src/b.py before the delegation was not denied by JSON naming the 36 lines and offering deleguer:\n%s", text)
			}
			if d.snapAfter(t, "toolu_i_b_denied").files["src/b.py"] {
				t.Errorf("src/b.py was written although the write should have been denied")
			}
			a := wantAnswer(t, d, "toolu_i_deleguer")
			if a.OK == nil || !*a.OK || a.Fin != wire.Valide || a.Sortie != "src/calc.py" {
				t.Errorf("deleguer should have answered ok: true, fin valide, sortie src/calc.py: %+v", a)
			}
			wantCalc(t, d)
			st := d.stateAfter(t, "toolu_i_deleguer")
			if st.SinceDelegation != 0 || st.Session.Delegations != 1 {
				t.Errorf("after deleguer ok: true, since_delegation %d and delegations %d; want 0 and 1", st.SinceDelegation, st.Session.Delegations)
			}
			// After it, the same Write passes.
			wantAllowed(t, d.w(), "toolu_i_b", "src/b.py")
			if st := d.finalState(t); st.SinceDelegation != 12 {
				t.Errorf("since_delegation at the end = %d, want 12 (the Write after the delegation)", st.SinceDelegation)
			}
		},
	},
}

// w is the world, for the helpers of e2e_test.go.
func (d *delegation) w() *world { return &d.world }

// scrubRun adds the run's delegation and background task ids and Claude
// Code's per-user temp dir to the scrubber.
func (d *delegation) scrubRun(sc *scrubber) {
	for _, p := range d.payloads {
		if p.Event != "PostToolUse" {
			continue
		}
		switch resp := p.Data["tool_response"].(type) {
		case string: // an MCP tool's structured content (FINDINGS.md m1c)
			var a wire.Answer
			if json.Unmarshal([]byte(resp), &a) == nil && a.DemandeID != "" {
				sc.repl[a.DemandeID] = "<DEMANDE_ID>"
			}
		case map[string]any:
			if id, _ := resp["backgroundTaskId"].(string); id != "" {
				sc.repl[id] = "<TASK_ID>"
			}
		}
	}
	sc.repl[filepath.Join(d.tmp, fmt.Sprintf("claude-%d", os.Getuid()))] = "<CLAUDE_TMPDIR>"
}

// stopDaemon ends the daemon `miam mcp` started for this test, read from
// daemon.json: SIGTERM, then SIGKILL if it is still there after a while.
func stopDaemon(t *testing.T, stateDir string) {
	addr := struct {
		PID int `json:"pid"`
	}{}
	data, err := os.ReadFile(filepath.Join(stateDir, "daemon.json"))
	if err != nil || json.Unmarshal(data, &addr) != nil || addr.PID <= 0 {
		return // no daemon was started
	}
	pid := addr.PID
	// Never signal a process that is not our miam serve (a reused pid).
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && !bytes.Contains(cmdline, []byte("serve")) {
		return
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return // already gone
	}
	// The daemon is not our child (miam mcp started it in its own session):
	// there is no exit to wait on, so poll, with a deadline.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			t.Logf("daemon %d stopped on SIGTERM", pid)
			return
		}
	}
	t.Logf("daemon %d still running 5 s after SIGTERM: SIGKILL", pid)
	syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	t.Errorf("daemon %d survived SIGKILL", pid)
}

// alive reports whether pid runs; a zombie waiting for its reaper does not.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	_, after, _ := bytes.Cut(stat, []byte(") "))
	return !bytes.HasPrefix(after, []byte("Z"))
}

// logDaemonEnv logs which of the session's variables the daemon (started by
// `miam mcp` with its environment) has, where /proc shows it.
func logDaemonEnv(t *testing.T, stateDir string) {
	t.Helper()
	addr := struct {
		PID int `json:"pid"`
	}{}
	data, err := os.ReadFile(filepath.Join(stateDir, "daemon.json"))
	if err != nil || json.Unmarshal(data, &addr) != nil {
		return
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", addr.PID))
	if err != nil {
		return
	}
	var names []string
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if k, _, ok := bytes.Cut(kv, []byte("=")); ok {
			names = append(names, string(k))
		}
	}
	t.Logf("the daemon's (so miam mcp's) environment: %s", strings.Join(names, " "))
}

func readLog(stateDir string) string {
	data, _ := os.ReadFile(filepath.Join(stateDir, "daemon.log"))
	return tail(string(data), 3000)
}

// requestMentions reports whether a request sent after the tool_result of
// toolUseID carries text in any of its messages (hook context arrives as
// system messages beside the tool result).
func requestMentions(reqs []fakeapi.Request, toolUseID, text string) bool {
	for _, r := range reqs {
		if !strings.Contains(string(r.Raw), toolUseID) {
			continue
		}
		for _, m := range r.Messages {
			if strings.Contains(m.Text(), text) {
				return true
			}
		}
	}
	return false
}
