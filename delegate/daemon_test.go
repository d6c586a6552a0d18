package delegate_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"miam/controls"
	"miam/delegate"
	"miam/delegate/engines/api"
	"miam/delegate/engines/haiku"
	"miam/delegate/engines/local"
	"miam/delegate/store"
	"miam/delegate/wire"
	"miam/fixtures/fakeapi"
	"miam/fixtures/fakeollama"
	"miam/fixtures/fakeopenai"
)

const (
	localModel = "qwen2.5-coder:7b"
	apiModel   = "qwen/qwen3-coder"
	// goodPy passes syntaxe and complet; fencedPy is it as models answer.
	goodPy   = "def add(a, b):\n    return a + b\n"
	fencedPy = "Here is the file:\n\n```python\n" + goodPy + "```\n"
	// badPy is complete (complet passes) but does not parse (syntaxe fails).
	badPy = "def add(a, b):\n    retrun a + b\n"
	// badPyFailure is what syntaxe says of badPy, sent back to the model.
	badPyFailure = "line 2:12: syntax error near `retrun a + b`"
	// cutPy fails both controls.
	cutPy = "def add(a, b):\n    return (a + b\n"
)

// the controls every scenario runs: the real pipeline, its two real controls.
var complet = []string{"syntaxe", "complet"}

// addRequest asks for add.py with the real controls.
func addRequest() wire.Request {
	return wire.Request{Consigne: "Write add(a, b) returning the sum.", Sortie: "add.py",
		Attendus: []string{"add"}, Controle: &complet}
}

// okControls is what the controls say of goodPy.
var okControls = []wire.Control{{Nom: "syntaxe", OK: true}, {Nom: "complet", OK: true}}

// failedControls is what they say of badPy.
var failedControls = []wire.Control{{Nom: "syntaxe", OK: false, Message: badPyFailure}, {Nom: "complet", OK: true}}

// fakes are the model servers behind the ladder local, api, haiku.
type fakes struct {
	ollama    *fakeollama.Server // its local engine is ready when it lists a loaded model
	openai    *fakeopenai.Server // nil: the api engine has no key
	anthropic *fakeapi.Server    // nil: haiku has no key, as most users
	// ollamaHTTP carries the local engine's requests (an in-memory network
	// inside synctest); nil is the default client.
	ollamaHTTP *http.Client
}

// ladder builds the real engines on the fakes; project is the one project
// allowed on the api, whose spend comes from spent.
func (f fakes) ladder(project string, spent func(context.Context) (float64, error)) []delegate.Engine {
	l := &local.Engine{Host: "http://127.0.0.1:1", Model: localModel, HTTPClient: f.ollamaHTTP}
	if f.ollama != nil {
		l.Host = f.ollama.URL()
	}
	a := &api.Engine{Model: apiModel, Projects: []string{project}, SpentToday: spent}
	if f.openai != nil {
		a.BaseURL, a.Key = f.openai.URL()+"/api/v1", "sk-or-test"
	}
	h := &haiku.Engine{}
	if f.anthropic != nil {
		h.BaseURL, h.Key = f.anthropic.URL(), "sk-ant-test"
	}
	return []delegate.Engine{l, a, h}
}

// openDaemon opens a daemon on the fakes with the real controls and a store
// in a temporary directory, and returns it with its project directory. The
// api engine's spend is read from the daemon's store, as `miam serve` does.
func openDaemon(t testing.TB, f fakes, cfg delegate.Config) (*delegate.Daemon, string) {
	t.Helper()
	project := t.TempDir()
	var d *delegate.Daemon
	spent := func(ctx context.Context) (float64, error) { return d.Store().SpentToday(ctx, "api", time.Now()) }
	if cfg.Engines == nil {
		cfg.Engines = f.ladder(project, spent)
	}
	if cfg.StateDir == "" {
		cfg.StateDir = t.TempDir()
	}
	cfg.Checker = &controls.Pipeline{Load: delegate.LoadFiles}
	d, err := delegate.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, project
}

// ollama starts a fake Ollama with localModel loaded (or nothing loaded).
func ollama(t *testing.T, loaded bool, replies ...fakeollama.Reply) *fakeollama.Server {
	c := fakeollama.Config{Installed: []string{localModel}, Replies: replies}
	if loaded {
		c.Loaded = []string{localModel}
	}
	s := fakeollama.New(c)
	t.Cleanup(s.Close)
	return s
}

