package delegate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"miam/controls"
	"miam/delegate"
	"miam/delegate/engines/local"
	"miam/delegate/wire"
	"miam/fixtures/fakeollama"
)

const inventoryPy = `"""Stock kept by the shop."""


class Inventory:
    """Quantities by item name."""

    def __init__(self):
        """Start empty."""
        self.items = {}

    def get(self, name):
        """Return the quantity of name, 0 when unknown."""
        return self.items.get(name, 0)
`

// reportPy uses the inventory; method is the one it calls.
func reportPy(method string) string {
	return "```python\n" + `"""Stock reports."""

from shop.inventory import Inventory


def report(inv: Inventory, names):
    """Return one line per name with its quantity."""
    return "\n".join(f"{n}: {inv.` + method + `(n)}" for n in names)
` + "```\n"
}

// TestDaemonFullControlsRepairInventedMethod is issue 4's end-to-end proof:
// with the full default controls of a code request, an answer calling a
// method the joined class does not have fails symboles, the failure goes
// back to the model, and the fixed answer is valide and written.
func TestDaemonFullControlsRepairInventedMethod(t *testing.T) {
	o := fakeollama.New(fakeollama.Config{Installed: []string{"qwen-test"}, Loaded: []string{"qwen-test"},
		Replies: []fakeollama.Reply{fakeollama.Answer(reportPy("get_item")), fakeollama.Answer(reportPy("get"))}})
	t.Cleanup(o.Close)
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, "shop"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "shop", "inventory.py"), []byte(inventoryPy), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := delegate.Open(delegate.Config{StateDir: t.TempDir(),
		Engines: []delegate.Engine{&local.Engine{Host: o.URL(), Model: "qwen-test"}},
		Checker: &controls.Pipeline{Registry: controls.Full(), Load: delegate.LoadFiles}, CallWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })

	a, err := d.Submit(context.Background(), "s", project, wire.Request{
		Consigne: "Write report(inv, names) returning one line per name with its quantity.",
		Fichiers: []string{"shop/inventory.py"}, Sortie: "shop/report.py", Attendus: []string{"report"}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Fin != wire.Valide || a.Essais != 2 {
		t.Fatalf("answer: fin %q after %d tries, want valide after 2: %+v", a.Fin, a.Essais, a)
	}
	ran := map[string]bool{}
	for _, c := range a.Controles {
		ran[c.Nom] = true
		if !c.OK {
			t.Errorf("valide answer with failed control %+v", c)
		}
	}
	for _, n := range []string{"complet", "syntaxe", "symboles", "docstrings", "lint"} {
		if !ran[n] {
			t.Errorf("control %s did not run on a code request (ran %v)", n, ran)
		}
	}
	reqs := o.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	retry := reqs[1].LastUser()
	if !strings.Contains(retry, "symboles") || !strings.Contains(retry, "get_item") {
		t.Errorf("the retry prompt does not carry the symboles failure:\n%s", retry)
	}
	got, err := os.ReadFile(filepath.Join(project, "shop", "report.py"))
	if err != nil || !strings.Contains(string(got), "inv.get(n)") || strings.Contains(string(got), "```") {
		t.Errorf("shop/report.py = %q (%v), want the fixed, unfenced answer", got, err)
	}
}
