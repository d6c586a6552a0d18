package controls

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func TestFullImplementsAllButCommande(t *testing.T) {
	r := Full()
	for _, name := range []string{"syntaxe", "complet", "symboles", "docstrings", "lint", "commande", "perimetre", "citations", "traduction"} {
		c, ok := r.Lookup(name)
		if !ok {
			t.Fatalf("Full lacks %q", name)
		}
		_, pending := c.(Pending)
		if pending {
			t.Errorf("Full()[%q] pending = %v", name, pending)
		}
	}
	if c, _ := r.Lookup("lint"); c.Cost() != CostTool {
		t.Errorf("lint costs %v, want CostTool", c.Cost())
	}
	// Builtin is unchanged: symboles is still pending there.
	c, _ := Builtin().Lookup("symboles")
	if diff := cmp.Diff(wire.Control{Nom: "symboles", OK: true, Message: "not implemented yet: skipped"}, c.Check(context.Background(), Input{})); diff != "" {
		t.Errorf("Builtin changed (-want +got):\n%s", diff)
	}
}

// TestFullRetryLoop is the shape of the daemon's loop: an answer calling an
// invented method fails symboles with a message naming it; the fixed
// answer is valide.
func TestFullRetryLoop(t *testing.T) {
	files := map[string][]byte{"shop/cart.py": []byte("class Cart:\n    \"\"\"A cart.\"\"\"\n\n    def __init__(self):\n        self.lines = []\n\n    def add(self, sku):\n        \"\"\"Add sku.\"\"\"\n        self.lines.append(sku)\n")}
	req := wire.Request{Consigne: "Write fill(cart, skus).", Sortie: "shop/fill.py", Fichiers: []string{"shop/cart.py"}, Attendus: []string{"fill"}}
	p := Pipeline{Registry: Full(), Load: func(context.Context, string, []string) (map[string][]byte, error) { return files, nil }}
	bad := "```python\n\"\"\"Filling.\"\"\"\n\nfrom shop.cart import Cart\n\n\ndef fill(cart: Cart, skus):\n    \"\"\"Add every sku.\"\"\"\n    for s in skus:\n        cart.add_item(s)\n```\n"
	_, results, ok := p.Check(context.Background(), "", req, bad)
	if ok {
		t.Fatalf("invented method judged valide: %+v", results)
	}
	var msg string
	for _, r := range results {
		if r.Nom == "symboles" {
			msg = r.Message
		}
	}
	if want := "line 9: `cart.add_item` does not exist: class Cart (shop/cart.py) has no attribute or method `add_item`"; msg != want {
		t.Errorf("symboles said %q, want %q", msg, want)
	}
	fixed := "```python\n\"\"\"Filling.\"\"\"\n\nfrom shop.cart import Cart\n\n\ndef fill(cart: Cart, skus):\n    \"\"\"Add every sku.\"\"\"\n    for s in skus:\n        cart.add(s)\n```\n"
	if _, results, ok := p.Check(context.Background(), "", req, fixed); !ok {
		t.Errorf("fixed answer failed: %+v", results)
	}
}
