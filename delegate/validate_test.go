package delegate

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func controlList(names ...string) *[]string { return &names }

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		req  wire.Request
		want []FieldError // nil: valid
	}{
		{
			name: "minimal",
			req:  wire.Request{Consigne: "write f"},
		},
		{
			name: "full and valid",
			req: wire.Request{
				Consigne: "write tests for start_all", Langue: "fr", Type: "tests",
				Fichiers: []string{"src/x.py", "src/y.py:10-40"}, Modele: "tests/x.py:613-637",
				Sortie: "tests/test_x.py", Format: "code", Retour: "complet", Moteur: "local",
				Controle: controlList("syntaxe", "complet", "commande"), Attendus: []string{"test_start_all"},
				NTests: 3, Commande: "pytest -k start_all", Perimetre: []string{"tests/test_x.py"}, Essais: 3,
			},
		},
		{
			name: "json with schema",
			req:  wire.Request{Consigne: "extract", Type: "extraction", Format: "json", Schema: json.RawMessage(`{"type":"object"}`)},
		},
		{
			name: "json without schema",
			req:  wire.Request{Consigne: "extract", Format: "json"},
		},
		{
			name: "null schema is no schema",
			req:  wire.Request{Consigne: "x", Schema: json.RawMessage(`null`)},
		},
		{
			name: "controle empty disables controls",
			req:  wire.Request{Consigne: "x", Controle: controlList()},
		},
		{
			name: "commande with default controls",
			req:  wire.Request{Consigne: "x", Commande: "go test ./..."},
		},
		{
			name: "missing consigne",
			req:  wire.Request{},
			want: []FieldError{{"consigne", "required"}},
		},
		{
			name: "bad enums",
			req:  wire.Request{Consigne: "x", Type: "poem", Format: "yaml", Retour: "tout", Moteur: "gpu"},
			want: []FieldError{
				{"type", `must be one of code tests extraction resume traduction texte, not "poem"`},
				{"format", `must be one of code json texte, not "yaml"`},
				{"retour", `must be one of apercu complet, not "tout"`},
				{"moteur", `must be one of auto local api haiku, not "gpu"`},
			},
		},
		{
			name: "unknown control",
			req:  wire.Request{Consigne: "x", Controle: controlList("syntaxe", "foo")},
			want: []FieldError{{"controle[1]", `unknown control "foo": want one of syntaxe complet symboles docstrings lint commande perimetre citations traduction`}},
		},
		{
			name: "numbers out of range",
			req:  wire.Request{Consigne: "x", NTests: -1, Essais: 9},
			want: []FieldError{{"n_tests", "must be at least 0"}, {"essais", "must be at most 5"}},
		},
		{
			name: "empty list items",
			req:  wire.Request{Consigne: "x", Fichiers: []string{"a.py", ""}, Attendus: []string{""}, Perimetre: []string{""}},
			want: []FieldError{{"fichiers[1]", "required"}, {"attendus[0]", "required"}, {"perimetre[0]", "required"}},
		},
		{
			name: "schema without format json",
			req:  wire.Request{Consigne: "x", Schema: json.RawMessage(`{"type":"object"}`)},
			want: []FieldError{{"schema", `needs format "json"`}},
		},
		{
			name: "schema not an object",
			req:  wire.Request{Consigne: "x", Format: "json", Schema: json.RawMessage(`[1]`)},
			want: []FieldError{{"schema", "must be a JSON object (a JSON Schema)"}},
		},
		{
			name: "schema that does not resolve",
			req:  wire.Request{Consigne: "x", Format: "json", Schema: json.RawMessage(`{"type": 5}`)},
			want: []FieldError{{"schema", `not a JSON Schema: invalid value for "type": "5"`}},
		},
		{
			name: "schema with a dangling reference",
			req:  wire.Request{Consigne: "x", Format: "json", Schema: json.RawMessage(`{"$ref": "#/$defs/missing"}`)},
			want: []FieldError{{"schema", `not a usable JSON Schema: JSON Pointer "/$defs/missing": no key "missing" in map`}},
		},
		{
			name: "commande with controls that leave it out",
			req:  wire.Request{Consigne: "x", Commande: "pytest", Controle: controlList("syntaxe")},
			want: []FieldError{{"commande", `is never run: controle must include "commande" or be left out`}},
		},
		{
			name: "bad paths",
			req: wire.Request{
				Consigne: "x",
				Sortie:   "/etc/passwd",
				Modele:   "../other/x.py:1-5",
				Fichiers: []string{"./a.py", "a//b.py", `src\x.py`, "C:/x.py", "."},
				Perimetre: []string{
					"src/../../x", "x.py:1-2", "src/../lib",
				},
			},
			want: []FieldError{
				{"sortie", `"/etc/passwd": must be relative to the project root`},
				{"modele", `"../other/x.py:1-5": escapes the project`},
				{"fichiers[0]", `"./a.py": not clean, write "a.py"`},
				{"fichiers[1]", `"a//b.py": not clean, write "a/b.py"`},
				{"fichiers[2]", `"src\\x.py": use forward slashes`},
				{"fichiers[3]", `"C:/x.py": must be relative to the project root`},
				{"fichiers[4]", `".": must name a file or directory inside the project`},
				{"perimetre[0]", `"src/../../x": escapes the project`},
				{"perimetre[1]", `"x.py:1-2": a line range is not allowed here`},
				{"perimetre[2]", `"src/../lib": not clean, write "lib"`},
			},
		},
		{
			name: "bad ranges",
			req: wire.Request{
				Consigne: "x",
				Modele:   "tests/x.py:40-10",
				Fichiers: []string{"a.py:0-3", "a.py:10-", "a.py:12", "a.py:1-99999999999999999999", "a.py:5-5"},
			},
			want: []FieldError{
				{"modele", `"tests/x.py:40-10": line range must end at or after its start`},
				{"fichiers[0]", `"a.py:0-3": line range must start at line 1 or later`},
				{"fichiers[1]", `"a.py:10-": line range must be START-END with whole numbers`},
				{"fichiers[2]", `"a.py:12": line range must be START-END`},
				{"fichiers[3]", `"a.py:1-99999999999999999999": line range must be START-END with whole numbers`},
			},
		},
		{
			name: "sortie with a range",
			req:  wire.Request{Consigne: "x", Sortie: "x.py:1-3"},
			want: []FieldError{{"sortie", `"x.py:1-3": a line range is not allowed here`}},
		},
		{
			name: "lot errors named by index",
			req: wire.Request{
				Consigne: "two bouts",
				Lot: []wire.Request{
					{Consigne: "first", Sortie: "a.py"},
					{Type: "code", Sortie: "../b.py"},
					{Consigne: "third", Lot: []wire.Request{{Consigne: "nested"}}},
				},
			},
			want: []FieldError{
				{"lot[1].consigne", "required"},
				{"lot[1].sortie", `"../b.py": escapes the project`},
				{"lot[2].lot", "a bout of a lot may not hold a lot itself"},
			},
		},
		{
			name: "all errors at once",
			req:  wire.Request{Type: "poem", Controle: controlList("foo"), Commande: "make", Sortie: "/x"},
			want: []FieldError{
				{"consigne", "required"},
				{"type", `must be one of code tests extraction resume traduction texte, not "poem"`},
				{"controle[0]", `unknown control "foo": want one of syntaxe complet symboles docstrings lint commande perimetre citations traduction`},
				{"commande", `is never run: controle must include "commande" or be left out`},
				{"sortie", `"/x": must be relative to the project root`},
			},
		},
	}
	v := NewValidator()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.Validate(tt.req)
			var got []FieldError
			if err != nil {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("Validate returned %T %v, want *ValidationError", err, err)
				}
				got = ve.Fields
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidationErrorMessage(t *testing.T) {
	err := Validate(wire.Request{Lot: []wire.Request{{}}})
	if err == nil {
		t.Fatal("want an error")
	}
	want := "invalid deleguer request: consigne: required; lot[0].consigne: required"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("Error() mismatch (-want +got):\n%s", diff)
	}
}