var ignoreTryTimes = cmpopts.IgnoreFields(store.Try{}, "RequestID", "Duration", "StartedAt", "EndedAt", "InputTokens", "OutputTokens")

// checkStore asserts the request's record: its answer, its tries, and
// whether its output was written.
func checkStore(t *testing.T, st *store.Store, a wire.Answer, wantTries []store.Try, written bool) {
	t.Helper()
	ctx := context.Background()
	rec, err := st.Get(ctx, a.DemandeID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != a.Fin || rec.Answer == nil {
		t.Errorf("stored state %q (answer %v), want %q", rec.State, rec.Answer, a.Fin)
	} else if diff := cmp.Diff(a, *rec.Answer); diff != "" {
		t.Errorf("stored answer (-answered +stored):\n%s", diff)
	}
	tries, err := st.ListTries(ctx, a.DemandeID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantTries, tries, ignoreTryTimes, cmpopts.EquateEmpty(),
		cmpopts.IgnoreFields(store.Try{}, "Error")); diff != "" {
		t.Errorf("stored tries (-want +got):\n%s", diff)
	}
	if rec.Attempts != len(tries) {
		t.Errorf("record counts %d attempts, %d tries stored", rec.Attempts, len(tries))
	}
	out, err := st.Output(ctx, a.DemandeID)
	switch {
	case written && (err != nil || !out.Written() || out.Path != a.Sortie):
		t.Errorf("output record %+v, %v; want %s written", out, err, a.Sortie)
	case !written && err == nil && out.Written():
		t.Errorf("output recorded written: %+v", out)
	}
}

// checkSortie asserts the file at sortie holds want, or is absent when want
// is "", and that no temporary file was left beside it.
func checkSortie(t *testing.T, project, sortie, want string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(project, sortie))
	switch {
	case want == "" && !errors.Is(err, os.ErrNotExist):
		t.Errorf("%s written (%q, %v), want nothing", sortie, data, err)
	case want != "" && (err != nil || string(data) != want):
		t.Errorf("%s = %q, %v; want %q", sortie, data, err, want)
	}
	left, _ := filepath.Glob(filepath.Join(project, ".*.tmp"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestDaemonScenarios(t *testing.T) {
	type calls struct{ local, api, haiku int }
	tests := []struct {
		name     string
		loaded   bool // a model is loaded in Ollama
		local    []fakeollama.Reply
		api      []fakeopenai.Reply // nil: no key
		haiku    []fakeapi.Step     // nil: no key
		spent    float64            // api spend recorded earlier today
		none     bool               // no engine configured at all
		want     wire.Answer        // DemandeID is filled in
		wantMsg  []string           // in Message
		wantFile string             // at sortie; "" nothing
		tries    []store.Try
		calls    calls
		sent     func(t *testing.T, f fakes) // what the models were sent
	}{{
		name:   "valid at the first try on local",
		loaded: true, local: []fakeollama.Reply{fakeollama.Answer(fencedPy)},
		want: wire.Answer{Etat: wire.Valide, Fin: wire.Valide, Verdict: wire.VerdictValide, Controles: okControls,
			Essais: 1, MoteurFinal: "local", ModeleFinal: localModel, Sortie: "add.py",
			Diff: &wire.Diff{Files: []string{"add.py"}, Added: 2}},
		wantFile: goodPy,
		tries:    []store.Try{{N: 1, Engine: "local", Model: localModel, OK: true, Controls: okControls}},
		calls:    calls{local: 1},
		sent: func(t *testing.T, f fakes) {
			r := f.ollama.Requests()[0]
			if r.Model != localModel || len(r.Messages) != 2 || r.Messages[0].Role != "system" ||
				!strings.Contains(r.LastUser(), "Write add(a, b) returning the sum.") || !strings.Contains(r.LastUser(), "add.py") {
				t.Errorf("local was sent %s %+v", r.Model, r.Messages)
			}
		},
	}, {
		name:   "syntax error, then fixed with the failure sent back",
		loaded: true, local: []fakeollama.Reply{fakeollama.Answer(badPy), fakeollama.Answer(fencedPy)},
		want: wire.Answer{Etat: wire.Valide, Fin: wire.Valide, Verdict: wire.VerdictValide, Controles: okControls,
			Essais: 2, MoteurFinal: "local", ModeleFinal: localModel, Sortie: "add.py",
			Diff: &wire.Diff{Files: []string{"add.py"}, Added: 2}},
		wantFile: goodPy,
		tries: []store.Try{
			{N: 1, Engine: "local", Model: localModel, Controls: failedControls, ErrorKind: "control_failed"},
			{N: 2, Engine: "local", Model: localModel, OK: true, Controls: okControls},
		},
		calls: calls{local: 2},
		sent: func(t *testing.T, f fakes) {
			reqs := f.ollama.Requests()
			want := append(append([]fakeollama.Message(nil), reqs[0].Messages...),
				fakeollama.Message{Role: "assistant", Content: badPy},
				fakeollama.Message{Role: "user", Content: "Your answer failed these checks:\n- syntaxe: " + badPyFailure +
					"\nFix them and answer again with the complete artefact."})
			if diff := cmp.Diff(want, reqs[1].Messages); diff != "" {
				t.Errorf("retry prompt (-want +got):\n%s", diff)
			}
		},
	}, {
		name:   "two local failures, then api",
		loaded: true, local: []fakeollama.Reply{fakeollama.Answer(badPy), fakeollama.Answer(badPy)},
		api: []fakeopenai.Reply{fakeopenai.Answer(fencedPy).WithCost(0.002)},
		want: wire.Answer{Etat: wire.Valide, Fin: wire.Valide, Verdict: wire.VerdictValide, Controles: okControls,
			Essais: 3, MoteurFinal: "api", ModeleFinal: apiModel, Sortie: "add.py",
			Diff: &wire.Diff{Files: []string{"add.py"}, Added: 2}},
		wantFile: goodPy,
		tries: []store.Try{
			{N: 1, Engine: "local", Model: localModel, Controls: failedControls, ErrorKind: "control_failed"},
			{N: 2, Engine: "local", Model: localModel, Controls: failedControls, ErrorKind: "control_failed"},
			{N: 3, Engine: "api", Model: apiModel, CostUSD: 0.002, OK: true, Controls: okControls},
		},
		calls: calls{local: 2, api: 1},
		sent: func(t *testing.T, f fakes) {
			// The next engine starts from the request, not from local's repairs.
			var want []fakeopenai.Message
			for _, m := range f.ollama.Requests()[0].Messages {
				want = append(want, fakeopenai.Message{Role: m.Role, Content: m.Content})
			}
			r := f.openai.Requests()[0]
			if diff := cmp.Diff(want, r.Messages); diff != "" || r.Model != apiModel {
				t.Errorf("api was sent model %s (-want +got):\n%s", r.Model, diff)
			}
		},
	}, {
		name:   "every try fails its controls",
		loaded: true, local: []fakeollama.Reply{fakeollama.Answer(badPy), fakeollama.Answer(badPy)},
		api: []fakeopenai.Reply{fakeopenai.Answer(badPy), fakeopenai.Answer(cutPy)},
		want: wire.Answer{Etat: wire.EchecControle, Fin: wire.EchecControle, Verdict: wire.VerdictEchecControle,
			Controles: []wire.Control{
				{Nom: "syntaxe", OK: false, Message: "line 2:5: syntax error near `return (a + b`"},
				{Nom: "complet", OK: false, Message: "truncated after line 2 `return (a + b`: finish the code"},
			},
			Essais: 4, MoteurFinal: "api", ModeleFinal: apiModel},
		wantMsg: []string{"the last failures are in `controles`"},
		tries: []store.Try{
			{N: 1, Engine: "local", Model: localModel, Controls: failedControls, ErrorKind: "control_failed"},
			{N: 2, Engine: "local", Model: localModel, Controls: failedControls, ErrorKind: "control_failed"},
			{N: 3, Engine: "api", Model: apiModel, Controls: failedControls, ErrorKind: "control_failed"},
			{N: 4, Engine: "api", Model: apiModel, ErrorKind: "control_failed", Controls: []wire.Control{
				{Nom: "syntaxe", OK: false, Message: "line 2:5: syntax error near `return (a + b`"},
				{Nom: "complet", OK: false, Message: "truncated after line 2 `return (a + b`: finish the code"},
			}},
		},
		calls: calls{local: 2, api: 2},
	}, {
		name:   "spend cap reached, local not ready, haiku keyless: subagent call",
		loaded: false, api: []fakeopenai.Reply{fakeopenai.Good()}, spent: 2.5,
		want:    wire.Answer{Etat: wire.BesoinClaude, Fin: wire.BesoinClaude, Raison: "aucun_executeur"},
		wantMsg: []string{"local: no model loaded", "api: daily cap reached (2.50 of 2.00 USD)", "haiku: no key", "`appel`"},
	}, {
		name:    "no engine configured",
		none:    true,
		want:    wire.Answer{Etat: wire.BesoinClaude, Fin: wire.BesoinClaude, Raison: "aucun_executeur"},
		wantMsg: []string{"No executor could take this bout (no engine configured)"},
	}, {
		name:   "429 with Retry-After on api: the next engine at once",
		loaded: false, api: []fakeopenai.Reply{fakeopenai.RateLimited("30")},
		haiku: []fakeapi.Step{{Name: "add", Reply: []fakeapi.Block{fakeapi.Text(fencedPy)}}},
		want: wire.Answer{Etat: wire.Valide, Fin: wire.Valide, Verdict: wire.VerdictValide, Controles: okControls,
			Essais: 2, MoteurFinal: "haiku", ModeleFinal: haiku.DefaultModel, Sortie: "add.py",
			Diff: &wire.Diff{Files: []string{"add.py"}, Added: 2}},
		wantFile: goodPy,
		tries: []store.Try{
			{N: 1, Engine: "api", Model: apiModel, ErrorKind: "rate_limited"},
			// fakeapi bills 100 tokens in and one out per four characters.
			{N: 2, Engine: "haiku", Model: haiku.DefaultModel, CostUSD: (100*1.0 + float64(1+len(fencedPy)/4)*5.0) / 1e6,
				OK: true, Controls: okControls},
		},
		calls: calls{api: 1, haiku: 1},
		sent: func(t *testing.T, f fakes) {
			r := f.anthropic.Requests()[0]
			if len(r.Messages) != 1 || !strings.Contains(r.Messages[0].Text(), "Write add(a, b)") || r.System == "" {
				t.Errorf("haiku was sent system %q, %+v", r.System, r.Messages)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakes{ollama: ollama(t, tt.loaded, tt.local...)}
			if tt.api != nil {
				f.openai = fakeopenai.New(tt.api...)
				t.Cleanup(f.openai.Close)
			}
			if tt.haiku != nil {
				f.anthropic = fakeapi.New(tt.haiku)
				t.Cleanup(f.anthropic.Close)
			}
			// CallWait far above any scenario: a pending answer means the
			// daemon waited where it should not (a Retry-After, say).
			cfg := delegate.Config{CallWait: 20 * time.Second}
			if tt.none {
				cfg.Engines = []delegate.Engine{}
			}
			d, project := openDaemon(t, f, cfg)
			ctx := t.Context()
			if tt.spent > 0 {
				id, err := d.Store().Create(ctx, "s0", project, wire.Request{Consigne: "earlier"})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := d.Store().AddTry(ctx, store.Try{RequestID: id, Engine: "api", Model: apiModel, CostUSD: tt.spent}); err != nil {
					t.Fatal(err)
				}
			}

			got, err := d.Submit(ctx, "s1", project, addRequest())
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.DemandeID = got.DemandeID
			ok := want.Fin == wire.Valide
			want.OK = &ok
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(wire.Answer{}, "Message", "Appel")); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(got.Message, m) {
					t.Errorf("message %q lacks %q", got.Message, m)
				}
			}
			checkAppel(t, got)
			checkSortie(t, project, "add.py", tt.wantFile)
			checkStore(t, d.Store(), got, tt.tries, tt.wantFile != "")

			gotCalls := calls{local: len(f.ollama.Requests())}
			if f.openai != nil {
				gotCalls.api = len(f.openai.Requests())
			}
			if f.anthropic != nil {
				gotCalls.haiku = len(f.anthropic.Requests())
			}
			if gotCalls != tt.calls {
				t.Errorf("models called %+v, want %+v", gotCalls, tt.calls)
			}
			if tt.sent != nil && gotCalls == tt.calls {
				tt.sent(t, f)
			}
		})
	}
}

// checkAppel asserts that an aucun_executeur answer hands the bout back as
// a ready haiku subagent call, and that no other answer carries one.
func checkAppel(t *testing.T, a wire.Answer) {
	t.Helper()
	if a.Raison != "aucun_executeur" {
		if a.Appel != nil {
			t.Errorf("appel in a %s answer: %+v", a.Fin, a.Appel)
		}
		return
	}
	if a.Appel == nil {
		t.Fatal("aucun_executeur without appel")
	}
	prompt, _ := a.Appel.Input["prompt"].(string)
	got := map[string]any{"tool": a.Appel.Tool, "model": a.Appel.Input["model"], "type": a.Appel.Input["subagent_type"],
		"background": a.Appel.Input["run_in_background"], "description": a.Appel.Input["description"],
		"asks":   strings.Contains(prompt, "Write add(a, b) returning the sum."),
		"writes": strings.Contains(prompt, "Write the result to add.py with the Write tool")}
	want := map[string]any{"tool": "Agent", "model": "haiku", "type": "general-purpose", "background": false,
		"description": "miam bout: Write add(a, b) returning the sum.", "asks": true, "writes": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("appel (-want +got):\n%s", diff)
	}
}

func TestDaemonRefusesSortieOutsideProject(t *testing.T) {
	tests := []struct {
		name string
		// link makes project/name a symlink to somewhere in outside.
		link, target string
		sortie       string
	}{
		{name: "symlinked directory", link: "out", target: ".", sortie: "out/add.py"},
		{name: "symlinked file", link: "add.py", target: "add.py", sortie: "add.py"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakes{ollama: ollama(t, true, fakeollama.Answer(fencedPy))}
			d, project := openDaemon(t, f, delegate.Config{})
			outside := t.TempDir()
			target := filepath.Join(outside, tt.target)
			if tt.target != "." {
				if err := os.WriteFile(target, []byte("# theirs\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(target, filepath.Join(project, tt.link)); err != nil {
				t.Fatal(err)
			}
			req := addRequest()
			req.Sortie = tt.sortie
			got, err := d.Submit(t.Context(), "s1", project, req)
			if err != nil {
				t.Fatal(err)
			}
			if got.Fin != wire.BesoinClaude || got.Raison != "sortie_refusee" || got.Corps != goodPy ||
				!strings.Contains(got.Erreur, delegate.ErrOutsideProject.Error()) {
				t.Errorf("answer %+v, want besoin_claude sortie_refusee carrying the body", got)
			}
			entries, _ := os.ReadDir(outside)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			want := []string(nil)
			if tt.target != "." {
				want = []string{tt.target}
				if data, _ := os.ReadFile(target); string(data) != "# theirs\n" {
					t.Errorf("the file outside was changed: %q", data)
				}
			}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("outside the project (-want +got):\n%s", diff)
			}
			checkStore(t, d.Store(), got, []store.Try{{N: 1, Engine: "local", Model: localModel, OK: true, Controls: okControls}}, false)
		})
	}
}

// memNet is an in-memory network for a synctest bubble: real sockets are
// not durably blocking, so a request waiting on one would stop the fake
// clock. Its listener's server and its client's transport live and die in
// the bubble.
type memNet struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (m *memNet) Accept() (net.Conn, error) {
	select {
	case c := <-m.conns:
		return c, nil
	case <-m.done:
		return nil, net.ErrClosed
	}
}

func (m *memNet) Close() error {
	m.once.Do(func() { close(m.done) })
	return nil
}

func (m *memNet) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func (m *memNet) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case m.conns <- server:
		return client, nil
	case <-m.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// serveInMemory serves h on a memNet until the test ends and returns a
// client that reaches it whatever the URL. Call it inside the bubble.
func serveInMemory(t *testing.T, h http.Handler) *http.Client {
	m := &memNet{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h}
	go srv.Serve(m)
	tr := &http.Transport{DialContext: m.dial}
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	return &http.Client{Transport: tr}
}

// bubbleDaemon opens, inside a synctest bubble, a daemon whose only engine
// is local on o over an in-memory network.
func bubbleDaemon(t *testing.T, o *fakeollama.Server, cfg delegate.Config) (*delegate.Daemon, string) {
	t.Helper()
	hc := serveInMemory(t, o.Handler())
	cfg.Engines = []delegate.Engine{&local.Engine{Host: o.URL(), Model: localModel, HTTPClient: hc}}
	return openDaemon(t, fakes{}, cfg)
}

// attendre makes GET /attendre through the daemon's handler with the
// header line of attente.hdr (none when hdr is ""), and returns the status
// and the decoded answer.
func attendre(d *delegate.Daemon, hdr, id string) (int, wire.Answer) {
	req := httptest.NewRequest(http.MethodGet, "/attendre?demande_id="+id, nil)
	if hdr != "" {
		name, value, _ := strings.Cut(hdr, ": ")
		req.Header.Set(name, value)
	}
	rec := httptest.NewRecorder()
	d.Handler().ServeHTTP(rec, req)
	var a wire.Answer
	_ = json.Unmarshal(rec.Body.Bytes(), &a)
	return rec.Code, a
}

// headerLine reads the daemon's attente.hdr, beside its database.
func headerLine(t *testing.T, d *delegate.Daemon) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(d.Store().Path()), delegate.HeaderFile))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(data))
	if line != delegate.HeaderLine(d.Token()) {
		t.Fatalf("attente.hdr holds %q", line)
	}
	return line
}

