package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"miam/budgets"
	"miam/delegate/wire"
)

var update = flag.Bool("update", false, "rewrite the expected sections of golden fixtures")

// goldenDir holds one txtar archive per case: the payload as Claude Code
// sends it (paths under <PROJ>), optionally the state before, the project's
// files and config, the daemon's status.json (rule 7; missing by default),
// and the expected stdout, exit code and state after.
const goldenDir = "../../fixtures/hooks/claude"

// Sections of a golden archive.
const (
	secPayload     = "payload.json"
	secStateBefore = "state.json"
	secConfig      = "config.yaml"
	secFilesPrefix = "files/"
	secStdout      = "stdout"
	secExit        = "exit"
	secStateAfter  = "state.after.json"
	// secStatus is the daemon's status.json (rule 7's executors), placed
	// in the state home; without it the executor is "unknown".
	secStatus = "status.json"
	// secTraces is the trace ledger after the call, its argument hashes
	// written <HASH> (they hash paths under the test's <PROJ>). It is
	// checked, and rewritten by -update, only in the archives that have it.
	secTraces = "traces.jsonl"
)

// argsHash is an argument hash in a ledger line.
var argsHash = regexp.MustCompile(`"args":"[0-9a-f]{32}"`)

// goldenNow is the hook's clock in golden runs; a status.json section is
// dated against it.
var goldenNow = time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)

func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden fixtures in %s (%v)", goldenDir, err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			runGolden(t, path)
		})
	}
}

func runGolden(t *testing.T, path string) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()
	sections := map[string][]byte{}
	for _, f := range ar.Files {
		data := bytes.ReplaceAll(f.Data, []byte("<PROJ>"), []byte(proj))
		sections[f.Name] = data
		if rel, ok := strings.CutPrefix(f.Name, secFilesPrefix); ok {
			writeFile(t, filepath.Join(proj, rel), data)
		}
	}
	payload, ok := sections[secPayload]
	if !ok {
		t.Fatalf("%s: no %s section", path, secPayload)
	}
	var sessionID struct {
		SessionID string `json:"session_id"`
	}
	_ = json.Unmarshal(payload, &sessionID)
	store := budgets.Store{Dir: filepath.Join(proj, ".miam", "state")}
	if st, ok := sections[secStateBefore]; ok {
		writeFile(t, store.Path(sessionID.SessionID), st)
	}
	if cfg, ok := sections[secConfig]; ok {
		writeFile(t, filepath.Join(proj, ".miam", "config.yaml"), cfg)
	}

	stateHome := t.TempDir()
	if st, ok := sections[secStatus]; ok {
		writeFile(t, filepath.Join(stateHome, "miam", wire.StatusFile), st)
	}

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, bytes.NewReader(payload), &stdout, &stderr,
		Env{ProjectDir: proj, ConfigHome: filepath.Join(proj, "no-user-config"), StateHome: stateHome, Now: goldenNow})

	gotOut := bytes.ReplaceAll(stdout.Bytes(), []byte(proj), []byte("<PROJ>"))
	gotExit := []byte(strconv.Itoa(code) + "\n")
	gotState := []byte("(none)\n")
	if data, err := budgets.ReadStateFile(store.Path(sessionID.SessionID)); err == nil {
		gotState = pretty(data)
	}
	got := map[string][]byte{secStdout: pretty(gotOut), secExit: gotExit, secStateAfter: gotState}
	names := []string{secStdout, secExit, secStateAfter}
	if _, ok := sections[secTraces]; ok {
		traces, err := os.ReadFile(filepath.Join(proj, ".miam", "traces.jsonl"))
		if err != nil {
			traces = []byte("(none)\n")
		}
		got[secTraces] = argsHash.ReplaceAll(traces, []byte(`"args":"<HASH>"`))
		names = append(names, secTraces)
	}

	if *update {
		for _, name := range names {
			setSection(ar, name, got[name])
		}
		if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, name := range names {
		want, ok := sections[name]
		if !ok {
			t.Errorf("missing section %s (run with -update)", name)
			continue
		}
		want = bytes.ReplaceAll(want, []byte(proj), []byte("<PROJ>"))
		if d := cmp.Diff(string(want), string(got[name])); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
	if code != 0 {
		t.Errorf("exit code %d: miam-hook must always exit 0", code)
	}
	if stdout.Len() > 0 && !json.Valid(stdout.Bytes()) {
		t.Errorf("stdout is not one JSON document: %q", stdout.String())
	}
}

// pretty indents JSON stdout so golden diffs are readable; the exact bytes
// are checked to be one JSON document separately.
func pretty(b []byte) []byte {
	if len(bytes.TrimSpace(b)) == 0 {
		return []byte("(empty)\n")
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(b), "", "  "); err != nil {
		return b
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

func setSection(ar *txtar.Archive, name string, data []byte) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = data
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: data})
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
