package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"miam/budgets"
)

// TestStatusline runs the command on a project whose session state the
// hook left, and on payloads it cannot use.
func TestStatusline(t *testing.T) {
	proj := t.TempDir()
	store := budgets.Store{Dir: filepath.Join(proj, ".miam", "state")}
	if err := store.Update("s1", func(st *budgets.State) error {
		st.Turn = 2
		st.ThisTurn = budgets.Tally{Written: budgets.Lines{Code: 9}, Delegated: 41, Exceptions: 1}
		st.Session = budgets.Tally{Written: budgets.Lines{Code: 30}, Delegated: 70, Exceptions: 2}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, stdin, want, wantErr string
	}{
		{"the session's line", `{"session_id":"s1","workspace":{"project_dir":"` + proj + `","current_dir":"` + proj + `/src"}}`,
			"miam · tour délégué 82 % · exceptions 1 │ session délégué 70 % · exceptions 2\n", ""},
		{"cwd when no workspace", `{"session_id":"s1","cwd":"` + proj + `"}`,
			"miam · tour délégué 82 % · exceptions 1 │ session délégué 70 % · exceptions 2\n", ""},
		{"a session with no state yet", `{"session_id":"s2","cwd":"` + proj + `"}`,
			"miam · tour délégué — % · exceptions 0 │ session délégué — % · exceptions 0\n", ""},
		{"not JSON", `nope`, "miam · ?\n", "status line payload"},
		{"no session", `{"cwd":"/x"}`, "miam · ?\n", "no session_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CLAUDE_PROJECT_DIR", "")
			var stdout, stderr bytes.Buffer
			if err := runStatusline(context.Background(), nil, strings.NewReader(tt.stdin), &stdout, &stderr); err != nil {
				t.Fatal(err)
			}
			if stdout.String() != tt.want {
				t.Errorf("stdout %q, want %q", stdout.String(), tt.want)
			}
			if !strings.Contains(stderr.String(), tt.wantErr) || (tt.wantErr == "") != (stderr.Len() == 0) {
				t.Errorf("stderr %q, want it to say %q", stderr.String(), tt.wantErr)
			}
		})
	}
}

func FuzzDecodeStatusInput(f *testing.F) {
	f.Add([]byte(`{"session_id":"s","workspace":{"project_dir":"/p"}}`), "")
	f.Add([]byte(`{"session_id":"s","cwd":"/p"}`), "/env")
	f.Add([]byte(`[]`), "")
	f.Fuzz(func(t *testing.T, data []byte, env string) {
		sid, project, err := decodeStatusInput(data, env)
		if err == nil && (sid == "" || project == "") {
			t.Errorf("no error, yet session %q and project %q", sid, project)
		}
	})
}
