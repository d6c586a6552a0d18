package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"miam/delegate"
	"miam/delegate/engines/local"
	"miam/delegate/wire"
	"miam/fixtures/fakeollama"
	"miam/hooks/config"
	"miam/sandbox"
)

// calcProject is a committed Python project whose test checks calc.add,
// allowing python3 in its own .miam/config.yaml.
func calcProject(t *testing.T, test string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"calc.py":           "\"\"\"Calculator.\"\"\"\n",
		"test_calc.py":      test,
		".miam/config.yaml": "sandbox:\n  commandes: [python3]\n",
		".gitignore":        ".miam/state/\n",
		"README.md":         "calc\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
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

const testAdd = "import unittest\nimport calc\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n"

// calcAnswer is a documented calc.py whose add applies op.
func calcAnswer(op string) fakeollama.Reply {
	return fakeollama.Answer("```python\n\"\"\"Calculator.\"\"\"\n\n\ndef add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return a " + op + " b\n```\n")
}

func commandeDaemon(t *testing.T, replies ...fakeollama.Reply) (*delegate.Daemon, *fakeollama.Server) {
	t.Helper()
	o := fakeollama.New(fakeollama.Config{Installed: []string{"m"}, Loaded: []string{"m"}, Replies: replies})
	t.Cleanup(o.Close)
	d, err := delegate.Open(delegate.Config{StateDir: t.TempDir(),
		Engines:  []delegate.Engine{&local.Engine{Host: o.URL(), Model: "m"}},
		Checker:  newProjectChecker(config.Config{}, slog.New(slog.DiscardHandler)),
		CallWait: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, o
}

// TestDaemonCommandeRepairsAFailingTest is issue 5's end-to-end proof: the
// first answer fails the project's tests in the sandbox, the failure output
// goes back to the model, the second answer passes: valide.
func TestDaemonCommandeRepairsAFailingTest(t *testing.T) {
	proj := calcProject(t, testAdd)
	d, o := commandeDaemon(t, calcAnswer("-"), calcAnswer("+"))
	a, err := d.Submit(context.Background(), "s", proj, wire.Request{Consigne: "Write add(a, b) in calc.py.",
		Sortie: "calc.py", Attendus: []string{"add"}, Commande: "python3 -m unittest -q"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Fin != wire.Valide || a.Essais != 2 {
		t.Fatalf("fin %q after %d tries, want valide after 2: %+v", a.Fin, a.Essais, a)
	}
	ranCommande := false
	for _, c := range a.Controles {
		ranCommande = ranCommande || (c.Nom == "commande" && c.OK)
	}
	if !ranCommande {
		t.Errorf("commande did not pass on the valid answer: %+v", a.Controles)
	}
	retry := o.Requests()[1].LastUser()
	if !strings.Contains(retry, "commande") || !strings.Contains(retry, "AssertionError") || !strings.Contains(retry, "-1 != 5") {
		t.Errorf("the retry prompt does not carry the failing test's output:\n%s", retry)
	}
	got, _ := os.ReadFile(filepath.Join(proj, "calc.py"))
	if !strings.Contains(string(got), "return a + b") {
		t.Errorf("calc.py = %q", got)
	}
}

// TestDaemonRougeDabordRejectsATestThatProvesNothing: with rouge_dabord, a
// command that passes without the answer fails the control, whatever the
// answer.
func TestDaemonRougeDabordRejectsATestThatProvesNothing(t *testing.T) {
	proj := calcProject(t, "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_nothing(self):\n        self.assertTrue(True)\n")
	d, _ := commandeDaemon(t, calcAnswer("+"), calcAnswer("+"))
	a, err := d.Submit(context.Background(), "s", proj, wire.Request{Consigne: "Write add(a, b) in calc.py.",
		Sortie: "calc.py", Attendus: []string{"add"}, Commande: "python3 -m unittest -q", RougeDabord: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Fin != wire.EchecControle {
		t.Fatalf("fin %q, want echec_controle: %+v", a.Fin, a)
	}
	found := false
	for _, c := range a.Controles {
		found = found || (c.Nom == "commande" && !c.OK && strings.Contains(c.Message, "already passes without your answer"))
	}
	if !found {
		t.Errorf("no rouge_dabord failure in %+v", a.Controles)
	}
	if got, _ := os.ReadFile(filepath.Join(proj, "calc.py")); strings.Contains(string(got), "def add") {
		t.Errorf("an answer was written although it failed: %q", got)
	}
}
