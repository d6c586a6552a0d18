package hooks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"miam/budgets"
	"miam/hooks/config"
)

// bigTxt is 500 lines of 49 characters.
var bigTxt = func() string {
	var b strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&b, "line %03d of the big module, with words in it....\n", i)
	}
	return b.String()
}()

func rulesProject() fstest.MapFS {
	files := shellProject()
	files["src/big.txt"] = &fstest.MapFile{Data: []byte(bigTxt)}
	files["img.png"] = &fstest.MapFile{Data: []byte("\x89PNG\x00\x00binary")}
	// A valid plan, so that rule 6 (plan first, on by default) lets the
	// writes of these tests reach the rules they are about.
	files[".claude/miam-plan.json"] = &fstest.MapFile{Data: []byte(`{"tache": "t", "bouts": [{"id": 1, "quoi": "q",` +
		` "moteur": "claude", "motif": "debogage-multi-fichiers"}]}`)}
	return files
}

func toolEvent(name EventName, tool, id string, input any) Event {
	raw, _ := json.Marshal(input)
	return Event{Name: name, SessionID: "s", ToolUseID: id, Cwd: "/p", Tool: DecodeTool(tool, raw)}
}

func exceptionPost(args exceptionArgs, ok bool) Event {
	ev := toolEvent(PostToolUse, "mcp__miam__exception", "te", args)
	ev.Response, _ = json.Marshal(fmt.Sprintf(`{"ok":%v,"raison":%q}`, ok, args.Raison))
	return ev
}

// TestExceptions: an exception opened by the MCP tool or the CLI covers the
// writes of rules 1, 2 and 4 on its files, up to its lines.
func TestExceptions(t *testing.T) {
	write40 := toolEvent(PreToolUse, "Write", "tw", WriteInput{FilePath: "/p/src/x.py", Content: assigns("x", 40)})
	tests := []struct {
		name     string
		open     Event // zero: none
		cli      []budgets.Exception
		call     Event
		want     Decision
		used     int
		since    int
		opened   int
		contexts string
	}{
		{name: "no exception: denied", call: write40, want: Deny},
		{name: "mcp exception covers the write", open: exceptionPost(exceptionArgs{"concurrence", []string{"src/x.py"}, 50}, true), call: write40, used: 40, opened: 1},
		{name: "absolute path named", open: exceptionPost(exceptionArgs{"secret", []string{"/p/src/x.py"}, 40}, true), call: write40, used: 40, opened: 1},
		{name: "glob named", open: exceptionPost(exceptionArgs{"securite", []string{"src/*.py"}, 45}, true), call: write40, used: 40, opened: 1},
		{name: "too few lines: denied", open: exceptionPost(exceptionArgs{"concurrence", []string{"src/x.py"}, 39}, true), call: write40, want: Deny, opened: 1},
		{name: "other file: denied", open: exceptionPost(exceptionArgs{"concurrence", []string{"src/y.py"}, 50}, true), call: write40, want: Deny, opened: 1},
		{name: "unknown reason: not opened", open: exceptionPost(exceptionArgs{"flemme", []string{"src/x.py"}, 50}, true), call: write40, want: Deny},
		{name: "tool answered ok false: not opened", open: exceptionPost(exceptionArgs{"secret", []string{"src/x.py"}, 50}, false), call: write40, want: Deny},
		{name: "cli request opened by the next call", cli: []budgets.Exception{{Raison: "debogage-multi-fichiers", Fichiers: []string{"/p/src/x.py"}, Lignes: 40}}, call: write40, used: 40, opened: 1, contexts: "exception opened (debogage-multi-fichiers)"},
		{name: "shell heredoc covered", open: exceptionPost(exceptionArgs{"concurrence", []string{"src/x.py"}, 40}, true), call: bashEvent("cat > src/x.py <<'EOF'\n"+assigns("x", 40)+"EOF", "tb"), used: 40, opened: 1},
		{name: "test file covered (rule 1)", open: exceptionPost(exceptionArgs{"concurrence", []string{"tests/test_x.py"}, 20}, true),
			call: toolEvent(PreToolUse, "Write", "tw", WriteInput{FilePath: "/p/tests/test_x.py", Content: assigns("t", 20)}), used: 20, opened: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := Env{Project: "/p", Files: rulesProject()}
			st := budgets.Fresh("s")
			st.Turn, st.TurnOpen = 1, true
			if tc.open.Name != "" {
				_, st = Decide(tc.open, st, env)
			}
			env.Requested = tc.cli
			v, next := Decide(tc.call, st, env)
			if v.Decision != tc.want {
				t.Fatalf("decision %v, want %v\n%s", v.Decision, tc.want, v.Reason)
			}
			used := 0
			for _, e := range next.Exceptions {
				used += e.Used
			}
			if used != tc.used || next.SinceDelegation != tc.since || next.Session.Exceptions != tc.opened {
				t.Errorf("used %d since %d opened %d, want %d %d %d", used, next.SinceDelegation, next.Session.Exceptions, tc.used, tc.since, tc.opened)
			}
			if tc.want == None && next.ThisTurn.Written.Code == 0 {
				t.Error("lines under an exception must still count as written by hand")
			}
			if !strings.Contains(v.Context, tc.contexts) {
				t.Errorf("context %q lacks %q", v.Context, tc.contexts)
			}
		})
	}
}

