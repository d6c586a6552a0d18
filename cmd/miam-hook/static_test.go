package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStaticBuild builds the hook as README's install does, linked
// statically against glibc and against musl, and checks that each binary
// decides: a static build must not lose anything (it links no resolver or
// user database that would need the dynamic loader). Without a static libc
// or musl-gcc the build skips, except in CI.
func TestStaticBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hook: not in -short")
	}
	for _, libc := range []struct{ name, cc string }{{"glibc", ""}, {"musl", "musl-gcc"}} {
		t.Run(libc.name, func(t *testing.T) { testStaticBuild(t, libc.cc) })
	}
}

func testStaticBuild(t *testing.T, cc string) {
	root := repoRoot(t)
	bin := filepath.Join(t.TempDir(), "miam-hook")
	cmd := exec.Command("go", "build", "-ldflags", "-linkmode external -extldflags -static", "-o", bin, "./cmd/miam-hook")
	cmd.Dir = root
	if cc != "" {
		cmd.Env = append(os.Environ(), "CC="+cc)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := "static build of miam-hook failed (no static libc, or no " + cc + "?): " + err.Error() + "\n" + string(out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if out, err := exec.Command("file", bin).Output(); err == nil && !bytes.Contains(out, []byte("statically linked")) {
		t.Errorf("the binary is not statically linked: %s", out)
	}
	proj := t.TempDir()
	run := exec.Command(bin)
	run.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+proj, "XDG_CONFIG_HOME="+t.TempDir())
	run.Stdin = strings.NewReader(`{"session_id":"s","cwd":"` + proj + `","hook_event_name":"PreToolUse","tool_name":"Bash",` +
		`"tool_input":{"command":"rm -rf build"},"tool_use_id":"t1"}`)
	out, err := run.Output()
	if err != nil || !bytes.Contains(out, []byte(`"permissionDecision":"deny"`)) {
		t.Errorf("the static hook did not deny rm -rf (err %v): %s", err, out)
	}
	// The line counter's C side (weakly declared tree-sitter symbols) must
	// resolve in a static link too: a 40-line Write is counted and denied.
	var code strings.Builder
	for i := range 20 {
		fmt.Fprintf(&code, "def f%d(x):\n    return x + %d\n", i, i)
	}
	write, _ := json.Marshal(map[string]any{"session_id": "s2", "cwd": proj, "hook_event_name": "PreToolUse", "tool_name": "Write",
		"tool_input": map[string]any{"file_path": filepath.Join(proj, "src", "big.py"), "content": code.String()}, "tool_use_id": "t2"})
	run = exec.Command(bin)
	run.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+proj, "XDG_CONFIG_HOME="+t.TempDir())
	run.Stdin = bytes.NewReader(write)
	writeFile(t, filepath.Join(proj, ".miam", "config.yaml"), []byte("rules:\n  plan: off\n"))
	out, err = run.Output()
	if err != nil || !bytes.Contains(out, []byte("40 code lines since your last delegation")) {
		t.Errorf("the static hook did not count the Write's 40 code lines (err %v): %s", err, out)
	}
}
