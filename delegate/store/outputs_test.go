package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// hashFile is the hash of the file at path, "" when absent.
func hashFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return hashOf(b)
}

// writer writes outputs atomically and counts the writes.
type writer struct {
	t      *testing.T
	writes int
}

func (w *writer) write(path string, b []byte) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		w.t.Fatal(err)
	}
	w.writes++
}

// deliver runs ClaimOutput's protocol as the daemon does.
func (w *writer) deliver(s *Store, id, path string, b []byte) error {
	c := ctx(w.t)
	already, err := s.ClaimOutput(c, id, path, hashOf(b), hashFile(w.t, path))
	switch {
	case errors.Is(err, ErrOutputPending):
		must, err := s.RecoverOutput(c, id, hashFile(w.t, path))
		if err != nil || !must {
			return err
		}
	case err != nil:
		return err
	case already:
		return nil
	}
	w.write(path, b)
	return s.MarkOutputWritten(c, id, int64(len(b)))
}

func TestOutputProtocol(t *testing.T) {
	content := []byte("def parse_header(line):\n    return line.split(':', 1)\n")
	tests := []struct {
		name string
		// steps before a final deliver: claim, write, mark, edit, reopen,
		// deliver.
		steps     []string
		errIs     error // of the last deliver
		writes    int
		final     string // "output", "base", "edit"
		pending   int
		writtenOK bool
	}{
		{name: "deliver, reopen, deliver", steps: []string{"deliver", "reopen", "deliver"}, writes: 1, final: "output", writtenOK: true},
		{name: "crash after claim, before write", steps: []string{"claim", "reopen", "deliver", "reopen", "deliver"}, writes: 1, final: "output", writtenOK: true},
		{name: "crash after write, before mark", steps: []string{"claim", "write", "reopen", "deliver", "deliver"}, writes: 1, final: "output", writtenOK: true},
		{name: "crash after mark, before finish", steps: []string{"claim", "write", "mark", "reopen", "deliver"}, writes: 1, final: "output", writtenOK: true},
		{name: "file changed meanwhile", steps: []string{"claim", "write", "edit", "reopen", "deliver"}, errIs: ErrOutputConflict, writes: 1, final: "edit", pending: 1},
		{name: "base changed before write", steps: []string{"claim", "edit", "reopen", "deliver"}, errIs: ErrOutputConflict, writes: 0, final: "edit", pending: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, work := t.TempDir(), t.TempDir()
			path := filepath.Join(work, "header.py")
			base := []byte("# old\n")
			if err := os.WriteFile(path, base, 0o644); err != nil {
				t.Fatal(err)
			}
			s := openAt(t, dir, newClock(t0))
			id, _ := s.Create(ctx(t), "s", work, sampleRequest())
			w := &writer{t: t}
			var err error
			for _, step := range tt.steps {
				switch step {
				case "claim":
					var already bool
					already, err = s.ClaimOutput(ctx(t), id, path, hashOf(content), hashOf(base))
					if already || err != nil {
						t.Fatalf("first claim: %v, %v", already, err)
					}
				case "write":
					w.write(path, content)
				case "mark":
					err = s.MarkOutputWritten(ctx(t), id, int64(len(content)))
				case "edit":
					os.WriteFile(path, []byte("# user edit\n"), 0o644)
				case "reopen":
					s.Close() // the claim's transaction committed; nothing else ran
					s = openAt(t, dir, newClock(t0))
				case "deliver":
					err = w.deliver(s, id, path, content)
				}
			}
			if !errors.Is(err, tt.errIs) {
				t.Errorf("last step: err %v, want %v", err, tt.errIs)
			}
			if w.writes != tt.writes {
				t.Errorf("output written %d times, want %d", w.writes, tt.writes)
			}
			want := map[string]string{"output": string(content), "base": string(base), "edit": "# user edit\n"}[tt.final]
			if got, _ := os.ReadFile(path); string(got) != want {
				t.Errorf("file holds %q, want %q", got, want)
			}
			pend, _ := s.PendingOutputs(ctx(t))
			if len(pend) != tt.pending {
				t.Errorf("pending outputs = %+v, want %d", pend, tt.pending)
			}
			o, err := s.Output(ctx(t), id)
			if err != nil || o.Written() != tt.writtenOK || o.Path != path || o.SHA256 != hashOf(content) || o.BaseSHA256 != hashOf(base) {
				t.Errorf("Output = %+v, %v", o, err)
			}
		})
	}
}

func TestOutputClaimErrors(t *testing.T) {
	s := openAt(t, t.TempDir(), newClock(t0))
	id, _ := s.Create(ctx(t), "s", "/p", sampleRequest())
	if _, err := s.ClaimOutput(ctx(t), id, "/p/a.py", "aa", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkOutputWritten(ctx(t), id, 10); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		id, path, sha string
		already       bool
		errIs         error
	}{
		{name: "same claim again", id: id, path: "/p/a.py", sha: "aa", already: true},
		{name: "other content", id: id, path: "/p/a.py", sha: "bb", errIs: ErrOutputConflict},
		{name: "other path", id: id, path: "/p/b.py", sha: "aa", errIs: ErrOutputConflict},
		{name: "unknown request", id: "dnope", path: "/p/a.py", sha: "aa", errIs: ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			already, err := s.ClaimOutput(ctx(t), tt.id, tt.path, tt.sha, "")
			if already != tt.already || !errors.Is(err, tt.errIs) {
				t.Errorf("ClaimOutput = %v, %v; want %v, %v", already, err, tt.already, tt.errIs)
			}
		})
	}
	if _, err := s.ClaimOutput(ctx(t), id, "", "aa", ""); err == nil {
		t.Error("claim without path: no error")
	}
	other, _ := s.Create(ctx(t), "s", "/p", sampleRequest())
	if err := s.MarkOutputWritten(ctx(t), other, 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("MarkOutputWritten unclaimed: %v", err)
	}
	if _, err := s.RecoverOutput(ctx(t), other, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("RecoverOutput unclaimed: %v", err)
	}
	if err := s.MarkOutputWritten(ctx(t), id, 99); err != nil {
		t.Errorf("second MarkOutputWritten: %v", err)
	}
	o, _ := s.Output(ctx(t), id)
	if diff := cmp.Diff(Output{RequestID: id, Path: "/p/a.py", SHA256: "aa", Bytes: 10, ClaimedAt: t0, WrittenAt: t0}, o); diff != "" {
		t.Errorf("Output (-want +got):\n%s", diff)
	}
	// Finishing leaves the output record alone.
	s.Finish(ctx(t), id, wire.Answer{Fin: wire.Valide})
	if already, err := s.ClaimOutput(ctx(t), id, "/p/a.py", "aa", ""); !already || err != nil {
		t.Errorf("claim after Finish = %v, %v", already, err)
	}
}
