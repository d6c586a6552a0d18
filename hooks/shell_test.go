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

// after marks, in the table, a file counted after the command ran.
const after = -1

// assigns returns n lines of Python code: "v0 = 0", "v1 = 1"…
func assigns(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s%d = %d\n", prefix, i, i)
	}
	return b.String()
}

// aPy is src/a.py of the test project: 10 code lines.
var aPy = "def f_0(x):\n    return x + 0\ndef f_1(x):\n    return x + 1\ndef f_2(x):\n    return x + 2\ndef f_3(x):\n    return x + 3\ndef f_4(x):\n    return x + 4\n"

const patch = `diff --git a/src/a.py b/src/a.py
--- a/src/a.py
+++ b/src/a.py
@@ -1,2 +1,5 @@
 def f_0(x):
+    """Doc."""
+    y = x
+    z = y
+    return z
     return x + 0
`

func shellProject() fstest.MapFS {
	return fstest.MapFS{
		"src/a.py":    {Data: []byte(aPy)},
		"src/main.go": {Data: []byte("package main\n\nfunc main() {}\n")},
		"p.diff":      {Data: []byte(patch)},
		"README.md":   {Data: []byte("# p\n")},
		"tests/.keep": {Data: nil},
	}
}

// shellCharges is the table's view of rule 4: each charged file and its
// code lines, or after.
func shellCharges(command, cwd string, files fstest.MapFS) map[string]int {
	env := Env{Project: "/p", Files: files}
	got := map[string]int{}
	for _, t := range shellTargets(planShell(command, cwd, env), env) {
		if t.after {
			got[t.c.rel] = after
			continue
		}
		got[t.c.rel] += t.c.added.Code
	}
	return got
}

