package delegate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"miam/delegate"
	"miam/delegate/wire"
)

// TestStatusWrittenAtStart checks that Run writes status.json before it
// serves, with each engine's availability and the api's allow-list: the
// hook reads it to name the executor (SPEC §8 rule 7).
func TestStatusWrittenAtStart(t *testing.T) {
	dir := t.TempDir()
	d, project := openDaemon(t, fakes{ollama: ollama(t, true)}, delegate.Config{StateDir: dir})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	defer func() { cancel(); <-done }()

	// The listener is open since Open, but requests are answered only once
	// Run serves, which is after the first status write.
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", d.Addr().Port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	data, err := os.ReadFile(filepath.Join(dir, wire.StatusFile))
	if err != nil {
		t.Fatal(err)
	}
	var got wire.Status
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if age := time.Since(got.Updated); age < -time.Second || age > time.Minute {
		t.Errorf("updated %v, want now", got.Updated)
	}
	want := []wire.EngineStatus{
		{Name: "local", Ready: true, Model: localModel},
		{Name: "api", Model: apiModel, Reason: "no key", Projects: []string{project}},
		{Name: "haiku", Model: "claude-haiku-4-5"},
	}
	if d := cmp.Diff(want, got.Engines, cmpopts.IgnoreFields(wire.EngineStatus{}, "Reason")); d != "" {
		t.Errorf("engines (-want +got):\n%s", d)
	}
	if got.Engines[1].Reason != "no key" || got.Engines[2].Reason == "" {
		t.Errorf("reasons: api %q, haiku %q", got.Engines[1].Reason, got.Engines[2].Reason)
	}
}

// TestWriteStatusNow rewrites the file on demand, replacing the previous one.
func TestWriteStatusNow(t *testing.T) {
	dir := t.TempDir()
	d, _ := openDaemon(t, fakes{ollama: ollama(t, false)}, delegate.Config{StateDir: dir})
	if err := d.WriteStatus(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, wire.StatusFile))
	if err != nil {
		t.Fatal(err)
	}
	var got wire.Status
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Engines) != 3 || got.Engines[0].Ready || got.Engines[0].Reason == "" {
		t.Errorf("local with no model loaded: %+v", got.Engines)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, wire.StatusFile+".*"))
	if len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
}