// TestExceptionCountedAfter: a write counted after it ran takes its lines
// from the exception that covered it when it was planned.
func TestExceptionCountedAfter(t *testing.T) {
	files := rulesProject()
	env := Env{Project: "/p", Files: files}
	st := budgets.Fresh("s")
	st.SinceDelegation = 30
	_, st = Decide(exceptionPost(exceptionArgs{"concurrence", []string{"src/a.py"}, 5}, true), st, env)
	v, st := Decide(bashEvent(`python3 -c "open('src/a.py','a').write('z = 1\n')"`, "tu1"), st, env)
	if v.Decision != None || st.Snapshots["tu1"][0].Exception != 1 {
		t.Fatalf("verdict %v, snapshot %+v", v.Decision, st.Snapshots["tu1"])
	}
	files["src/a.py"] = &fstest.MapFile{Data: []byte(aPy + assigns("z", 7))}
	_, st = Decide(Event{Name: PostToolUse, SessionID: "s", ToolUseID: "tu1", Tool: bashEvent("true", "tu1").Tool}, st, env)
	if st.Exceptions[0].Used != 5 || st.SinceDelegation != 32 {
		t.Errorf("used %d since %d, want 5 and 32 (the 2 lines over the exception go to the budget)", st.Exceptions[0].Used, st.SinceDelegation)
	}
}