// TestShellWrites is rule 4's table: real commands and what each would
// write, in code lines, into which file.
func TestShellWrites(t *testing.T) {
	hd := func(target, body string) string { return "cat > " + target + " <<'EOF'\n" + body + "EOF" }
	tests := []struct {
		name    string
		command string
		cwd     string // default /p
		want    map[string]int
	}{
		{"heredoc 40 lines", hd("src/x.py", assigns("x", 40)), "", map[string]int{"src/x.py": 40}},
		{"heredoc unquoted delimiter keeps $vars", "cat <<EOF > src/exp.py\nname = \"$USER\"\nhome = \"$(pwd)\"\nEOF", "", map[string]int{"src/exp.py": 2}},
		{"heredoc <<- strips tabs", "cat <<-EOF > src/tab.py\n\ta = 1\n\tb = 2\n\tEOF", "", map[string]int{"src/tab.py": 2}},
		{"heredoc comments and docstring not code", hd("src/doc.py", "\"\"\"Module doc.\"\"\"\n# comment\n\nx = 1\n"), "", map[string]int{"src/doc.py": 1}},
		{"echo into a new file", "echo 'print(1)' > src/f.py", "", map[string]int{"src/f.py": 1}},
		{"echo -e with newlines", `echo -e 'a = 1\nb = 2' > src/e.py`, "", map[string]int{"src/e.py": 2}},
		{"printf multi-line Go", `printf 'package main\n\nfunc main() {\n}\n' > src/f.go`, "", map[string]int{"src/f.go": 3}},
		{"printf repeats its format", `printf '%s\n' 'a = 1' 'b = 2' 'c = 3' > src/p.py`, "", map[string]int{"src/p.py": 3}},
		{"cat a file into another", "cat src/a.py > src/b.py", "", map[string]int{"src/b.py": 10}},
		{"append >>", "echo 'b = 2' >> src/a.py", "", map[string]int{"src/a.py": 1}},
		{"tee -a from a pipe", "echo 'y = 2' | tee -a src/a.py", "", map[string]int{"src/a.py": 1}},
		{"heredoc piped into tee, stdout to /dev/null", "cat <<'EOF' | tee src/t.py > /dev/null\na = 1\nb = 2\nc = 3\nEOF", "", map[string]int{"src/t.py": 3}},
		{"sudo tee with a heredoc", "sudo tee src/s.py <<'EOF'\na = 1\nb = 2\nEOF", "", map[string]int{"src/s.py": 2}},
		{"here-string", "cat <<< 'a = 1' > src/h.py", "", map[string]int{"src/h.py": 1}},
		{"sed -i s/// counts changed lines", "sed -i 's/return x/return y/' src/a.py", "", map[string]int{"src/a.py": 5}},
		{"sed -i one line", "sed -i 's/f_0/g_0/' src/a.py", "", map[string]int{"src/a.py": 1}},
		{"sed -i.bak with g and ERE", `sed -E -i.bak 's/(f)_([0-9])/\1\2/g' src/a.py`, "", map[string]int{"src/a.py": 5}},
		{"sed -i with two -e", "sed -i -e 's/f_0/g_0/' -e 's/f_1/g_1/' src/a.py", "", map[string]int{"src/a.py": 2}},
		{"sed -i no match adds nothing", "sed -i 's/nothere/x/' src/a.py", "", map[string]int{}},
		{"sed -i with an address: after", "sed -i '3d' src/a.py", "", map[string]int{"src/a.py": after}},
		{"sed into a new file", "sed 's/f_/g_/' src/a.py > src/g.py", "", map[string]int{"src/g.py": 10}},
		{"cat piped through sed", "cat src/a.py | sed 's/f_/h_/' > src/h2.py", "", map[string]int{"src/h2.py": 10}},
		{"perl -pi -e", "perl -pi -e 's/x/y/g' src/a.py", "", map[string]int{"src/a.py": after}},
		{"perl -i.bak -pe", "perl -i.bak -pe 's/x/y/' src/a.py src/main.go", "", map[string]int{"src/a.py": after, "src/main.go": after}},
		{"python3 -c open w", `python3 -c "open('src/x.py','w').write('a = 1\n')"`, "", map[string]int{"src/x.py": after}},
		{"python3 heredoc with open", "python3 - <<'EOF'\nwith open(\"src/w.py\", \"w\") as f:\n    f.write(\"a = 1\\n\")\nEOF", "", map[string]int{"src/w.py": after}},
		{"python Path.write_text", `python -c "from pathlib import Path; Path('src/pw.py').write_text('x = 1')"`, "", map[string]int{"src/pw.py": after}},
		{"python writing argv", `python3 -c "import sys; open(sys.argv[1], 'w').write('x')" src/argv.py`, "", map[string]int{"src/argv.py": after}},
		{"python -c reading only", `python3 -c "print(open('src/a.py').read())"`, "", map[string]int{}},
		{"node -e writeFileSync", `node -e "require('fs').writeFileSync('src/x.js', 'let a = 1\n')"`, "", map[string]int{"src/x.js": after}},
		{"ruby -e File.write", `ruby -e 'File.write("src/r.rb", "x = 1")'`, "", map[string]int{"src/r.rb": after}},
		{"cp onto a source file", "cp src/a.py src/b2.py", "", map[string]int{"src/b2.py": 10}},
		{"cp into a directory", "cp src/a.py tests/", "", map[string]int{"tests/a.py": 10}},
		{"cp -r a directory", "cp -r src lib", "", map[string]int{"lib/a.py": 10, "lib/main.go": 2}},
		{"mv within the project is a rename", "mv src/a.py src/renamed.py", "", map[string]int{}},
		{"mv from outside: after", "mv /tmp/x.py src/x.py", "", map[string]int{"src/x.py": after}},
		{"install -m", "install -m 644 src/a.py src/inst.py", "", map[string]int{"src/inst.py": 10}},
		{"git apply a patch", "git apply p.diff", "", map[string]int{"src/a.py": 3}},
		{"git apply --check writes nothing", "git apply --check p.diff", "", map[string]int{}},
		{"git apply from a heredoc", "git apply <<'EOF'\n" + patch + "EOF", "", map[string]int{"src/a.py": 3}},
		{"patch -p1 <", "patch -p1 < p.diff", "", map[string]int{"src/a.py": 3}},
		{"patch written then applied in one command", "cat > /tmp/p.diff <<'EOF'\n" + patch + "EOF\ngit apply /tmp/p.diff", "", map[string]int{"src/a.py": 3}},
		{"bash -c heredoc", "bash -c \"cat > src/x.py <<EOF\n" + assigns("y", 5) + "EOF\"", "", map[string]int{"src/x.py": 5}},
		{"bash -lc with cd", `bash -lc 'cd src && printf "a = 1\nb = 2\n" > two.py'`, "", map[string]int{"src/two.py": 2}},
		{"sh -c", `sh -c 'echo "a = 1" > src/y.py'`, "", map[string]int{"src/y.py": 1}},
		{"eval", `eval "echo 'a = 1' > src/z.py"`, "", map[string]int{"src/z.py": 1}},
		{"subshell with cd", "(cd src && cat > x.py <<'EOF'\na = 1\nb = 2\nc = 3\nEOF\n)", "", map[string]int{"src/x.py": 3}},
		{"subshell cd does not leak", "(cd src) && echo 'a = 1' > top.py", "", map[string]int{"top.py": 1}},
		{"cd then write", "cd src; echo 'z = 1' > z.py", "", map[string]int{"src/z.py": 1}},
		{"relative to the payload cwd", "echo 'z = 1' > z.py", "/p/src", map[string]int{"src/z.py": 1}},
		{"variable target", "f=src/var.py; echo 'v = 1' > $f", "", map[string]int{"src/var.py": 1}},
		{"command substitution", "x=$(cat > src/cs.py <<'EOF'\na = 1\nb = 2\nEOF\n)", "", map[string]int{"src/cs.py": 2}},
		{"process substitution", "make 2>&1 > >(tee src/ps.py)", "", map[string]int{"src/ps.py": after}},
		{"echo of a command substitution", `echo "$(date)" > src/stamp.py`, "", map[string]int{"src/stamp.py": 1}},
		{"loop appends: after", `for i in 1 2 3; do echo "x$i = 1" >> src/loop.py; done`, "", map[string]int{"src/loop.py": after}},
		{"program output into a source file: after", "go run gen.go > src/gen.go", "", map[string]int{"src/gen.go": after}},
		{"heredoc to a test file", hd("tests/test_x.py", assigns("t", 12)), "", map[string]int{"tests/test_x.py": 12}},
		{"no grammar: non-blank lines", "cat > Makefile <<'EOF'\nall:\n\n\tgo build\nEOF", "", map[string]int{"Makefile": 2}},
		{"copy via /tmp counted once", "cat > /tmp/x.py <<'EOF' && cp /tmp/x.py src/x.py\na = 1\nEOF", "", map[string]int{"/tmp/x.py": 1}},
		{"mv via /tmp counted once", "cat > /tmp/y.py <<'EOF'\na = 1\nb = 2\nEOF\nmv /tmp/y.py src/y.py", "", map[string]int{"src/y.py": 2}},
		{"2> errors are not a source write", "go build ./... 2> src/errors.py", "", map[string]int{}},
		{"> /dev/null", "echo hi > /dev/null", "", map[string]int{}},
		{">&2", "echo 'oops' >&2", "", map[string]int{}},
		{"logs are not source", "npm test > out.txt 2>&1; echo done >> build.log", "", map[string]int{}},
		{"outside the project, no grammar", `echo '{"a":1}' > /tmp/x.json`, "", map[string]int{}},
		{"local config is exempt", hd(".claude/settings.json", "{}\n"), "", map[string]int{}},
		{"dependency dirs are not source", hd("node_modules/x/index.js", "module.exports = 1\n"), "", map[string]int{}},
		{"read-only: ls", "ls -la", "", map[string]int{}},
		{"read-only: grep", "grep -rn 'def ' src | head -20", "", map[string]int{}},
		{"read-only: cat", "cat src/a.py", "", map[string]int{}},
		{"read-only: git", "git status && git diff --stat", "", map[string]int{}},
		{"unparseable after a write: the prefix runs", "cat > src/u.py <<'EOF'\na = 1\nb = 2\nEOF\nfi", "", map[string]int{"src/u.py": 2}},
		{"unparseable: the heredoc it carries", "for x in; do cat > src/v.py <<EOF\na = 1\nb = 2\nEOF\n", "", map[string]int{"src/v.py": 2}},
		{"unparseable one-liner carries nothing", "echo ) x", "", map[string]int{}},
		{"find -exec sed -i: not followed (known gap)", `find . -name '*.py' -exec sed -i 's/a/b/' {} +`, "", map[string]int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cwd := tc.cwd
			if cwd == "" {
				cwd = "/p"
			}
			got := shellCharges(tc.command, cwd, shellProject())
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%q (-want +got):\n%s", tc.command, d)
			}
		})
	}
	t.Logf("%d commands", len(tests))
}

