package plans

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const valid = `{"tache": "PH2-D1", "bouts": [
 {"id": 1, "quoi": "start_all test", "fichier": "tests/x.py", "moteur": "auto", "modele": "tests/x.py:613-637", "contrat": "…", "controle": "pytest -k start_all"},
 {"id": 2, "quoi": "lock", "moteur": "claude", "motif": "concurrence"}]}`

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr string // "" for a valid plan
	}{
		{"valid", valid, ""},
		{"moteur empty is auto", `{"tache":"T","bouts":[{"id":0,"quoi":"q","fichier":"a.py","controle":"pytest"}]}`, ""},
		{"claude without motif", `{"tache":"T","bouts":[{"id":1,"quoi":"q","fichier":"a.py","controle":"c"},{"id":2,"quoi":"q","moteur":"claude"}]}`,
			"p.json: bouts[1].motif: required when moteur is claude"},
		{"bad motif", `{"tache":"T","bouts":[{"id":1,"quoi":"q","moteur":"claude","motif":"flemme"}]}`,
			"p.json: bouts[0].motif: flemme is not one of concurrence, securite, debogage-multi-fichiers, secret"},
		{"delegable without fichier", `{"tache":"T","bouts":[{"id":1,"quoi":"q","controle":"c"}]}`,
			"p.json: bouts[0].fichier: required for a delegated bout"},
		{"delegable without controle", `{"tache":"T","bouts":[{"id":1,"quoi":"q","fichier":"a.py"}]}`,
			"p.json: bouts[0].controle: required for a delegated bout"},
		{"no tache", `{"bouts":[{"id":1,"quoi":"q","fichier":"a.py","controle":"c"}]}`, "p.json: tache: required"},
		{"no bouts", `{"tache":"T","bouts":[]}`, "p.json: bouts: needs at least 1"},
		{"no quoi", `{"tache":"T","bouts":[{"id":1,"fichier":"a.py","controle":"c"}]}`, "p.json: bouts[0].quoi: required"},
		{"negative id", `{"tache":"T","bouts":[{"id":-1,"quoi":"q","fichier":"a.py","controle":"c"}]}`, "p.json: bouts[0].id: must be 0 or more"},
		{"duplicate id", `{"tache":"T","bouts":[{"id":1,"quoi":"q","fichier":"a.py","controle":"c"},{"id":1,"quoi":"q","fichier":"b.py","controle":"c"}]}`,
			"p.json: bouts[1].id: 1 is used twice"},
		{"unknown field", `{"tache":"T","bouts":[],"extra":1}`, "p.json: not a plan"},
		{"not json", `tache: T`, "p.json: not a plan"},
		{"trailing data", valid + `{}`, "p.json: not a plan: data after"},
		{"too long", "{" + strings.Repeat("\n", 81) + "}", "p.json: 82 lines, at most 80"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.json", []byte(tt.data))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("Parse error = %v, want prefix %q", err, tt.wantErr)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
		})
	}
}

func TestAfterAnswer(t *testing.T) {
	p, err := Parse(File, []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	type result struct {
		ID     int
		Status Status
		Found  bool
	}
	tests := []struct {
		name   string
		sortie string
		ok     *bool
		want   result
	}{
		{"ok true", "tests/x.py", &yes, result{1, Valide, true}},
		{"ok false", "tests/x.py", &no, result{1, Echec, true}},
		{"ok null", "./tests/x.py", nil, result{1, Delegue, true}},
		{"other file", "src/y.py", &yes, result{}},
		{"no sortie", "", &yes, result{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got result
			got.ID, got.Status, got.Found = p.AfterAnswer(tt.sortie, tt.ok)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AfterAnswer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInitial(t *testing.T) {
	p, _ := Parse(File, []byte(valid))
	got := []Status{p.Bouts[0].Initial(), p.Bouts[1].Initial()}
	if diff := cmp.Diff([]Status{AFaire, Claude}, got); diff != "" {
		t.Errorf("Initial (-want +got):\n%s", diff)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(valid))
	f.Add([]byte(`{"tache":"T","bouts":[{"id":1,"quoi":"q","moteur":"claude"}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(File, data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), File+": ") {
				t.Fatalf("error %v: not an ErrInvalid naming the file", err)
			}
			return
		}
		// A plan that parses honours the cross-field rules.
		if p.Tache == "" || len(p.Bouts) == 0 {
			t.Fatalf("accepted %q without tache or bouts", data)
		}
		for _, b := range p.Bouts {
			if b.Delegable() && (b.Fichier == "" || b.Controle == "") {
				t.Fatalf("accepted delegable bout without fichier/controle: %q", data)
			}
			if !b.Delegable() && b.Motif == "" {
				t.Fatalf("accepted claude bout without motif: %q", data)
			}
		}
	})
}
