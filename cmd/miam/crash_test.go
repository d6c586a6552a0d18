package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/delegate"
	"miam/delegate/store"
	"miam/delegate/wire"
	"miam/fixtures/fakeollama"
)

const crashModel = "qwen2.5-coder:7b"

// crashEnv is a user's environment for the real binary: its own state and
// config directories, no API key.
type crashEnv struct {
	bin   string
	env   []string
	state string // $XDG_STATE_HOME/miam
}

// buildMiam builds this package's binary into a temporary directory.
func buildMiam(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "miam")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// daemonProc is one `miam serve`.
type daemonProc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer // read only after Wait
}

// serve starts `miam serve` and returns once it listens: it prints its
// address after publishing daemon.json and attente.hdr. The process is
// killed at the end of the test if still running.
func (e crashEnv) serve(t *testing.T) *daemonProc {
	t.Helper()
	cmd := exec.Command(e.bin, "serve")
	cmd.Env = e.env
	p := &daemonProc{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	first := &firstLine{ch: make(chan string, 1)}
	cmd.Stdout = first
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	ready := first.ch
	select {
	case line := <-ready:
		if !strings.HasPrefix(line, "miam daemon on http://127.0.0.1:") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("miam serve printed %q; stderr:\n%s", line, p.stderr)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("miam serve did not start; stderr:\n%s", p.stderr)
	}
	return p
}

// firstLine hands over the first line written to it.
type firstLine struct {
	mu   sync.Mutex
	buf  []byte
	ch   chan string
	sent bool
}

func (f *firstLine) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf = append(f.buf, p...)
	if i := bytes.IndexByte(f.buf, '\n'); i >= 0 && !f.sent {
		f.sent = true
		f.ch <- string(f.buf[:i+1])
	}
	return len(p), nil
}

