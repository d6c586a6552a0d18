package budgets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadBadFilesAreFreshSessions(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		broken bool // the fresh state says why the file was not used
	}{
		{"truncated", `{"schema":1,"session_id":"s","since_delega`, true},
		{"not json", "garbage\x00", true},
		{"unknown schema", `{"schema":99,"session_id":"s","since_delegation":12}`, true},
		{"other session", `{"schema":1,"session_id":"other","since_delegation":12}`, false},
		{"empty: created, never written", "", false},
		{"blanks", "  \n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Store{Dir: t.TempDir()}
			if err := os.WriteFile(s.Path("s"), []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			got := s.Load("s")
			if (got.Broken != "") != tc.broken {
				t.Errorf("Load: Broken = %q, want broken %v", got.Broken, tc.broken)
			}
			got.Broken = ""
			if d := cmp.Diff(Fresh("s"), got); d != "" {
				t.Errorf("Load (-want +got):\n%s", d)
			}
			err := s.Update("s", func(st *State) error {
				if (st.Broken != "") != tc.broken {
					t.Errorf("Update: Broken = %q, want broken %v", st.Broken, tc.broken)
				}
				if st.SinceDelegation != 0 {
					t.Errorf("Update saw since_delegation %d from a bad file", st.SinceDelegation)
				}
				st.SinceDelegation = 7
				return nil
			})
			if err != nil {
				t.Fatalf("Update over a bad file: %v", err)
			}
			if got := s.Load("s"); got.SinceDelegation != 7 || got.Broken != "" {
				t.Errorf("after Update, since_delegation = %d (want 7), broken %q", got.SinceDelegation, got.Broken)
			}
		})
	}
}

func TestUpdateMissingDirAndNoLeftovers(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "a", "b")}
	for i := 0; i < 3; i++ {
		if err := s.Update("s", func(st *State) error { st.SinceDelegation++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Load("s").SinceDelegation; got != 3 {
		t.Errorf("since_delegation = %d, want 3", got)
	}
	entries, _ := os.ReadDir(s.Dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestUpdateErrorWritesNothing(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	boom := errors.New("boom")
	err := s.Update("s", func(st *State) error { st.SinceDelegation = 9; return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if _, err := ReadStateFile(s.Path("s")); !errors.Is(err, errNoState) {
		t.Errorf("a failed update wrote the state file: %v", err)
	}
}

func TestPathCannotBeSteered(t *testing.T) {
	s := Store{Dir: "/state"}
	for _, id := range []string{"../../etc/passwd", "a/b", "", strings.Repeat("x", 200), "ok-id_1"} {
		p := s.Path(id)
		if filepath.Dir(p) != "/state" || !strings.HasPrefix(filepath.Base(p), "session-") {
			t.Errorf("Path(%q) = %q escapes the state dir", id, p)
		}
	}
	if got := s.Path("ok-id_1"); got != "/state/session-ok-id_1.json" {
		t.Errorf("a plain id is kept as is: %q", got)
	}
}

func TestCloneIsDeep(t *testing.T) {
	st := Fresh("s")
	st.Pending = map[string]Charge{"a": {SinceDelegation: 1}}
	st.Session.Denied = map[string]int{"tests": 1}
	c := st.Clone()
	c.Pending["b"] = Charge{}
	c.Session.Denied["tests"] = 5
	st.BoutStatus = map[int]string{1: "delegue"}
	c2 := st.Clone()
	c2.BoutStatus[1] = "valide"
	if len(st.Pending) != 1 || st.Session.Denied["tests"] != 1 || st.BoutStatus[1] != "delegue" {
		t.Error("Clone shares maps with the original")
	}
}

// A broken file is replaced at the first Update even when the decision
// changes nothing, so the session is told once, not on every call.
func TestUpdateRewritesBrokenFile(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if err := os.WriteFile(s.Path("s"), []byte("{truncated"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Update("s", func(*State) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := s.Load("s"); got.Broken != "" {
		t.Errorf("after an Update that changed nothing, the file is still broken: %s", got.Broken)
	}
}
