package store

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

// crashState builds the state every crash test starts from: two requests,
// the second en_cours with one failed try. It returns their ids.
func crashState(t testing.TB, s *Store) (queued, running string) {
	t.Helper()
	var err error
	if queued, err = s.Create(ctx(t), "sess", "/p", sampleRequest()); err != nil {
		t.Fatal(err)
	}
	if running, err = s.Create(ctx(t), "sess", "/p", sampleRequest()); err != nil {
		t.Fatal(err)
	}
	if err := s.SetState(ctx(t), running, wire.EnCours, "routed local"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddTry(ctx(t), Try{RequestID: running, Engine: "local", Model: "qwen",
		Controls: []wire.Control{{Nom: "lint", Message: "E501"}}}); err != nil {
		t.Fatal(err)
	}
	return queued, running
}

// checkResumable reopens dir and checks that both requests survived,
// unfinished, with their try, and that the uncommitted request did not.
func checkResumable(t *testing.T, dir, queued, running string) {
	t.Helper()
	s := openAt(t, dir, newClock(t0.Add(time.Hour)))
	recs, err := s.Unfinished(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	type brief struct{ ID, State, Step string }
	var got []brief
	for _, r := range recs {
		got = append(got, brief{r.ID, r.State, r.ProgressStep})
	}
	want := []brief{{queued, wire.EnFile, ""}, {running, wire.EnCours, "try 1 local/qwen"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unfinished after crash (-want +got):\n%s", diff)
	}
	tries, err := s.ListTries(ctx(t), running)
	if err != nil || len(tries) != 1 || tries[0].Controls[0].Message != "E501" {
		t.Errorf("tries after crash: %+v, %v", tries, err)
	}
	q, _ := s.Queue(ctx(t))
	if q[wire.EnFile] != 1 || q[wire.EnCours] != 1 || q[wire.Annule] != 0 {
		t.Errorf("queue after crash: %v (the uncommitted transaction leaked)", q)
	}
	// The resumed daemon can finish them.
	for _, id := range []string{queued, running} {
		if _, won, err := s.Finish(ctx(t), id, wire.Answer{Fin: wire.Perdue, Raison: "redemarrage"}); err != nil || !won {
			t.Errorf("Finish after restart: %v %v", won, err)
		}
	}
}

func TestCrashCloseWithoutFinishing(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, newClock(t0))
	queued, running := crashState(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkResumable(t, dir, queued, running)
}

// TestCrashCopyMidTransaction snapshots the database files while a write
// transaction is open, as a power cut would leave them, and opens the copy.
func TestCrashCopyMidTransaction(t *testing.T) {
	dir, snap := t.TempDir(), t.TempDir()
	s := openAt(t, dir, newClock(t0))
	queued, running := crashState(t, s)

	tx, err := s.w.BeginTx(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO requests (id, session_id, project, request, state, created_at, updated_at, progress_at)
		VALUES ('dghost', 's', '/p', '{}', 'en_file', 1, 1, 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`UPDATE requests SET state = 'annule', answer = '{}' WHERE id = ?`, queued); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileName, FileName + "-wal"} {
		copyFile(t, filepath.Join(dir, name), filepath.Join(snap, name))
	}
	tx.Rollback()

	checkResumable(t, snap, queued, running)
	if _, err := openAt(t, snap, newClock(t0)).Get(ctx(t), "dghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("uncommitted request: %v, want ErrNotFound", err)
	}
}

const crashDirEnv = "MIAM_STORE_TEST_CRASH_DIR"

// TestCrashExitMidTransaction kills a process (os.Exit, no Close, no
// checkpoint) in the middle of a write transaction, then reopens.
func TestCrashExitMidTransaction(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx(t), os.Args[0], "-test.run=^TestCrashExitMidTransaction$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("child: %v, want exit 7; output:\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+"-wal")); err != nil {
		t.Errorf("no WAL left by the crashed child: %v", err)
	}
	ids, err := os.ReadFile(filepath.Join(dir, "ids"))
	if err != nil || len(ids) != 2*19+1 {
		t.Fatalf("child's ids: %q, %v", ids, err)
	}
	queued, running := string(ids[:19]), string(ids[20:])
	checkResumable(t, dir, queued, running)

	// The child's output claim survived as pending, never as written.
	s := openAt(t, dir, newClock(t0))
	pend, err := s.PendingOutputs(ctx(t))
	if err != nil || len(pend) != 1 || pend[0].RequestID != running {
		t.Errorf("pending outputs after crash: %+v, %v", pend, err)
	}
}

// crashChild builds the crash state, claims an output, opens a write
// transaction and exits in its middle.
func crashChild(t *testing.T, dir string) {
	s, err := Open(dir, &Options{Now: newClock(t0).Now})
	if err != nil {
		os.Exit(2)
	}
	queued, running := crashState(t, s)
	if t.Failed() {
		os.Exit(3)
	}
	if _, err := s.ClaimOutput(t.Context(), running, "/p/out.py", "aa11", ""); err != nil {
		os.Exit(4)
	}
	if err := os.WriteFile(filepath.Join(dir, "ids"), []byte(queued+" "+running), 0o600); err != nil {
		os.Exit(5)
	}
	tx, err := s.w.Begin()
	if err != nil {
		os.Exit(6)
	}
	tx.Exec(`UPDATE requests SET state = 'annule', answer = '{}' WHERE id = ?`, queued)
	tx.Exec(`INSERT INTO requests (id, session_id, project, request, state, created_at, updated_at, progress_at)
		VALUES ('dghost', 's', '/p', '{}', 'en_file', 1, 1, 1)`)
	os.Exit(7)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
