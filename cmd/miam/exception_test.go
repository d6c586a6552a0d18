package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/budgets"
)

// TestException: `miam exception` leaves a checked request that the hook
// claims once; a bad request names its field and leaves nothing.
func TestException(t *testing.T) {
	proj := t.TempDir()
	cwd, _ := os.Getwd()
	tests := []struct {
		name    string
		args    []string
		code    int
		errWant string
		want    []budgets.Exception
	}{
		{name: "granted", args: []string{"exception", "concurrence", "--fichiers", "src/a.py,src/b.py", "--lignes", "25", "--dir", proj},
			want: []budgets.Exception{{Raison: "concurrence", Fichiers: []string{filepath.Join(cwd, "src/a.py"), filepath.Join(cwd, "src/b.py")}, Lignes: 25, Source: "cli"}}},
		{name: "flags first, repeated files", args: []string{"exception", "--fichiers", "/p/x.go", "--fichiers", "/p/y.go", "--lignes", "5", "--dir", proj, "secret"},
			want: []budgets.Exception{{Raison: "secret", Fichiers: []string{"/p/x.go", "/p/y.go"}, Lignes: 5, Source: "cli"}}},
		{name: "unknown reason", args: []string{"exception", "flemme", "--fichiers", "a.py", "--lignes", "5", "--dir", proj}, code: 1, errWant: "raison"},
		{name: "no files", args: []string{"exception", "secret", "--lignes", "5", "--dir", proj}, code: 1, errWant: "fichiers"},
		{name: "no lines", args: []string{"exception", "secret", "--fichiers", "a.py", "--dir", proj}, code: 1, errWant: "lignes"},
	}
	store := budgets.Store{Dir: filepath.Join(proj, ".miam", "state")}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.errWant) {
				t.Fatalf("exit %d, want %d; stderr %q should name %q", code, tc.code, stderr.String(), tc.errWant)
			}
			got, err := store.ClaimExceptions()
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("claimed (-want +got):\n%s", d)
			}
			if again, _ := store.ClaimExceptions(); len(again) != 0 {
				t.Errorf("claimed twice: %v", again)
			}
		})
	}
}