// TestBashReads is rule 5's view of Bash: what reaches the model of which
// file.
func TestBashReads(t *testing.T) {
	tests := []struct {
		cmd   string
		reads bool
		lines map[string]int
	}{
		{"cat src/big.txt", true, map[string]int{"src/big.txt": 500}},
		{"less src/a.py", true, map[string]int{"src/a.py": 10}},
		{"head -n 50 src/big.txt", true, map[string]int{"src/big.txt": 50}},
		{"head -20 src/big.txt", true, map[string]int{"src/big.txt": 20}},
		{"head src/big.txt", true, map[string]int{"src/big.txt": 10}},
		{"tail -n 30 src/big.txt", true, map[string]int{"src/big.txt": 30}},
		{"tail -n +491 src/big.txt", true, map[string]int{"src/big.txt": 10}},
		{"sed -n '100,199p' src/big.txt", true, map[string]int{"src/big.txt": 100}},
		{"sed -n 7p src/big.txt", true, map[string]int{"src/big.txt": 1}},
		{"sed -ne '1,5p' src/big.txt", true, map[string]int{"src/big.txt": 5}},
		{"sed -En '10,12p' src/big.txt", true, map[string]int{"src/big.txt": 3}},
		{"head -n50 src/big.txt; tail -5 src/a.py", true, map[string]int{"src/big.txt": 50, "src/a.py": 5}},
		{"cat -n src/a.py", true, map[string]int{"src/a.py": 10}},
		{"sed 's/a/b/' src/a.py", true, map[string]int{"src/a.py": 10}},
		{"sed -i 's/a/b/' src/a.py", false, map[string]int{}},
		{"cd src && cat a.py big.txt", true, map[string]int{"src/a.py": 10, "src/big.txt": 500}},
		{"cat src/big.txt | grep line", true, map[string]int{}},
		{"cat src/big.txt > /tmp/copy", false, map[string]int{}},
		{"grep -n def src/a.py", true, map[string]int{}},
		{"awk '{print $1}' src/big.txt", true, map[string]int{}},
		{"cat img.png", true, map[string]int{}},
		{"cat /etc/hosts", true, map[string]int{}},
		{"ls -la && wc -l src/a.py", false, map[string]int{}},
		{"bash -c 'cat src/a.py'", false, map[string]int{}},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			spans, reads, ok := bashReads(tc.cmd, "/p", Env{Project: "/p", Files: rulesProject()})
			if !ok {
				t.Fatal("unparsed")
			}
			got := map[string]int{}
			for _, s := range spans {
				got[s.rel] += s.lines
			}
			if reads != tc.reads {
				t.Errorf("reads %v, want %v", reads, tc.reads)
			}
			if d := cmp.Diff(tc.lines, got); d != "" {
				t.Errorf("lines (-want +got):\n%s", d)
			}
		})
	}
}

// TestReadBudget: rule 5 on Read and Grep, ranges adding up.
func TestReadBudget(t *testing.T) {
	read := func(off, lim int) Event {
		return toolEvent(PreToolUse, "Read", "tr", ReadInput{FilePath: "/p/src/big.txt", Offset: off, Limit: lim})
	}
	tests := []struct {
		name      string
		calls     []Event
		readChars int
		cfg       config.Config
		want      []Decision
		lines     int
	}{
		{name: "five ranges of 100: the fifth is denied", calls: []Event{read(1, 100), read(101, 100), read(201, 100), read(301, 100), read(401, 100)},
			want: []Decision{None, None, None, None, Deny}, lines: 400},
		{name: "whole file over 400 lines", calls: []Event{read(0, 0)}, want: []Decision{Deny}},
		{name: "custom per-file budget", calls: []Event{read(0, 0)}, cfg: config.Config{Budgets: config.Budgets{ReadLinesPerFile: 600}}, want: []Decision{None}, lines: 500},
		{name: "turn chars spent", readChars: 39990, calls: []Event{read(1, 10)}, want: []Decision{Deny}},
		{name: "measure mode passes", calls: []Event{read(0, 0)}, cfg: config.Config{Rules: config.Rules{ReadBudget: config.Measure}}, want: []Decision{None}, lines: 500},
		{name: "off", calls: []Event{read(0, 0)}, cfg: config.Config{Rules: config.Rules{ReadBudget: config.Off}}, want: []Decision{None}},
		{name: "binary not counted", calls: []Event{toolEvent(PreToolUse, "Read", "tr", ReadInput{FilePath: "/p/img.png"})}, want: []Decision{None}},
		{name: "sensitive path exempt", calls: []Event{read(0, 0)}, cfg: config.Config{CheminsSensibles: []string{"src/big.txt"}}, want: []Decision{None}},
		{name: "grep after the turn is spent", readChars: 40000, calls: []Event{toolEvent(PreToolUse, "Grep", "tg", GrepInput{Pattern: "x"})}, want: []Decision{Deny}},
		{name: "bash head over the file budget", calls: []Event{read(1, 380), bashEvent("head -n 50 src/big.txt", "tb")}, want: []Decision{None, Deny}, lines: 380},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := Env{Config: tc.cfg, Project: "/p", Files: rulesProject()}
			st := budgets.Fresh("s")
			st.ThisTurn.ReadChars = tc.readChars
			var got []Decision
			var last Verdict
			for _, ev := range tc.calls {
				var v Verdict
				v, st = Decide(ev, st, env)
				got = append(got, v.Decision)
				if v.Decision == Deny {
					last = v
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("decisions (-want +got):\n%s\n%s", d, last.Reason)
			}
			if st.ReadLines["src/big.txt"] != tc.lines {
				t.Errorf("lines read %d, want %d", st.ReadLines["src/big.txt"], tc.lines)
			}
			if last.Decision == Deny && (!strings.Contains(last.Reason, "Delegate the question") || !strings.Contains(last.Reason, deleguerTool)) {
				t.Errorf("deny without the delegation route:\n%s", last.Reason)
			}
		})
	}
}

