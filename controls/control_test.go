package controls

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func TestDefaults(t *testing.T) {
	code := []string{"complet", "syntaxe", "symboles", "docstrings", "lint"}
	tests := []struct {
		typ  string
		want []string
	}{
		{"", code},
		{"code", code},
		{"tests", code},
		{"extraction", []string{"complet", "citations"}},
		{"resume", []string{"complet", "citations"}},
		{"traduction", []string{"complet", "traduction"}},
		{"texte", []string{"complet"}},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Defaults(tt.typ)); diff != "" {
				t.Errorf("Defaults(%q) mismatch (-want +got):\n%s", tt.typ, diff)
			}
		})
	}
}

func TestSelected(t *testing.T) {
	none := []string{}
	some := []string{"syntaxe"}
	tests := []struct {
		name string
		req  wire.Request
		want []string
	}{
		{name: "defaults of code", req: wire.Request{}, want: []string{"complet", "syntaxe", "symboles", "docstrings", "lint"}},
		{name: "commande added when given", req: wire.Request{Commande: "pytest"}, want: []string{"complet", "syntaxe", "symboles", "docstrings", "lint", "commande"}},
		{name: "json extraction adds syntaxe", req: wire.Request{Type: "extraction", Format: "json"}, want: []string{"complet", "citations", "syntaxe"}},
		{name: "explicit list", req: wire.Request{Controle: &some, Commande: "pytest"}, want: []string{"syntaxe"}},
		{name: "empty list disables", req: wire.Request{Controle: &none}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Selected(tt.req)); diff != "" {
				t.Errorf("Selected mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuiltinKnowsEverySpecControl(t *testing.T) {
	r := Builtin()
	for _, name := range []string{"syntaxe", "complet", "symboles", "docstrings", "lint", "commande", "perimetre", "citations", "traduction"} {
		c, ok := r.Lookup(name)
		if !ok {
			t.Errorf("Builtin lacks %q", name)
			continue
		}
		if c.Name() != name {
			t.Errorf("Builtin[%q].Name() = %q", name, c.Name())
		}
	}
	got := Pending{Nom: "lint"}.Check(context.Background(), Input{})
	if diff := cmp.Diff(wire.Control{Nom: "lint", OK: true, Message: "not implemented yet: skipped"}, got); diff != "" {
		t.Errorf("Pending mismatch (-want +got):\n%s", diff)
	}
}

func TestRegistry(t *testing.T) {
	if _, err := NewRegistry(Complet{}, Complet{}); err == nil {
		t.Error("NewRegistry accepted a duplicate")
	}
	r, err := NewRegistry(Complet{}, Syntaxe{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := r.Select([]string{"syntaxe", "complet", "syntaxe"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name())
	}
	if diff := cmp.Diff([]string{"syntaxe", "complet"}, names); diff != "" {
		t.Errorf("Select mismatch (-want +got):\n%s", diff)
	}
	if _, err := r.Select([]string{"lint"}); err == nil {
		t.Error("Select accepted a name the registry lacks")
	}
}

// fake is a control with a fixed outcome that records its runs.
type fake struct {
	name  string
	cost  Cost
	ok    bool
	panic bool
	ran   *[]string
}

func (f fake) Name() string { return f.name }
func (f fake) Cost() Cost   { return f.cost }
func (f fake) Check(context.Context, Input) wire.Control {
	*f.ran = append(*f.ran, f.name)
	if f.panic {
		panic("boom")
	}
	msg := ""
	if !f.ok {
		msg = f.name + " failed"
	}
	return wire.Control{Nom: "ignored: Run names the result", OK: f.ok, Message: msg}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name        string
		controls    func(ran *[]string) []Control
		cancel      bool
		wantRan     []string
		wantResults []wire.Control
		wantOK      bool
	}{
		{
			name: "cheapest first, all pass",
			controls: func(ran *[]string) []Control {
				return []Control{
					fake{name: "commande", cost: CostSandbox, ok: true, ran: ran},
					fake{name: "lint", cost: CostTool, ok: true, ran: ran},
					fake{name: "complet", ok: true, ran: ran},
				}
			},
			wantRan:     []string{"complet", "lint", "commande"},
			wantResults: []wire.Control{{Nom: "complet", OK: true}, {Nom: "lint", OK: true}, {Nom: "commande", OK: true}},
			wantOK:      true,
		},
		{
			name: "every cheap failure reported, costlier tiers skipped",
			controls: func(ran *[]string) []Control {
				return []Control{
					fake{name: "complet", ok: false, ran: ran},
					fake{name: "lint", cost: CostTool, ok: true, ran: ran},
					fake{name: "syntaxe", ok: false, ran: ran},
					fake{name: "docstrings", ok: true, ran: ran},
				}
			},
			wantRan: []string{"complet", "syntaxe", "docstrings"},
			wantResults: []wire.Control{
				{Nom: "complet", Message: "complet failed"},
				{Nom: "syntaxe", Message: "syntaxe failed"},
				{Nom: "docstrings", OK: true},
			},
		},
		{
			name: "a panic fails its control only",
			controls: func(ran *[]string) []Control {
				return []Control{
					fake{name: "complet", panic: true, ran: ran},
					fake{name: "syntaxe", ok: true, ran: ran},
				}
			},
			wantRan: []string{"complet", "syntaxe"},
			wantResults: []wire.Control{
				{Nom: "complet", Message: "internal error in the complet control: boom"},
				{Nom: "syntaxe", OK: true},
			},
		},
		{
			name: "cancelled context runs nothing",
			controls: func(ran *[]string) []Control {
				return []Control{fake{name: "complet", ok: true, ran: ran}}
			},
			cancel: true,
		},
		{
			name:     "no controls pass",
			controls: func(*[]string) []Control { return nil },
			wantOK:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			var ran []string
			results, ok := Run(ctx, tt.controls(&ran), Input{})
			if diff := cmp.Diff(tt.wantRan, ran); diff != "" {
				t.Errorf("ran mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantResults, results); diff != "" {
				t.Errorf("results mismatch (-want +got):\n%s", diff)
			}
			if ok != tt.wantOK {
				t.Errorf("ok = %v, want %v", ok, tt.wantOK)
			}
		})
	}
}

func TestPipelineCheck(t *testing.T) {
	skipped := "not implemented yet: skipped"
	var loaded []string
	load := func(_ context.Context, project string, paths []string) (map[string][]byte, error) {
		if loaded == nil { // the joined files; later calls look for dependency manifests
			loaded = append([]string{project}, paths...)
		}
		return map[string][]byte{"src/util.py": []byte("def helper(): ...\n")}, nil
	}
	tests := []struct {
		name         string
		req          wire.Request
		raw          string
		load         Loader
		wantArtefact string
		wantResults  []wire.Control
		wantOK       bool
		wantLoaded   []string
	}{
		{
			name:         "fenced code with prose passes, artefact cleaned",
			req:          wire.Request{Consigne: "x", Sortie: "src/x.py", Fichiers: []string{"src/util.py:1-10", "src/util.py"}, Attendus: []string{"f"}},
			raw:          "Here is the function:\n```python\ndef f(x):\n    return x + 1\n```\nHope this helps!",
			load:         load,
			wantArtefact: "def f(x):\n    return x + 1\n",
			wantResults: []wire.Control{
				{Nom: "complet", OK: true}, {Nom: "syntaxe", OK: true},
				{Nom: "symboles", OK: true, Message: skipped}, {Nom: "docstrings", OK: true, Message: skipped},
				{Nom: "lint", OK: true, Message: skipped},
			},
			wantOK:     true,
			wantLoaded: []string{"/proj", "src/util.py"},
		},
		{
			name:         "truncated answer fails before lint",
			req:          wire.Request{Consigne: "x", Sortie: "src/x.py"},
			raw:          "```python\ndef f(x):\n    return (x +",
			wantArtefact: "def f(x):\n    return (x +\n",
			wantResults: []wire.Control{
				{Nom: "complet", Message: "truncated: the answer stops inside a code block; send the whole artefact"},
				{Nom: "syntaxe", Message: "line 2:5: syntax error near `return (x +`"},
				{Nom: "symboles", OK: true, Message: skipped}, {Nom: "docstrings", OK: true, Message: skipped},
			},
		},
		{
			name:         "controls disabled",
			req:          wire.Request{Consigne: "x", Controle: &[]string{}},
			raw:          "anything",
			wantArtefact: "anything\n",
			wantOK:       true,
		},
		{
			name:         "unknown control",
			req:          wire.Request{Consigne: "x", Controle: &[]string{"foo"}},
			raw:          "anything",
			wantArtefact: "anything",
			wantResults:  []wire.Control{{Nom: "controle", Message: `controls: unknown control "foo"`}},
		},
		{
			name: "unreadable joined files",
			req:  wire.Request{Consigne: "x", Fichiers: []string{"gone.py"}},
			raw:  "x = 1",
			load: func(context.Context, string, []string) (map[string][]byte, error) {
				return nil, errors.New("gone.py: no such file")
			},
			wantArtefact: "x = 1",
			wantResults:  []wire.Control{{Nom: "fichiers", Message: "cannot read the joined files: gone.py: no such file"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loaded = nil
			artefact, results, ok := Pipeline{Load: tt.load}.Check(context.Background(), "/proj", tt.req, tt.raw)
			if diff := cmp.Diff(tt.wantArtefact, artefact); diff != "" {
				t.Errorf("artefact mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantResults, results); diff != "" {
				t.Errorf("results mismatch (-want +got):\n%s", diff)
			}
			if ok != tt.wantOK {
				t.Errorf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.wantLoaded, loaded); diff != "" {
				t.Errorf("loaded mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzControls(f *testing.F) {
	f.Add("src/x.py", "json", "```python\ndef f(:\n```", `{"type":"object","required":["a"]}`)
	f.Add("a.go", "", "package p\nfunc F() {", "")
	f.Add("", "json", "{\"a\": [1, {\"b\"", `{"items": {"enum": [1]}}`)
	f.Add("a.rs", "texte", "Le texte,", "")
	f.Fuzz(func(t *testing.T, sortie, format, raw, schema string) {
		req := wire.Request{Consigne: "x", Sortie: sortie, Format: format, Attendus: []string{"f", "T.m"}, NTests: 1}
		if schema != "" {
			req.Schema = []byte(schema)
		}
		_, results, ok := Pipeline{}.Check(context.Background(), "/p", req, raw)
		if ok && slices.ContainsFunc(results, func(c wire.Control) bool { return !c.OK }) {
			t.Fatalf("ok with a failed control: %+v", results)
		}
		for _, c := range results {
			if !c.OK && c.Message == "" {
				t.Fatalf("failure without a message: %+v", c)
			}
		}
	})
}