func TestDaemonCallWaitThenAttendre(t *testing.T) {
	o := ollama(t, true, fakeollama.Delayed(time.Minute, fakeollama.Answer(fencedPy)))
	synctest.Test(t, func(t *testing.T) {
		d, project := bubbleDaemon(t, o, delegate.Config{CallWait: 5 * time.Second})
		start := time.Now()
		pending, err := d.Submit(t.Context(), "s1", project, addRequest())
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 5*time.Second {
			t.Errorf("Submit answered after %v, want call_wait 5s", waited)
		}
		id := pending.DemandeID
		want := wire.Answer{DemandeID: id, Etat: wire.EnCours, Reprise: "miam attendre " + id}
		if diff := cmp.Diff(want, pending, cmpopts.IgnoreFields(wire.Answer{}, "Message")); diff != "" || id == "" {
			t.Errorf("pending answer (-want +got):\n%s", diff)
		}
		if !strings.Contains(pending.Message, "run_in_background") {
			t.Errorf("pending message %q does not say how to wait", pending.Message)
		}
		checkSortie(t, project, "add.py", "")

		if code, _ := attendre(d, "", id); code != http.StatusUnauthorized {
			t.Errorf("/attendre without the token: %d, want 401", code)
		}
		if code, _ := attendre(d, "Authorization: Bearer nope", id); code != http.StatusUnauthorized {
			t.Errorf("/attendre with a wrong token: %d, want 401", code)
		}
		hdr := headerLine(t, d)
		code, got := attendre(d, hdr, id)
		if code != http.StatusOK {
			t.Fatalf("/attendre: %d", code)
		}
		if took := time.Since(start); took != time.Minute {
			t.Errorf("/attendre answered at %v, want when the model answered (1m)", took)
		}
		ok := true
		wantEnd := wire.Answer{OK: &ok, DemandeID: id, Etat: wire.Valide, Fin: wire.Valide, Verdict: wire.VerdictValide,
			Controles: okControls, Essais: 1, MoteurFinal: "local", ModeleFinal: localModel, Sortie: "add.py",
			Diff: &wire.Diff{Files: []string{"add.py"}, Added: 2}}
		if diff := cmp.Diff(wantEnd, got); diff != "" {
			t.Errorf("/attendre answer (-want +got):\n%s", diff)
		}
		checkSortie(t, project, "add.py", goodPy)
		checkStore(t, d.Store(), got, []store.Try{{N: 1, Engine: "local", Model: localModel, OK: true, Controls: okControls}}, true)

		// annuler after the end keeps the answer.
		if a, err := d.Cancel(t.Context(), id); err != nil || !cmp.Equal(a, got) {
			t.Errorf("annuler after valide: %+v, %v; want the valide answer kept", a, err)
		}
		checkSortie(t, project, "add.py", goodPy)
		// A second wait on an ended request answers at once; an unknown
		// one is perdue.
		if code, again := attendre(d, hdr, id); code != http.StatusOK || again.Fin != wire.Valide {
			t.Errorf("/attendre again: %d %+v", code, again)
		}
		if code, lost := attendre(d, hdr, "nope"); code != http.StatusNotFound || lost.Fin != wire.Perdue || lost.Raison != "demande_inconnue" {
			t.Errorf("/attendre unknown: %d %+v", code, lost)
		}
	})
}

