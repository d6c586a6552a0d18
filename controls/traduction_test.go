package controls

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func TestProtectedParts(t *testing.T) {
	got := protectedParts("Hi {name} {{ x }} ${y} %s %(n)d %1$s %{z} $1 — 50% of `a b` <i>x</i> https://a.b/c?d=1. 1,000")
	want := map[string][]string{
		"placeholder": {"{name}", "{{ x }}", "${y}", "%s", "%(n)d", "%1$s", "%{z}", "$1"},
		"code span":   {"a b"},
		"URL":         {"https://a.b/c?d=1"},
		"HTML tag":    {"<i>", "</i>"},
		"number":      {"50", "1,000"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("protectedParts mismatch (-want +got):\n%s", diff)
	}
}

func TestTraduction(t *testing.T) {
	req := wire.Request{Type: "traduction", Langue: "fr", Consigne: "Translate into French:\nSaved {count} files to %s in 2.5 seconds."}
	ok := wire.Control{Nom: "traduction", OK: true}
	tests := []struct {
		name string
		req  wire.Request
		out  string
		want wire.Control
	}{
		{"good", req, "{count} fichiers enregistrés dans %s en 2,5 secondes.", ok},
		{"placeholder translated", req, "{nombre} fichiers enregistrés dans %s en 2,5 secondes.",
			wire.Control{Nom: "traduction", Message: "placeholder lost: `{count}`; placeholder not in the source: `{nombre}`: keep them exactly as in the source"}},
		{"too short", wire.Request{Type: "traduction", Langue: "de", Consigne: "Translate:\nThe quick brown fox jumps over the lazy dog and runs far away into the forest."}, "Der Fuchs.",
			wire.Control{Nom: "traduction", Message: "the translation is 13% of the source's length: translate all of it"}},
		{"into japanese is shorter", wire.Request{Type: "traduction", Langue: "ja", Consigne: "Translate:\nThe meeting has been moved to Thursday afternoon."}, "会議は木曜日の午後に変更されました。", ok},
		{"no source", wire.Request{Type: "traduction", Consigne: ""}, "x", wire.Control{Nom: "traduction", OK: true, Message: "no source text found: skipped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Traduction{}.Check(context.Background(), NewInput(tt.req, tt.out, nil))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzTraduction: the placeholder and number scanners never panic, and a
// text compared with itself keeps everything.
func FuzzTraduction(f *testing.F) {
	for _, s := range []string{"{a} %s ${b} {{c}}", "`x` https://y.z/ 1 000", "<b>1,5</b>", "%(x)s %1$d $2", "{", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := protectedParts(s)
		b := protectedParts(s)
		for k := range a {
			if lost, added := multisetDiff(a[k], b[k]); len(lost)+len(added) > 0 {
				t.Fatalf("%s differs from itself: %v %v", k, lost, added)
			}
		}
		if lost := lostNumbers(a["number"], b["number"]); len(lost) > 0 {
			t.Fatalf("numbers lost against itself: %v", lost)
		}
		missingKeys(s, s)
		lengthProblem(s, s, "fr")
	})
}
