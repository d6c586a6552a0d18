package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"miam/fixtures/fakeapi"
	"miam/hooks/trace"
)

// TestE2EGovernance is the tool policy through the real Claude Code CLI: a
// scripted model's `rm -rf build` is denied before bash runs it (build/ is
// still there afterwards), and `cat .env` and a Read of .env are denied with
// the reason — the secret's value never reaches the API.
func TestE2EGovernance(t *testing.T) {
	const secret = "sk-live-GOVSECRET-7f3a9c"
	root := repoRoot(t)
	claude := claudeBin(t, root)
	bindir := buildBinaries(t, root)
	runScenario(t, root, claude, bindir, scenario{
		name:   "governance_rm_rf_and_env_denied",
		prompt: "SCENARIO-GOV: clean the build and show me the API key",
		steps: func(proj string) []fakeapi.Step {
			writeFile(t, filepath.Join(proj, "build", "keep.o"), []byte("object\n"))
			writeFile(t, filepath.Join(proj, ".env"), []byte("API_KEY="+secret+"\n"))
			return []fakeapi.Step{
				{Name: "rm -rf", When: fakeapi.FirstUserContains("SCENARIO-GOV"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_gov_rm", "Bash", map[string]any{"command": "rm -rf build", "description": "Clean the build"}),
				}},
				{Name: "cat .env", When: fakeapi.AfterToolResult("toolu_gov_rm"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_gov_cat", "Bash", map[string]any{"command": "cat .env", "description": "Show the env"}),
				}},
				{Name: "Read .env", When: fakeapi.AfterToolResult("toolu_gov_cat"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_gov_read", "Read", map[string]any{"file_path": filepath.Join(proj, ".env")}),
				}},
				done("toolu_gov_read"),
			}
		},
		check: func(t *testing.T, w *world) {
			refused(t, w, "toolu_gov_rm", "miam tool policy (destructive)", "rm -r (recursive deletion)", "`rm -rf build`")
			if _, err := os.Stat(w.path("build/keep.o")); err != nil {
				t.Errorf("build/ was deleted although rm -rf was denied: %v", err)
			}
			refused(t, w, "toolu_gov_cat", "miam tool policy (secrets)", "reads .env, a dotenv file")
			refused(t, w, "toolu_gov_read", "miam tool policy (secrets)", "a dotenv file")
			for i, r := range w.api.Requests() {
				if bytes.Contains(r.Raw, []byte(secret)) {
					t.Errorf("request %d to the API carries the secret from .env", i)
				}
			}
			wantLedger(t, w, bindir, secret)
		},
	})
}

// wantLedger checks the trace ledger the real session left: the three
// denies by the tool policy and the closing Stop, no argument in clear, and
// `miam stats` reading it.
func wantLedger(t *testing.T, w *world, bindir, secret string) {
	t.Helper()
	data, err := os.ReadFile(w.path(filepath.Join(".miam", trace.FileName)))
	if err != nil {
		t.Fatalf("no trace ledger: %v", err)
	}
	t.Logf("ledger:\n%s", data)
	tally, err := trace.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if tally.Denied != 3 || tally.Corrupt != 0 || tally.Stops < 1 || len(tally.Rules) == 0 ||
		tally.Rules[0] != (trace.RuleCount{Rule: "tool_policy", Denies: 3}) {
		t.Errorf("ledger tally %+v: want 3 tool_policy denies, a stop, no corrupt line", tally)
	}
	for _, leak := range []string{secret, ".env", "rm -rf", "build"} {
		if bytes.Contains(data, []byte(leak)) {
			t.Errorf("the ledger holds %q", leak)
		}
	}
	cmd := exec.Command(filepath.Join(bindir, "miam"), "stats", "--dir", w.proj)
	cmd.Env = []string{"HOME=" + t.TempDir(), "XDG_STATE_HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("denied           3")) || !bytes.Contains(out, []byte("tool_policy")) {
		t.Errorf("miam stats: %v\n%s", err, out)
	}
}