func bashEvent(command, id string) Event {
	raw, _ := json.Marshal(BashInput{Command: command})
	return Event{Name: PreToolUse, SessionID: "s", ToolUseID: id, Cwd: "/p", Tool: DecodeTool("Bash", raw)}
}

func TestShellDecide(t *testing.T) {
	heredoc40 := "cat > src/x.py <<'EOF'\n" + assigns("x", 40) + "EOF"
	tests := []struct {
		name     string
		command  string
		since    int
		cfg      config.Config
		want     Decision
		rule     string
		since2   int // SinceDelegation after
		snapshot bool
	}{
		{name: "40-line heredoc denied", command: heredoc40, want: Deny, rule: RuleShellWrites},
		{name: "small echo allowed and charged", command: "echo 'a = 1' > src/f.py", since: 10, since2: 11},
		{name: "measured: allowed, charged", command: heredoc40, cfg: config.Config{Rules: config.Rules{ShellWrites: config.Measure}}, since2: 40},
		{name: "off: nothing", command: heredoc40, cfg: config.Config{Rules: config.Rules{ShellWrites: config.Off}}},
		{name: "test file over 10 lines: rule 1", command: "cat > tests/test_x.py <<'EOF'\n" + assigns("t", 12) + "EOF", want: Deny, rule: RuleTests},
		{name: "small sed -i is exempt", command: "sed -i 's/f_0/g_0/' src/a.py", since: 29, since2: 29},
		{name: "big sed -i is charged", command: "sed -i 's/return x/return y/' src/a.py", since: 5, since2: 10},
		{name: "after the fact: snapshot, no charge yet", command: `python3 -c "open('src/x.py','w').write('a = 1')"`, since: 5, since2: 5, snapshot: true},
		{name: "after the fact with a spent budget: denied", command: `python3 -c "open('src/x.py','w').write('a = 1')"`, since: 30, since2: 30, want: Deny, rule: RuleShellWrites},
		{name: "read-only: no opinion", command: "cat src/a.py | wc -l", since: 30, since2: 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := budgets.Fresh("s")
			st.SinceDelegation = tc.since
			v, next := Decide(bashEvent(tc.command, "tu1"), st, Env{Config: tc.cfg, Project: "/p", Files: shellProject()})
			if v.Decision != tc.want || v.Rule != tc.rule {
				t.Fatalf("verdict %v %q, want %v %q\n%s", v.Decision, v.Rule, tc.want, tc.rule, v.Reason)
			}
			if next.SinceDelegation != tc.since2 {
				t.Errorf("since_delegation %d, want %d", next.SinceDelegation, tc.since2)
			}
			if got := len(next.Snapshots["tu1"]) > 0; got != tc.snapshot {
				t.Errorf("snapshot %v, want %v", got, tc.snapshot)
			}
			if v.Decision == Deny && !strings.Contains(v.Reason, deleguerTool) {
				t.Errorf("deny without a ready deleguer call:\n%s", v.Reason)
			}
		})
	}
}

