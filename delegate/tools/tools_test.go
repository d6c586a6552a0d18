package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"miam/controls"
	"miam/delegate"
	"miam/delegate/engines/haiku"
	"miam/delegate/wire"
)

// connect serves the tools on a real daemon (no engine but a keyless Haiku)
// and returns an MCP client session speaking to them in memory.
func connect(t *testing.T) (*mcp.ClientSession, string) {
	t.Helper()
	proj := t.TempDir()
	d, err := delegate.Open(delegate.Config{StateDir: t.TempDir(), Engines: []delegate.Engine{&haiku.Engine{}},
		Checker: &controls.Pipeline{Load: delegate.LoadFiles}, CallWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	srv := NewServer(d, Session{ID: "s1", Project: proj, CallWait: time.Second}, "test")
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, proj
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestToolsListed(t *testing.T) {
	cs, _ := connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if d := cmp.Diff([]string{"annuler", "deleguer", "etat", "exception", "suivre"}, names); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
}

func TestDeleguerRefusesBadRequestsNamingFields(t *testing.T) {
	cs, _ := connect(t)
	tests := []struct {
		name string
		args any
		want []string
	}{
		{"missing consigne and bad type", map[string]any{"type": "poem", "sortie": "../x.py"}, []string{"consigne: required", "type:", "sortie:"}},
		{"misspelt field", map[string]any{"consigne": "x", "sortei": "a.py"}, []string{`unknown field "sortei"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, "deleguer", tc.args)
			if !res.IsError {
				t.Fatalf("accepted: %s", text(res))
			}
			for _, w := range tc.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("error %q does not name %q", text(res), w)
				}
			}
		})
	}
}

// TestDeleguerWithoutExecutorHandsBack: with no executor, the answer comes at
// once as structured content, besoin_claude aucun_executeur with a ready
// Haiku subagent call.
func TestDeleguerWithoutExecutorHandsBack(t *testing.T) {
	cs, _ := connect(t)
	res := call(t, cs, "deleguer", map[string]any{"consigne": "Write add(a, b)", "sortie": "src/calc.py", "attendus": []string{"add"}})
	if res.IsError {
		t.Fatalf("error: %s", text(res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var a wire.Answer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	if a.OK == nil || *a.OK || a.Fin != wire.BesoinClaude || a.Raison != "aucun_executeur" || a.Appel == nil || a.Appel.Input["model"] != "haiku" {
		t.Errorf("answer %s", raw)
	}
	// suivre on it returns the same terminal answer at once.
	res = call(t, cs, "suivre", map[string]any{"demande_id": a.DemandeID, "attente_s": 30})
	raw2, _ := json.Marshal(res.StructuredContent)
	if string(raw2) != string(raw) {
		t.Errorf("suivre %s, want %s", raw2, raw)
	}
}

func TestSuivreUnknownAndEtat(t *testing.T) {
	cs, _ := connect(t)
	if res := call(t, cs, "suivre", map[string]any{"demande_id": "nope"}); !res.IsError {
		t.Errorf("suivre of an unknown id: %s", text(res))
	}
	if res := call(t, cs, "suivre", map[string]any{}); !res.IsError || !strings.Contains(text(res), "demande_id") {
		t.Errorf("suivre without id: %s", text(res))
	}
	res := call(t, cs, "etat", map[string]any{})
	if res.IsError || !strings.Contains(text(res), `"name":"haiku"`) || !strings.Contains(text(res), "no key") {
		t.Errorf("etat: %s", text(res))
	}
}

func TestException(t *testing.T) {
	cs, _ := connect(t)
	tests := []struct {
		name    string
		args    map[string]any
		wantErr string
	}{
		{"granted", map[string]any{"raison": "concurrence", "fichiers": []string{"src/a.py"}, "lignes": 20}, ""},
		{"unknown reason", map[string]any{"raison": "flemme", "fichiers": []string{"src/a.py"}, "lignes": 20}, "raison"},
		{"no file", map[string]any{"raison": "secret", "fichiers": []string{}, "lignes": 5}, "fichiers"},
		{"no lines", map[string]any{"raison": "securite", "fichiers": []string{"a.go"}, "lignes": 0}, "lignes"},
		{"misspelt field", map[string]any{"raison": "secret", "fichier": []string{"a.go"}, "lignes": 5}, "fichier"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, "exception", tc.args)
			if tc.wantErr != "" {
				if !res.IsError || !strings.Contains(text(res), tc.wantErr) {
					t.Errorf("got %q (error %v), want an error naming %q", text(res), res.IsError, tc.wantErr)
				}
				return
			}
			if res.IsError {
				t.Fatalf("error: %s", text(res))
			}
			var a exceptionAnswer
			if err := json.Unmarshal([]byte(text(res)), &a); err != nil {
				t.Fatal(err)
			}
			if !a.OK || a.Lignes != 20 || a.Raison != "concurrence" {
				t.Errorf("answer %+v", a)
			}
		})
	}
}