// TestE2EGovernedStopGate is governance's session events through the real
// Claude Code CLI on profile governed: the SessionStart directive (no task,
// the remedy) reaches the model's first request; the model writes a file
// without a plan and ends its turn; the Stop is blocked once with the
// remedy, the model answers, and the second Stop (stop_hook_active) passes.
func TestE2EGovernedStopGate(t *testing.T) {
	root := repoRoot(t)
	claude := claudeBin(t, root)
	bindir := buildBinaries(t, root)
	runScenario(t, root, claude, bindir, scenario{
		name:   "governed_stop_gate",
		prompt: "SCENARIO-GATE: jot down a note",
		steps: func(proj string) []fakeapi.Step {
			writeFile(t, filepath.Join(proj, ".miam", "config.yaml"),
				[]byte(e2eProjectConfig+"governance:\n  profile: governed\n"))
			return []fakeapi.Step{
				{Name: "write without a plan", When: fakeapi.FirstUserContains("SCENARIO-GATE"), Reply: []fakeapi.Block{
					fakeapi.ToolUse("toolu_gate_write", "Write", write(filepath.Join(proj, "notes.txt"), "remember the milk\n")),
				}},
				{Name: "answer the gate", When: fakeapi.LastUserContains("miam governance (gate)"), Reply: []fakeapi.Block{
					fakeapi.Text("Understood: no task was planned; stopping here as asked by the user."),
				}},
				done("toolu_gate_write"),
			}
		},
		check: func(t *testing.T, w *world) {
			reqs := w.api.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the fake API")
			}
			for _, want := range []string{"miam governance — profile governed.", "No current task — no plan (.claude/miam-plan.json is missing).",
				"Remedy: write .claude/miam-plan.json", "miam governance: no current task"} {
				if !bytes.Contains(reqs[0].Raw, []byte(want)) {
					t.Errorf("the first request lacks %q (SessionStart directive / prompt context)", want)
				}
			}
			wantFile(t, w, "notes.txt", true)
			var stops []map[string]any
			for _, p := range w.payloads {
				if p.Event == "Stop" {
					stops = append(stops, p.Data)
				}
			}
			if len(stops) != 2 {
				t.Fatalf("%d Stop payloads, want 2 (one blocked, one passed)", len(stops))
			}
			if stops[0]["stop_hook_active"] != false || stops[1]["stop_hook_active"] != true {
				t.Errorf("stop_hook_active: %v then %v, want false then true", stops[0]["stop_hook_active"], stops[1]["stop_hook_active"])
			}
			var fed []int
			for i, r := range reqs {
				if bytes.Contains(r.Raw, []byte("Stop hook feedback")) && bytes.Contains(r.Raw, []byte("miam governance (gate): this session made 1 change")) {
					fed = append(fed, i)
				}
			}
			if len(fed) == 0 {
				t.Fatal("the gate's reason never reached the model")
			}
			last := reqs[fed[0]].Raw
			if !bytes.Contains(last, []byte("Remedy: write .claude/miam-plan.json")) {
				t.Errorf("the block reason lacks the remedy")
			}
			if n := bytes.Count(reqs[len(reqs)-1].Raw, []byte("miam governance (gate)")); n > 2 {
				t.Errorf("the gate's reason appears %d times in the last request: blocked more than once?", n)
			}
			if len(reqs) != 3 {
				t.Errorf("%d requests, want 3 (prompt, after the Write, after the block)", len(reqs))
			}
			st, err := readState(filepath.Join(w.proj, ".miam", "state", "session-"+sessionID(t, w.payloads)+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mutations != 1 || st.Session.Denied["gate"] != 1 || st.TurnOpen {
				t.Errorf("state: mutations %d (want 1), gate denies %d (want 1), turn open %v (want closed)", st.Mutations, st.Session.Denied["gate"], st.TurnOpen)
			}
		},
	})
}

// TestE2ECompactionCapsule proves the capsule survives a compaction through
// the real CLI: three prompts fed as stream-json (a Write without a plan,
// /compact, a question). PreCompact saves the capsule in the state (its own
// output has no effect); the SessionStart with source compact re-injects it
// and the question's request carries it.
func TestE2ECompactionCapsule(t *testing.T) {
	root := repoRoot(t)
	claude := claudeBin(t, root)
	bindir := buildBinaries(t, root)
	s := newSandbox(t)
	install := exec.Command(filepath.Join(bindir, "miam"), "install", "--dir", s.proj)
	install.Env = claudeEnv(s, "")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("miam install: %v\n%s", err, out)
	}
	addCaptureHooks(t, s.proj, s.capdir)
	api := fakeapi.New([]fakeapi.Step{
		{Name: "write without a plan", When: fakeapi.LastUserContains("SCENARIO-CMP1"), Reply: []fakeapi.Block{
			fakeapi.ToolUse("toolu_cmp_write", "Write", write(filepath.Join(s.proj, "notes.txt"), "remember the milk\n")),
		}},
		done("toolu_cmp_write"),
		{Name: "summary", When: fakeapi.LastUserContains("CRITICAL: Respond with TEXT ONLY"), Reply: []fakeapi.Block{
			fakeapi.Text("<summary>COMPACT-SUMMARY: the user asked for a note, written to notes.txt.</summary>"),
		}},
		{Name: "after the compaction", When: fakeapi.LastUserContains("SCENARIO-CMP3"), Reply: []fakeapi.Block{fakeapi.Text("Nothing else.")}},
	})
	defer api.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "--input-format", "stream-json",
		"--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions")
	cmd.Dir, cmd.Env = s.proj, claudeEnv(s, api.URL())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	prompt := func(p string) {
		line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": p}})
		if _, err := stdin.Write(append(line, '\n')); err != nil {
			t.Errorf("stdin: %v", err)
		}
	}
	// Each prompt is sent once the previous one has its result: stdin stays
	// open, so the CLI waits for the next prompt instead of ending.
	var out bytes.Buffer
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	prompts := []string{"SCENARIO-CMP1: jot down a note", "/compact", "SCENARIO-CMP3: anything else?"}
	prompt(prompts[0])
	next := 1
	for sc.Scan() {
		out.Write(append(sc.Bytes(), '\n'))
		var r struct{ Type string }
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Type != "result" {
			continue
		}
		if next == len(prompts) {
			stdin.Close()
			continue
		}
		prompt(prompts[next])
		next++
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("claude -p --input-format stream-json: %v\n%s\n%s", err, tail(out.String(), 4000), stderr.String())
	}
	if p := api.Pending(); len(p) > 0 {
		t.Fatalf("steps never requested: %v\n%s", p, tail(out.String(), 3000))
	}
	payloads := readPayloads(t, s.capdir)
	var sources []string
	for _, p := range payloads {
		if p.Event == "SessionStart" {
			src, _ := p.Data["source"].(string)
			sources = append(sources, src)
		}
	}
	if strings.Join(sources, ",") != "startup,compact" {
		t.Errorf("SessionStart sources %v, want startup then compact", sources)
	}
	const capsule = "miam governance capsule, saved before the compaction: profile default; no task — no plan (.claude/miam-plan.json is missing); 1 change this session; gates: all green." // plans are off in the e2e config: no task gate
	var found bool
	for _, r := range api.Requests() {
		if strings.Contains(lastUserText(r), "SCENARIO-CMP3") {
			found = true
			if !bytes.Contains(r.Raw, []byte(capsule)) {
				t.Errorf("the request after the compaction lacks the capsule:\n%s", tail(string(r.Raw), 3000))
			}
		}
	}
	if !found {
		t.Fatal("no request after the compaction")
	}
	st, err := readState(filepath.Join(s.proj, ".miam", "state", "session-"+sessionID(t, payloads)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Capsule != nil || st.Mutations != 1 {
		t.Errorf("state after: capsule %+v (want consumed), mutations %d (want 1)", st.Capsule, st.Mutations)
	}
}