func TestShellDenyMessage(t *testing.T) {
	st := budgets.Fresh("s")
	v, _ := Decide(bashEvent("cat > src/x.py <<'EOF'\n"+assigns("x", 40)+"EOF", "tu1"), st, Env{Project: "/p", Files: shellProject()})
	for _, want := range []string{
		"miam rule 4 (shell writes): 40 code lines since your last delegation; budget 30.",
		"40 code lines to src/x.py (redirection)",
		`"sortie":"src/x.py"`,
		`"fichiers": ["src/x.py"], "lignes": 40`,
	} {
		if !strings.Contains(v.Reason, want) {
			t.Errorf("reason lacks %q:\n%s", want, v.Reason)
		}
	}
}

// TestShellSettle: a command counted after it ran is charged at PostToolUse
// (and at PostToolUseFailure: a failed command may have written) from the
// file on disk against the snapshot.
func TestShellSettle(t *testing.T) {
	files := shellProject()
	env := Env{Project: "/p", Files: files}
	_, st := Decide(bashEvent(`python3 -c "open('src/a.py','a').write('z = 1\n')"`, "tu1"), budgets.Fresh("s"), env)
	if len(st.Snapshots["tu1"]) != 1 {
		t.Fatalf("no snapshot: %+v", st.Snapshots)
	}
	files["src/a.py"] = &fstest.MapFile{Data: []byte(aPy + assigns("z", 6))}
	for _, name := range []EventName{PostToolUse, PostToolUseFailure} {
		ev := bashEvent("", "tu1")
		ev.Name = name
		_, got := Decide(ev, st, env)
		if got.SinceDelegation != 6 || got.ThisTurn.Written.Code != 6 || got.Snapshots != nil {
			t.Errorf("%s: since %d, written %+v, snapshots %v; want 6, 6, none", name, got.SinceDelegation, got.ThisTurn.Written, got.Snapshots)
		}
	}
}

