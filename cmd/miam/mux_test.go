package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"miam/controls"
	"miam/delegate"
	"miam/delegate/engines/haiku"
	"miam/delegate/wire"
)

// headerTransport adds the daemon's token and the session headers.
type headerTransport struct {
	token, session, project string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.token != "" {
		r.Header.Set("Authorization", "Bearer "+h.token)
	}
	r.Header.Set("X-Miam-Session", h.session)
	r.Header.Set("X-Miam-Project", h.project)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPOverHTTP: the daemon's /mcp endpoint serves the same tools over
// streamable HTTP, behind the bearer token.
func TestMCPOverHTTP(t *testing.T) {
	d, err := delegate.Open(delegate.Config{StateDir: t.TempDir(), Engines: []delegate.Engine{&haiku.Engine{}},
		Checker: &controls.Pipeline{Load: delegate.LoadFiles}, CallWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srv := httptest.NewServer(daemonMux(d, time.Second))
	defer srv.Close()
	proj := t.TempDir()
	ctx := context.Background()

	connect := func(token string) (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: headerTransport{token: token, session: "s-http", project: proj}}}
		return mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, tr, nil)
	}
	if cs, err := connect("wrong"); err == nil {
		cs.Close()
		t.Fatal("connected to /mcp with a wrong token")
	}
	cs, err := connect(d.Token())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deleguer", Arguments: map[string]any{"consigne": "Write add", "sortie": "a.py"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var a wire.Answer
	if err := json.Unmarshal(raw, &a); err != nil || a.Fin != wire.BesoinClaude || a.Raison != "aucun_executeur" {
		t.Fatalf("answer %s (%v)", raw, err)
	}
	rec, err := d.Store().Get(ctx, a.DemandeID)
	if err != nil || rec.SessionID != "s-http" || rec.Project != proj {
		t.Errorf("request recorded with session %q project %q (%v)", rec.SessionID, rec.Project, err)
	}
	if !strings.HasPrefix(a.DemandeID, "d") {
		t.Errorf("demande_id %q", a.DemandeID)
	}
}