// TestDaemonSurvivesSIGKILL kills `miam serve` in the middle of a request
// and restarts it: the request resumes, the waiting `miam attendre` gets
// one terminal line, the output is written once and the store ends the
// request once.
func TestDaemonSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the miam binary")
	}
	bin := buildMiam(t)

	// The model hangs on the first chat (the daemon dies during it) and
	// answers well the second time. A front records each chat's arrival.
	fenced := "```python\ndef add(a, b):\n    return a + b\n```\n"
	o := fakeollama.New(fakeollama.Config{Installed: []string{crashModel}, Loaded: []string{crashModel},
		Replies: []fakeollama.Reply{fakeollama.Hang(), fakeollama.Answer(fenced)}})
	t.Cleanup(o.Close)
	arrived := make(chan struct{}, 8)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/chat" {
			arrived <- struct{}{}
		}
		o.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		front.CloseClientConnections()
		front.Close()
	})

	home := t.TempDir()
	cfgDir := filepath.Join(home, "config", "miam")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("engines:\n  order: [local]\n  local: {host: %q, model: %q}\ndelegation: {call_wait_s: 1}\n", front.URL, crashModel)
	if err := os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e := crashEnv{bin: bin, state: filepath.Join(home, "state", "miam"), env: []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
	}}
	project := t.TempDir()

	first := e.serve(t)
	pending := submit(t, e.state, delegate.SubmitBody{Session: "s1", Project: project, Request: wire.Request{
		Consigne: "Write add(a, b) returning the sum.", Sortie: "add.py", Attendus: []string{"add"},
		Controle: &[]string{"syntaxe", "complet"}}})
	id := pending.DemandeID
	if pending.OK != nil || id == "" || pending.Reprise != "miam attendre "+id {
		t.Fatalf("deleguer answered %+v, want ok: null with reprise", pending)
	}
	select {
	case <-arrived: // the daemon is inside the model call
	case <-time.After(10 * time.Second):
		t.Fatal("the daemon never called the model")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wait := exec.CommandContext(ctx, bin, "attendre", id)
	wait.Env = e.env
	var waitOut, waitErr bytes.Buffer
	wait.Stdout, wait.Stderr = &waitOut, &waitErr
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if wait.ProcessState == nil {
			wait.Process.Kill()
			wait.Wait()
		}
	})

	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.cmd.Wait()
	if _, err := os.Stat(filepath.Join(project, "add.py")); !os.IsNotExist(err) {
		t.Fatalf("add.py exists before the model answered: %v", err)
	}

	second := e.serve(t)
	if err := wait.Wait(); err != nil {
		t.Fatalf("miam attendre: %v\nstderr: %s", err, waitErr.String())
	}
	lines := strings.Split(strings.TrimSuffix(waitOut.String(), "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("miam attendre printed %d lines, want one:\n%s", len(lines), waitOut.String())
	}
	var got wire.Answer
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("miam attendre printed %q: %v", lines[0], err)
	}
	ok := true
	want := wire.Answer{OK: &ok, DemandeID: id, Etat: wire.Valide, Fin: wire.Valide, Verdict: wire.VerdictValide,
		Controles: []wire.Control{{Nom: "syntaxe", OK: true}, {Nom: "complet", OK: true}},
		Essais:    1, MoteurFinal: "local", ModeleFinal: crashModel, Sortie: "add.py",
		Diff: &wire.Diff{Files: []string{"add.py"}, Added: 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("miam attendre's line (-want +got):\n%s", diff)
	}

	// The output, once, and nothing else in the project.
	entries, _ := os.ReadDir(project)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	if diff := cmp.Diff([]string{"add.py"}, names); diff != "" {
		t.Errorf("project files (-want +got):\n%s", diff)
	}
	if data, _ := os.ReadFile(filepath.Join(project, "add.py")); string(data) != "def add(a, b):\n    return a + b\n" {
		t.Errorf("add.py = %q", data)
	}
	if reqs := o.Requests(); len(reqs) != 2 || !cmp.Equal(reqs[0].Messages, reqs[1].Messages) {
		t.Errorf("the model got %d chats, want the same prompt twice (killed, resumed)", len(reqs))
	}

	// Stop the daemon cleanly, then read its store.
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.cmd.Wait(); err != nil {
		t.Errorf("miam serve after SIGTERM: %v\n%s", err, second.stderr)
	}
	st, err := store.Open(e.state, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bg := context.Background()
	q, err := st.Queue(bg)
	if err != nil {
		t.Fatal(err)
	}
	wantQ := map[string]int{}
	for _, s := range store.AllStates() {
		wantQ[s] = 0
	}
	wantQ[wire.Valide] = 1
	if diff := cmp.Diff(wantQ, q); diff != "" {
		t.Errorf("requests by state (-want +got):\n%s", diff)
	}
	rec, err := st.Get(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Answer == nil || !cmp.Equal(*rec.Answer, got) {
		t.Errorf("stored answer %+v, want what attendre printed", rec.Answer)
	}
	tries, err := st.ListTries(bg, id)
	if err != nil || len(tries) != 1 || !tries[0].OK {
		t.Errorf("tries %+v, %v; want the resumed one, ok", tries, err)
	}
	out, err := st.Output(bg, id)
	if err != nil || !out.Written() || out.Path != "add.py" {
		t.Errorf("output record %+v, %v", out, err)
	}
}

// submit posts a request to the daemon of state dir with its token.
func submit(t *testing.T, dir string, body delegate.SubmitBody) wire.Answer {
	t.Helper()
	addr, token, err := delegate.ReadDaemonFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, addr.URL()+"/v1/deleguer", bytes.NewReader(data))
	req.Header.Set("Authorization", "Bearer "+token)
	noToken, err := http.Post(addr.URL()+"/v1/deleguer", "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	noToken.Body.Close()
	if noToken.StatusCode != http.StatusUnauthorized {
		t.Fatalf("deleguer without the token: %d, want 401", noToken.StatusCode)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a wire.Answer
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("deleguer: %d %s", resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatal(err)
	}
	return a
}