// TestReadBudgetPostCharges: Grep and Bash reads are charged after, from
// their output; a new turn starts the per-file count again.
func TestReadBudgetPostCharges(t *testing.T) {
	env := Env{Project: "/p", Files: rulesProject()}
	st := budgets.Fresh("s")
	g := toolEvent(PostToolUse, "Grep", "tg", GrepInput{Pattern: "x"})
	g.Response = json.RawMessage(`{"mode":"content","numFiles":0,"filenames":[],"content":"0123456789","numLines":1}`)
	_, st = Decide(g, st, env)
	b := toolEvent(PostToolUse, "Bash", "tb", BashInput{Command: "grep -rn x src"})
	b.Response = json.RawMessage(`{"stdout":"abcde","stderr":"","interrupted":false}`)
	_, st = Decide(b, st, env)
	nb := toolEvent(PostToolUse, "Bash", "tn", BashInput{Command: "go build ./..."})
	nb.Response = json.RawMessage(`{"stdout":"lots of build output","stderr":""}`)
	_, st = Decide(nb, st, env)
	if st.ThisTurn.ReadChars != 15 {
		t.Errorf("read chars %d, want 15 (grep 10 + bash read 5, not the build)", st.ThisTurn.ReadChars)
	}
	st.ReadLines = map[string]int{"src/big.txt": 400}
	_, st = Decide(Event{Name: UserPromptSubmit, SessionID: "s", Prompt: "next"}, st, env)
	if len(st.ReadLines) != 0 || st.ThisTurn.ReadChars != 0 || st.Session.ReadChars != 15 {
		t.Errorf("new turn: lines %v, turn chars %d, session chars %d", st.ReadLines, st.ThisTurn.ReadChars, st.Session.ReadChars)
	}
}

// TestCommitGate is rule 3.
func TestCommitGate(t *testing.T) {
	tests := []struct {
		name        string
		cmd         string
		delegations int
		valides     map[string]string
		cfg         config.Config
		want        Decision
	}{
		{name: "commit without delegation", cmd: "git commit -m 'x'", want: Deny},
		{name: "add and commit", cmd: "git add -A && git commit -am x", want: Deny},
		{name: "global options", cmd: "git -C /p -c user.name=x commit --amend --no-edit", want: Deny},
		{name: "in a subshell", cmd: "(cd /p && git commit -m x)", want: Deny},
		{name: "after a delegation this turn", cmd: "git commit -m x", delegations: 1},
		{name: "message names a valid demande", cmd: "git commit -m 'calc (miam d42)'", valides: map[string]string{"src/c.py": "d42"}},
		{name: "message names no valid demande", cmd: "git commit -m 'calc (miam d43)'", valides: map[string]string{"src/c.py": "d42"}, want: Deny},
		{name: "not a commit", cmd: "git log --oneline -n 3 && git status", want: None},
		{name: "commit word elsewhere", cmd: "echo git commit", want: None},
		{name: "measure", cmd: "git commit -m x", cfg: config.Config{Rules: config.Rules{Commit: config.Measure}}},
		{name: "off", cmd: "git commit -m x", cfg: config.Config{Rules: config.Rules{Commit: config.Off}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := budgets.Fresh("s")
			st.ThisTurn.Delegations, st.Valides = tc.delegations, tc.valides
			v, next := Decide(bashEvent(tc.cmd, "tc"), st, Env{Config: tc.cfg, Project: "/p", Files: rulesProject()})
			if v.Decision != tc.want {
				t.Fatalf("decision %v, want %v\n%s", v.Decision, tc.want, v.Reason)
			}
			if tc.cfg.Rules.Commit == config.Measure && next.ThisTurn.Measured[RuleCommit] != 1 {
				t.Errorf("measured %v", next.ThisTurn.Measured)
			}
		})
	}
}