func TestDaemonCancelWhileTheModelHangs(t *testing.T) {
	o := ollama(t, true, fakeollama.Hang())
	synctest.Test(t, func(t *testing.T) {
		d, project := bubbleDaemon(t, o, delegate.Config{CallWait: time.Second})
		pending, err := d.Submit(t.Context(), "s1", project, addRequest())
		if err != nil {
			t.Fatal(err)
		}
		if pending.OK != nil || len(o.Requests()) != 1 {
			t.Fatalf("before annuler: answer %+v, %d chat requests", pending, len(o.Requests()))
		}
		id := pending.DemandeID
		hdr := headerLine(t, d)
		waited := make(chan wire.Answer)
		go func() {
			_, a := attendre(d, hdr, id)
			waited <- a
		}()
		synctest.Wait() // the waiter waits

		got, err := d.Cancel(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		no := false
		want := wire.Answer{OK: &no, DemandeID: id, Etat: wire.Annule, Fin: wire.Annule, Message: "cancelled"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("annuler (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, <-waited); diff != "" {
			t.Errorf("/attendre after annuler (-want +got):\n%s", diff)
		}
		synctest.Wait() // the request's goroutine has seen the cancellation
		if a, err := d.Follow(t.Context(), id, 0); err != nil || a.Fin != wire.Annule {
			t.Errorf("suivre after annuler: %+v, %v", a, err)
		}
		checkSortie(t, project, "add.py", "")
		// The abandoned try is on record, with its cause.
		tries, err := d.Store().ListTries(t.Context(), id)
		if err != nil || len(tries) != 1 || tries[0].OK || !strings.Contains(tries[0].Error, "cancelled by annuler") {
			t.Errorf("tries after annuler: %+v, %v", tries, err)
		}
		checkStore(t, d.Store(), got, []store.Try{{N: 1, Engine: "local", Model: localModel, ErrorKind: "transient"}}, false)
		if _, err := d.Cancel(t.Context(), "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("annuler of an unknown request: %v, want ErrNotFound", err)
		}
	})
}

func TestDaemonWatchdog(t *testing.T) {
	o := ollama(t, true, fakeollama.Hang())
	synctest.Test(t, func(t *testing.T) {
		d, project := bubbleDaemon(t, o, delegate.Config{CallWait: time.Hour, SansProgres: 30 * time.Second})
		start := time.Now()
		got, err := d.Submit(t.Context(), "s1", project, addRequest())
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < 30*time.Second || took > 33*time.Second {
			t.Errorf("the watchdog ended the request after %v, want 30s (+ one tick)", took)
		}
		no := false
		want := wire.Answer{OK: &no, DemandeID: got.DemandeID, Etat: wire.BesoinClaude, Fin: wire.BesoinClaude,
			Raison: "sans_progres", Essais: 1,
			Message: "No progress for 30s during try 1 on local; decide whether to retry or take it over."}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("answer (-want +got):\n%s", diff)
		}
		checkSortie(t, project, "add.py", "")
		checkStore(t, d.Store(), got, []store.Try{{N: 1, Engine: "local", Model: localModel, ErrorKind: "transient"}}, false)
	})
}

func TestDaemonTransientRetry(t *testing.T) {
	o := ollama(t, true, fakeollama.ServerError(), fakeollama.Answer(fencedPy))
	synctest.Test(t, func(t *testing.T) {
		d, project := bubbleDaemon(t, o, delegate.Config{})
		start := time.Now()
		got, err := d.Submit(t.Context(), "s1", project, addRequest())
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != time.Second {
			t.Errorf("valide after %v, want the first backoff (1s)", took)
		}
		ok := true
		want := wire.Answer{OK: &ok, DemandeID: got.DemandeID, Etat: wire.Valide, Fin: wire.Valide, Verdict: wire.VerdictValide,
			Controles: okControls, Essais: 1, MoteurFinal: "local", ModeleFinal: localModel, Sortie: "add.py",
			Diff: &wire.Diff{Files: []string{"add.py"}, Added: 2}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("answer (-want +got):\n%s", diff)
		}
		checkSortie(t, project, "add.py", goodPy)
		// One try: the 500 was retried inside it, on the same engine with
		// the same prompt.
		checkStore(t, d.Store(), got, []store.Try{{N: 1, Engine: "local", Model: localModel, OK: true, Controls: okControls}}, true)
		reqs := o.Requests()
		if len(reqs) != 2 || !cmp.Equal(reqs[0].Messages, reqs[1].Messages) {
			t.Errorf("chat requests: %d, want the same prompt twice", len(reqs))
		}
	})
}