// FuzzShellPlan: the command parser never panics, and garbage never yields
// a negative charge, nor a charge on a file no command named.
func FuzzShellPlan(f *testing.F) {
	for _, s := range []string{
		"cat > src/x.py <<'EOF'\na = 1\nEOF", "echo x > f.py", "sed -i 's/a/b/g' src/a.py", "bash -c 'eval \"echo 1 > a.py\"'",
		"(cd src && tee -a x.py <<< 'a')", "git apply p.diff", "cp -r src lib", "python3 -c \"open('x.py','w')\"",
		"for x in; do cat > v.py <<EOF\n", "$(", "'unterminated", "cat <<EOF\n", "sed -i 's/\\(a\\)/\\1/' src/a.py",
		"printf '%s%s\\n' a", "sudo -u", "timeout", "env A=1", "eval eval eval eval eval eval eval eval eval 'echo 1 > a.py'",
	} {
		f.Add(s)
	}
	files := shellProject()
	env := Env{Project: "/p", Files: files}
	f.Fuzz(func(t *testing.T, command string) {
		for _, tg := range shellTargets(planShell(command, "/p", env), env) {
			if tg.c.added.Code < 0 || tg.c.added.Doc < 0 {
				t.Fatalf("negative charge %+v for %q", tg.c.added, command)
			}
		}
		v, st := Decide(bashEvent(command, "tu"), budgets.Fresh("s"), env)
		if v.Decision == Allow || st.SinceDelegation < 0 {
			t.Fatalf("verdict %v, since %d for %q", v.Decision, st.SinceDelegation, command)
		}
	})
}

// BenchmarkDecideBashHeredoc30 is the decision on a PreToolUse Bash with a
// 30-line here-doc into a new Python file (allowed) and over budget
// (denied, with the ready deleguer call).
func BenchmarkDecideBashHeredoc30(b *testing.B) {
	ev := bashEvent("cat > src/x.py <<'EOF'\n"+assigns("x", 30)+"EOF", "tu1")
	env := Env{Project: "/p", Files: shellProject()}
	for _, bc := range []struct {
		name  string
		since int
		want  Decision
	}{{"allowed", 0, None}, {"denied", 10, Deny}} {
		b.Run(bc.name, func(b *testing.B) {
			st := budgets.Fresh("s")
			st.SinceDelegation = bc.since
			if v, _ := Decide(ev, st, env); v.Decision != bc.want {
				b.Fatalf("decision %v, want %v", v.Decision, bc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				Decide(ev, st, env)
			}
		})
	}
}
