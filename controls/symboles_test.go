package controls

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func TestSymboles(t *testing.T) {
	shop := map[string][]byte{"shop/cart.py": []byte("class Cart:\n    def __init__(self):\n        self.lines = []\n\n    def add(self, sku):\n        self.lines.append(sku)\n\n\ndef empty():\n    return Cart()\n")}
	tests := []struct {
		name      string
		req       wire.Request
		code      string
		files     map[string][]byte
		manifests map[string][]byte
		want      wire.Control
	}{
		{name: "python clean", req: wire.Request{Sortie: "a.py"}, code: "import os\n\nprint(os.getcwd(), len([]))\n",
			want: wire.Control{Nom: "symboles", OK: true}},
		{name: "python stdlib invented", req: wire.Request{Sortie: "a.py"}, code: "import os\n\nos.getcwdir()\n",
			want: wire.Control{Nom: "symboles", Message: "line 3: `os.getcwdir` does not exist: the standard module os has no `getcwdir`"}},
		{name: "python alias of a submodule", req: wire.Request{Sortie: "a.py"}, code: "import xml.etree.ElementTree as ET\n\nET.fromstring('<a/>')\nET.parse_string('x')\n",
			want: wire.Control{Nom: "symboles", Message: "line 4: `ET.parse_string` does not exist: the standard module xml.etree.ElementTree has no `parse_string`"}},
		{name: "python method of a joined class", req: wire.Request{Sortie: "shop/use.py"}, files: shop,
			code: "from shop.cart import Cart, empty\n\n\ndef f():\n    c = empty()\n    d = Cart()\n    d.add('x')\n    d.remove('x')\n    return c.anything\n",
			want: wire.Control{Nom: "symboles", Message: "line 8: `d.remove` does not exist: class Cart (shop/cart.py) has no attribute or method `remove`"}},
		{name: "python reassigned variable is not judged", req: wire.Request{Sortie: "shop/use.py"}, files: shop,
			code: "from shop.cart import Cart\n\nd = Cart()\nd = open('x')\nd.read()\n", want: wire.Control{Nom: "symboles", OK: true}},
		{name: "python unknown base is not judged", req: wire.Request{Sortie: "m.py"},
			code: "class E(Exception):\n    def f(self):\n        return self.args\n", want: wire.Control{Nom: "symboles", OK: true}},
		{name: "python third party without manifest", req: wire.Request{Sortie: "m.py"}, code: "import numpy as np\n\nnp.zeros(3)\n",
			want: wire.Control{Nom: "symboles", OK: true}},
		{name: "python star import disables bare calls", req: wire.Request{Sortie: "m.py"}, code: "from os.path import *\n\nfoo()\n",
			want: wire.Control{Nom: "symboles", OK: true}},
		{name: "go clean", req: wire.Request{Sortie: "a.go"}, code: "package a\n\nimport (\n\tstr \"strings\"\n\t\"net/http\"\n)\n\nvar _ = str.Cut\nvar _ http.Handler\n",
			want: wire.Control{Nom: "symboles", OK: true}},
		{name: "go invented type", req: wire.Request{Sortie: "a.go"}, code: "package a\n\nimport \"net/http\"\n\nvar _ http.Router\n",
			want: wire.Control{Nom: "symboles", Message: "line 5: `http.Router` does not exist: package net/http (standard library) has no exported `Router`"}},
		{name: "go variable shadows package", req: wire.Request{Sortie: "a.go"}, code: "package a\n\nimport \"net/url\"\n\nfunc f(url *url.URL) string { return url.Hostname() }\n",
			want: wire.Control{Nom: "symboles", OK: true}},
		{name: "js require of joined module", req: wire.Request{Sortie: "src/b.js"}, files: map[string][]byte{"src/a.js": []byte("module.exports = { one, two };\n")},
			code: "const { one, three } = require('./a');\n", want: wire.Control{Nom: "symboles", Message: "line 1: `three` is not exported by src/a.js: import a name it exports"}},
		{name: "rust skipped", req: wire.Request{Sortie: "a.rs"}, code: "fn main() {}\n",
			want: wire.Control{Nom: "symboles", OK: true, Message: "symbols are checked in Python, Go, JavaScript and TypeScript only: skipped"}},
		{name: "text skipped", req: wire.Request{Type: "resume"}, code: "Some text.",
			want: wire.Control{Nom: "symboles", OK: true, Message: "not code: skipped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := NewInput(tt.req, tt.code, tt.files)
			in.Manifests = tt.manifests
			got := Symboles{}.Check(context.Background(), in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSymbolesLimitsItsMessage(t *testing.T) {
	var b strings.Builder
	b.WriteString("import os\n")
	for i := range 10 {
		b.WriteString("os.nope" + string(rune('a'+i)) + "()\n")
	}
	got := Symboles{}.Check(context.Background(), NewInput(wire.Request{Sortie: "a.py"}, b.String(), nil))
	if got.OK || !strings.HasSuffix(got.Message, "and 4 more") || len(got.Message) > maxMessage+3 {
		t.Errorf("got %+v", got)
	}
}
