package controls

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
	"miam/sandbox"
)

// pyProject is a committed Python project whose test checks calc.add; the
// committed calc.py is a stub that fails the test.
func pyProject(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"calc.py":      "def add(a, b):\n    raise NotImplementedError\n",
		"test_calc.py": "import unittest\nimport calc\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		if _, err := sandbox.Git(t.Context(), dir, args...); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const goodCalc = "def add(a, b):\n    return a + b\n"

func commandeInput(dir, cmd, code string) Input {
	return Input{
		Request: wire.Request{Consigne: "Write add.", Sortie: "calc.py", Commande: cmd},
		Code:    code,
		Dir:     dir,
	}
}

func TestCommande(t *testing.T) {
	runner := new(sandbox.Runner)
	if _, ok := runner.Capabilities(t.Context()).Best(); !ok {
		// Without a backend the control must say so rather than run.
		got := Commande{Runner: runner, Commandes: []string{"python3"}}.Check(t.Context(), commandeInput(pyProject(t, nil), "python3 -m unittest -q", goodCalc))
		if got.OK || !strings.Contains(got.Message, "no isolation") {
			t.Fatalf("no backend here, yet: %+v", got)
		}
		return
	}
	dir := pyProject(t, nil)
	tests := []struct {
		name    string
		c       Commande
		in      Input
		wantOK  bool
		want    []string // substrings of the message
		wantNot []string
	}{
		{
			name:   "passes with the answer",
			c:      Commande{Commandes: []string{"python3"}},
			in:     commandeInput(dir, "python3 -m unittest -q", goodCalc),
			wantOK: true,
			want:   []string{"passed in the sandbox (bwrap"},
		},
		{
			name:    "fails with the failing test's output, clone path hidden",
			c:       Commande{Commandes: []string{"python3"}},
			in:      commandeInput(dir, "python3 -m unittest -q", "def add(a, b):\n    return a - b\n"),
			want:    []string{"failed (exit 1)", "FAIL: test_add", "AssertionError: -1 != 5", "test_calc.py"},
			wantNot: []string{"miam-sandbox-", "/tmp/"},
		},
		{
			name: "not allowed",
			c:    Commande{Commandes: []string{"pytest"}},
			in:   commandeInput(dir, "python3 -m unittest", goodCalc),
			want: []string{"not in sandbox.commandes"},
		},
		{
			name: "zero Commande allows nothing",
			in:   commandeInput(dir, "python3 -m unittest", goodCalc),
			want: []string{"not in sandbox.commandes"},
		},
		{
			name: "shell refused",
			c:    Commande{Commandes: []string{"python3"}},
			in:   commandeInput(dir, "python3 -m unittest; curl x", goodCalc),
			want: []string{"shell character"},
		},
		{
			name: "no sortie",
			c:    Commande{Commandes: []string{"python3"}},
			in:   Input{Request: wire.Request{Commande: "python3 -m unittest"}, Dir: dir},
			want: []string{"needs `sortie`"},
		},
		{
			name:   "rouge_dabord: red without the answer, green with it",
			c:      Commande{Commandes: []string{"python3"}, RougeDabord: true},
			in:     commandeInput(dir, "python3 -m unittest -q", goodCalc),
			wantOK: true,
			want:   []string{"failed without the answer"},
		},
		{
			name: "rouge_dabord: a test that passes without the answer is rejected",
			c:    Commande{Commandes: []string{"python3"}, RougeDabord: true},
			in:   commandeInput(pyProject(t, map[string]string{"test_calc.py": "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_nothing(self):\n        self.assertTrue(True)\n"}), "python3 -m unittest -q", goodCalc),
			want: []string{"already passes without your answer"},
		},
		{
			name: "timeout",
			c:    Commande{Commandes: []string{"python3"}, Policy: sandbox.Policy{Timeout: 1e9}},
			in:   commandeInput(dir, "python3 -m unittest -q", "import time\ntime.sleep(60)\n"),
			want: []string{"killed after"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.Runner = runner
			got := tt.c.Check(t.Context(), tt.in)
			if got.OK != tt.wantOK || got.Nom != NameCommande {
				t.Errorf("OK=%v Nom=%q, want OK=%v: %s", got.OK, got.Nom, tt.wantOK, got.Message)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message lacks %q:\n%s", w, got.Message)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got.Message, w) {
					t.Errorf("message contains %q:\n%s", w, got.Message)
				}
			}
		})
	}
	// The user's repository is untouched by every run.
	if out, err := sandbox.Git(t.Context(), dir, "status", "--porcelain"); err != nil || len(out) != 0 {
		t.Errorf("the project changed: %q %v", out, err)
	}
}

// A refused command reaches neither the clone nor the backend probes.
func TestCommandeRefusalSpawnsNothing(t *testing.T) {
	probed := false
	r := &sandbox.Runner{Detect: func(context.Context) sandbox.Capabilities { probed = true; return sandbox.Capabilities{} }}
	got := Commande{Runner: r, Commandes: []string{"python3"}}.Check(t.Context(), commandeInput("/nonexistent", "curl http://x", goodCalc))
	if got.OK || probed {
		t.Errorf("OK=%v probed=%v: %s", got.OK, probed, got.Message)
	}
}