func TestValidateDecodedJSON(t *testing.T) {
	var req wire.Request
	raw := `{"consigne":"x","controle":["syntaxe","nope"],"fichiers":["a.py:3-1"],"schema":{"type":"object"}}`
	if err := json.Unmarshal([]byte(raw), &req); err != nil {
		t.Fatal(err)
	}
	err := Validate(req)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate = %v, want *ValidationError", err)
	}
	var fields []string
	for _, f := range ve.Fields {
		fields = append(fields, f.Field)
	}
	if diff := cmp.Diff([]string{"controle[1]", "schema", "fichiers[0]"}, fields); diff != "" {
		t.Errorf("fields mismatch (-want +got):\n%s", diff)
	}
}

func FuzzValidate(f *testing.F) {
	f.Add(`{"consigne":"x"}`)
	f.Add(`{"consigne":"x","type":"poem","controle":["foo"],"commande":"make","sortie":"/x"}`)
	f.Add(`{"lot":[{"lot":[{}]},{"fichiers":["a.py:0-1",""]}]}`)
	f.Add(`{"consigne":"x","schema":{"type":"object"},"format":"json","controle":null}`)
	f.Add(`{"modele":"a.py:1-","perimetre":["C:\\x", ".."],"n_tests":-3,"essais":99}`)
	v := NewValidator()
	f.Fuzz(func(t *testing.T, raw string) {
		var req wire.Request
		if json.Unmarshal([]byte(raw), &req) != nil {
			return
		}
		err := v.Validate(req)
		if err == nil {
			if req.Consigne == "" {
				t.Fatalf("request without consigne accepted: %s", raw)
			}
			return
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Fields) == 0 {
			t.Fatalf("Validate = %v, want a non-empty *ValidationError", err)
		}
		for _, fe := range ve.Fields {
			if fe.Field == "" || fe.Reason == "" {
				t.Fatalf("unnamed error %+v for %s", fe, raw)
			}
		}
	})
}