// TestVerdictRead is rule 13: a valide answer's output read whole is
// denied; a preview passes. The answer comes from deleguer or the wake-up.
func TestVerdictRead(t *testing.T) {
	env := Env{Project: "/p", Files: rulesProject()}
	post := toolEvent(PostToolUse, "mcp__miam__deleguer", "td", map[string]string{"consigne": "x", "sortie": "src/a.py"})
	post.Response, _ = json.Marshal(`{"ok":true,"demande_id":"d7","fin":"valide","sortie":"src/a.py","diff":{"files":["src/a.py"],"added":10,"removed":0}}`)
	_, st := Decide(post, budgets.Fresh("s"), env)
	if st.Valides["src/a.py"] != "d7" || st.ThisTurn.Delegated != 10 {
		t.Fatalf("valides %v delegated %d", st.Valides, st.ThisTurn.Delegated)
	}
	tests := []struct {
		name string
		in   ReadInput
		cfg  config.Config
		want Decision
	}{
		{"full read", ReadInput{FilePath: "/p/src/a.py"}, config.Config{}, Deny},
		{"preview", ReadInput{FilePath: "/p/src/a.py", Limit: 5}, config.Config{}, None},
		{"offset", ReadInput{FilePath: "/p/src/a.py", Offset: 3}, config.Config{}, None},
		{"other file", ReadInput{FilePath: "/p/src/main.go"}, config.Config{}, None},
		{"sensitive", ReadInput{FilePath: "/p/src/a.py"}, config.Config{CheminsSensibles: []string{"src/**"}}, None},
		{"off", ReadInput{FilePath: "/p/src/a.py"}, config.Config{Rules: config.Rules{VerdictRead: config.Off}}, None},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env.Config = tc.cfg
			v, _ := Decide(toolEvent(PreToolUse, "Read", "tr", tc.in), st, env)
			if v.Decision != tc.want || (tc.want == Deny && v.Rule != RuleVerdictRead) {
				t.Errorf("verdict %v %q, want %v\n%s", v.Decision, v.Rule, tc.want, v.Reason)
			}
		})
	}
}

// TestStopReport is rule 8: block once, with the report, only when a
// delegation's wait was never launched.
func TestStopReport(t *testing.T) {
	idle := map[string]budgets.Wait{"d9": {Reprise: "miam attendre d9"}}
	launched := map[string]budgets.Wait{"d9": {Reprise: "miam attendre d9", Launched: true}}
	tests := []struct {
		name   string
		waits  map[string]budgets.Wait
		active bool
		cfg    config.Config
		want   Decision
		open   bool
	}{
		{name: "nothing to act on", want: None},
		{name: "idle wait blocks", waits: idle, want: Deny, open: true},
		{name: "second stop passes", waits: idle, active: true, want: None},
		{name: "launched wait: nothing to do", waits: launched, want: None},
		{name: "wait rule off", waits: idle, cfg: config.Config{Rules: config.Rules{Wait: config.Off}}, want: None},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := budgets.Fresh("s")
			st.Turn, st.TurnOpen, st.Waits = 1, true, tc.waits
			st.ThisTurn = budgets.Tally{Written: budgets.Lines{Code: 10}, Delegated: 30, Delegations: 1, Exceptions: 1, Denied: map[string]int{"write_budget": 2}}
			st.Exceptions = []budgets.Exception{{Raison: "secret", Fichiers: []string{"k.py"}, Lignes: 10, Used: 4, Turn: 1}}
			v, next := Decide(Event{Name: Stop, SessionID: "s", StopHookActive: tc.active}, st, Env{Config: tc.cfg})
			if v.Decision != tc.want || next.TurnOpen != tc.open {
				t.Fatalf("decision %v open %v, want %v %v", v.Decision, next.TurnOpen, tc.want, tc.open)
			}
			if tc.want == Deny {
				for _, w := range []string{"10 code lines by you, 30 lines by delegation", "75 % delegated", "exceptions: 1 (secret 4/10 lines on k.py)", "denied: write_budget 2", "`miam attendre d9`"} {
					if !strings.Contains(v.Reason, w) {
						t.Errorf("report lacks %q:\n%s", w, v.Reason)
					}
				}
			}
		})
	}
}