// With no backend (injected) the control fails saying so, unless the user
// opted out, and then it runs with a warning.
func TestCommandeNoIsolation(t *testing.T) {
	none := func(context.Context) sandbox.Capabilities {
		return sandbox.Capabilities{Probes: []sandbox.Probe{{Backend: sandbox.BackendBwrap, Reason: "not found at /usr/bin/bwrap"}}}
	}
	dir := pyProject(t, nil)
	in := commandeInput(dir, "python3 -m unittest -q", goodCalc)
	got := Commande{Runner: &sandbox.Runner{Detect: none}, Commandes: []string{"python3"}}.Check(t.Context(), in)
	if got.OK || !strings.Contains(got.Message, "no isolation backend") || !strings.Contains(got.Message, "miam doctor") {
		t.Errorf("%+v", got)
	}
	var warned []string
	got = Commande{Runner: &sandbox.Runner{Detect: none, Warn: func(m string) { warned = append(warned, m) }}, Commandes: []string{"python3"}, AllowUnsandboxed: true}.Check(t.Context(), in)
	if !got.OK || !strings.Contains(got.Message, "(none,") || !strings.Contains(got.Message, "WITHOUT isolation") || len(warned) != 1 {
		t.Errorf("%+v warned=%q", got, warned)
	}
}

func TestTrimOutput(t *testing.T) {
	long := strings.Repeat("x", 5000)
	tests := []struct {
		name           string
		stdout, stderr string
		clone          string
		want           string
	}{
		{
			name:   "pytest failures section",
			stdout: "===== test session starts =====\ncollected 3 items\n\ntest_a.py ..F\n\n===== FAILURES =====\n___ test_x ___\n\n    assert f() == 2\nE   assert 1 == 2\n\n/tmp/c/clone/test_a.py:3: AssertionError\n===== 1 failed, 2 passed =====\n",
			clone:  "/tmp/c/clone",
			want:   "===== FAILURES =====\n___ test_x ___\n\n    assert f() == 2\nE   assert 1 == 2\n\ntest_a.py:3: AssertionError\n===== 1 failed, 2 passed =====",
		},
		{
			name:   "go test from the first failure, colours and bad UTF-8 cleaned",
			stdout: "=== RUN   TestA\n--- PASS: TestA\n=== RUN   TestB\n    b_test.go:9: \x1b[31mgot 1\x1b[0m \xff\n--- FAIL: TestB\nFAIL\n",
			want:   "b_test.go:9: got 1 ?\n--- FAIL: TestB\nFAIL",
		},
		{
			name:   "no known report: everything, stderr after stdout",
			stdout: "out",
			stderr: "Traceback: boom",
			want:   "out\nTraceback: boom",
		},
		{
			name:   "long output keeps head and tail",
			stdout: "--- FAIL: T\n" + long + "END",
			want:   ("--- FAIL: T\n" + long)[:2000] + "\n[…]\n" + (long + "END")[len(long)+3-1000:],
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TrimOutput([]byte(tt.stdout), []byte(tt.stderr), tt.clone)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The time of a whole commande control on a small Python project (clone,
// apply, run unittest in bwrap, collect):
//
//	go test -run '^$' -bench Commande -benchtime 20x ./controls/
func BenchmarkCommande(b *testing.B) {
	dir := b.TempDir()
	for name, body := range map[string]string{
		"calc.py":      "def add(a, b):\n    raise NotImplementedError\n",
		"test_calc.py": "import unittest\nimport calc\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n",
	} {
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		if _, err := sandbox.Git(b.Context(), dir, args...); err != nil {
			b.Fatal(err)
		}
	}
	c := Commande{Runner: new(sandbox.Runner), Commandes: []string{"python3"}}
	in := commandeInput(dir, "python3 -m unittest -q", goodCalc)
	for _, rouge := range []bool{false, true} {
		c.RougeDabord = rouge
		b.Run(fmt.Sprintf("rouge_dabord=%v", rouge), func(b *testing.B) {
			for b.Loop() {
				if got := c.Check(b.Context(), in); !got.OK {
					b.Fatal(got.Message)
				}
			}
		})
	}
}

func TestWithCommande(t *testing.T) {
	full := Full()
	r := WithCommande(full, Commande{Commandes: []string{"pytest"}})
	got, _ := r.Lookup(NameCommande)
	if c, ok := got.(Commande); !ok || len(c.Commandes) != 1 {
		t.Errorf("commande = %#v", got)
	}
	if c, _ := full.Lookup(NameCommande); len(c.(Commande).Commandes) != 0 {
		t.Error("WithCommande changed the registry it was given")
	}
	if _, ok := r.Lookup(NameLint); !ok {
		t.Error("WithCommande dropped the other controls")
	}
}