func TestCheckException(t *testing.T) {
	for _, r := range budgets.ExceptionReasons {
		if err := budgets.CheckException(r, []string{"a"}, 1); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
	for _, bad := range []struct {
		r string
		f []string
		n int
	}{{"autre", []string{"a"}, 1}, {"secret", nil, 1}, {"secret", []string{"a"}, 0}, {"secret", []string{""}, 3}} {
		if budgets.CheckException(bad.r, bad.f, bad.n) == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestReadRefund: a Read that fails gives back its charge.
func TestReadRefund(t *testing.T) {
	env := Env{Project: "/p", Files: rulesProject()}
	_, st := Decide(toolEvent(PreToolUse, "Read", "tr", ReadInput{FilePath: "/p/src/big.txt", Limit: 100}), budgets.Fresh("s"), env)
	if st.ReadLines["src/big.txt"] != 100 || st.ThisTurn.ReadChars != 4900 {
		t.Fatalf("charged %v lines, %d chars", st.ReadLines, st.ThisTurn.ReadChars)
	}
	_, st = Decide(toolEvent(PostToolUseFailure, "Read", "tr", ReadInput{FilePath: "/p/src/big.txt", Limit: 100}), st, env)
	if st.ReadLines["src/big.txt"] != 0 || st.ThisTurn.ReadChars != 0 || len(st.Pending) != 0 {
		t.Errorf("after the failure: %v lines, %d chars, pending %v", st.ReadLines, st.ThisTurn.ReadChars, st.Pending)
	}
}

// FuzzBashReads: any command line is read without panicking, and never
// yields a negative count.
func FuzzBashReads(f *testing.F) {
	for _, s := range []string{"cat a", "sed -n '1,2p' a", "tail -n +3 a | head", "head -c 5 a", "git -C x commit -m y", "sed -n 9999999999999999999p a", "tail -n -5 a"} {
		f.Add(s)
	}
	env := Env{Project: "/p", Files: rulesProject()}
	f.Fuzz(func(t *testing.T, cmd string) {
		spans, _, _ := bashReads(cmd, "/p", env)
		for _, s := range spans {
			if s.lines < 0 || s.chars < 0 {
				t.Fatalf("%q: negative span %+v", cmd, s)
			}
		}
		calls, _, _ := shellCommands(cmd)
		_ = isGitCommit(calls)
	})
}

// TestExceptionRefund: a covered Write that fails gives its lines back to
// the exception and the tally.
func TestExceptionRefund(t *testing.T) {
	env := Env{Project: "/p", Files: rulesProject()}
	_, st := Decide(exceptionPost(exceptionArgs{"concurrence", []string{"src/x.py"}, 50}, true), budgets.Fresh("s"), env)
	in := WriteInput{FilePath: "/p/src/x.py", Content: assigns("x", 40)}
	_, st = Decide(toolEvent(PreToolUse, "Write", "tw", in), st, env)
	if st.Exceptions[0].Used != 40 || st.ThisTurn.Written.Code != 40 {
		t.Fatalf("used %d written %d", st.Exceptions[0].Used, st.ThisTurn.Written.Code)
	}
	_, st = Decide(toolEvent(PostToolUseFailure, "Write", "tw", in), st, env)
	if st.Exceptions[0].Used != 0 || st.ThisTurn.Written.Code != 0 || len(st.Pending) != 0 {
		t.Errorf("after the failure: used %d written %d pending %v", st.Exceptions[0].Used, st.ThisTurn.Written.Code, st.Pending)
	}
}
