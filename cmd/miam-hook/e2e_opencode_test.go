package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/fixtures/fakeopenai"
	"miam/hooks/policies"
	"miam/hooks/trace"
)

// opencodeVersion is the opencode release the e2e test is pinned to, the
// one opencode-1.18.33/FINDINGS.md observed.
const opencodeVersion = "1.18.33"

// opencodeBin finds the opencode CLI: MIAM_OPENCODE_BIN, else the copy the
// CI script installs under .ci/node. Like claudeBin, it skips locally but
// fails in CI.
func opencodeBin(t *testing.T, root string) string {
	t.Helper()
	bin := os.Getenv("MIAM_OPENCODE_BIN")
	if bin == "" {
		bin = filepath.Join(root, ".ci", "node", "node_modules", ".bin", "opencode")
	}
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("opencode CLI not found (%v): set MIAM_OPENCODE_BIN or npm install opencode-ai@%s into .ci/node", err, opencodeVersion)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// TestE2EOpencodeGuard is the tool policy through the real opencode CLI:
// `miam install --host opencode` writes .opencode/plugin/miam-guard.js, a
// scripted model's `rm -rf build` is refused before bash runs it (build/ is
// still there), and the model receives as the tool result exactly the words
// miam-hook gives Claude Code for the same command.
func TestE2EOpencodeGuard(t *testing.T) {
	root := repoRoot(t)
	opencode := opencodeBin(t, root)
	bindir := buildBinaries(t, root)
	w := newOpencodeWorld(t, bindir, "rm -rf build")
	writeFile(t, filepath.Join(w.s.proj, "build", "keep.o"), []byte("object\n"))

	got, out := w.run(t, opencode)
	if _, err := os.Stat(filepath.Join(w.s.proj, "build", "keep.o")); err != nil {
		t.Errorf("build/ was deleted although rm -rf was denied: %v", err)
	}
	want := claudeReason(t, bindir, w.s.proj, "rm -rf build")
	if got != want {
		t.Errorf("opencode's model read other words than Claude Code's would:\n got: %s\nwant: %s", got, want)
	}
	for _, s := range []string{"miam tool policy (destructive)", "rm -r (recursive deletion)", "`rm -rf build`"} {
		if !strings.Contains(got, s) {
			t.Errorf("deny text lacks %q", s)
		}
	}
	if !bytes.Contains(out, []byte(`"status":"error"`)) {
		t.Errorf("opencode's JSON events show no refused tool call:\n%s", tail(string(out), 4000))
	}
	// The install registered miam's MCP server: opencode offers the model
	// its tools, under opencode's names, which miam-hook maps back.
	offered := false
	for _, r := range w.srv.Requests() {
		offered = offered || (r.Tools > 0 && bytes.Contains(r.Raw, []byte(`"miam_deleguer"`)))
	}
	if !offered {
		t.Errorf("no request offered the model miam_deleguer: miam's MCP server did not reach opencode")
	}
	// The ledger has the opencode deny, then claudeReason's for the same
	// command: one decision, any host, and the same hash of the command.
	data, err := os.ReadFile(filepath.Join(w.s.proj, ".miam", trace.FileName))
	if err != nil {
		t.Fatalf("no trace ledger: %v", err)
	}
	var got2 []string
	for _, line := range strings.SplitAfter(strings.TrimSpace(string(data)), "\n") {
		r, err := trace.Decode([]byte(line))
		if err != nil {
			t.Fatalf("ledger line %q: %v", line, err)
		}
		got2 = append(got2, fmt.Sprintf("%s %s %s %s %s", r.Host, r.Event, r.Tool, r.Decision, r.Rule))
		if r.Tool == "Bash" && r.Args != policies.Fingerprint("Bash", json.RawMessage(`{"command":"rm -rf build"}`)) {
			t.Errorf("the %s line hashes rm -rf build as %s, not as the approvals do", r.Host, r.Args)
		}
	}
	if d := cmp.Diff([]string{"opencode PreToolUse Bash deny tool_policy", "claude PreToolUse Bash deny tool_policy"}, got2); d != "" {
		t.Errorf("ledger (-want +got):\n%s\n%s", d, data)
	}
}

// TestE2EOpencodeMissingHook: with miam-hook gone after the install, the
// plugin refuses every tool call on profile governed, and lets them through
// on profile default (with a warning).
func TestE2EOpencodeMissingHook(t *testing.T) {
	root := repoRoot(t)
	opencode := opencodeBin(t, root)
	built := buildBinaries(t, root)
	for _, tc := range []struct {
		profile string
		refused bool
	}{{"governed", true}, {"default", false}} {
		t.Run(tc.profile, func(t *testing.T) {
			// A copy of both binaries, so removing miam-hook leaves the
			// other tests' copy alone.
			bindir := t.TempDir()
			for _, name := range []string{"miam", "miam-hook"} {
				data, err := os.ReadFile(filepath.Join(built, name))
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(bindir, name), data)
				if err := os.Chmod(filepath.Join(bindir, name), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			w := newOpencodeWorld(t, bindir, "echo ran > made.txt")
			if err := os.Remove(filepath.Join(bindir, "miam-hook")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(w.s.proj, ".miam", "config.yaml"), []byte("governance:\n  profile: "+tc.profile+"\n"))

			got, _ := w.run(t, opencode)
			_, err := os.Stat(filepath.Join(w.s.proj, "made.txt"))
			if tc.refused {
				if err == nil {
					t.Error("the command ran although miam-hook was missing on profile governed")
				}
				if !strings.Contains(got, "miam could not check this call (miam-hook not found at") {
					t.Errorf("the model was not told why: %s", got)
				}
				return
			}
			if err != nil {
				t.Errorf("the command did not run on profile default: %v (the model got %q)", err, got)
			}
		})
	}
}

// opencodeWorld is one opencode scenario: a sandboxed project where `miam
// install --host opencode` ran, configured for a fake API whose model makes
// one bash call, then ends once it has that call's result.
type opencodeWorld struct {
	s   sandbox
	srv *fakeopenai.Server
}

// opencodeCallID is the id of the scripted model's bash call.
const opencodeCallID = "call_oc_1"

func newOpencodeWorld(t *testing.T, bindir, command string) *opencodeWorld {
	t.Helper()
	w := &opencodeWorld{s: newSandbox(t)}
	args, _ := json.Marshal(map[string]string{"command": command})
	w.srv = fakeopenai.NewScript(func(r fakeopenai.Request) fakeopenai.Reply {
		if r.Tools == 0 { // the title request (FINDINGS.md: no tools, small_model)
			return fakeopenai.Answer("Fake title")
		}
		for _, m := range r.Messages {
			if m.Role == "tool" && m.ToolCallID == opencodeCallID {
				return fakeopenai.Answer("FINAL: done.")
			}
		}
		return fakeopenai.Reply{Text: "Running it.", ToolCalls: []fakeopenai.ToolCall{
			{ID: opencodeCallID, Name: "bash", Arguments: string(args)}}}
	})
	t.Cleanup(w.srv.Close)
	install := exec.Command(filepath.Join(bindir, "miam"), "install", "--dir", w.s.proj, "--host", "opencode")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("miam install --host opencode: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(w.s.proj, ".opencode", "plugin", "miam-guard.js")); err != nil {
		t.Fatalf("install wrote no plugin: %v", err)
	}
	writeOpencodeConfig(t, w.s, w.srv.URL()+"/v1")
	return w
}

// run runs the scenario's prompt and returns the tool result the model
// received for its bash call, and opencode's JSON events.
func (w *opencodeWorld) run(t *testing.T, opencode string) (result string, events []byte) {
	t.Helper()
	start := time.Now()
	events = runOpencode(t, opencode, w.s, w.srv.URL(), "SCENARIO-OC: run the command")
	t.Logf("opencode run took %s", time.Since(start).Round(time.Millisecond))
	seen := false
	for _, r := range w.srv.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" && m.ToolCallID == opencodeCallID {
				result, seen = m.Content, true
			}
		}
	}
	if !seen {
		t.Fatalf("the model never received a result for its bash call; opencode printed:\n%s", tail(string(events), 4000))
	}
	t.Logf("the model was told:\n%s", result)
	return result, events
}

// writeOpencodeConfig points opencode at the fake API (FINDINGS.md, "Running
// opencode against a custom OpenAI-compatible endpoint") and pre-satisfies
// its plugin-dependency install in both config dirs, which otherwise goes to
// the npm registry before any plugin loads (§ Offline, s7).
func writeOpencodeConfig(t *testing.T, s sandbox, baseURL string) {
	t.Helper()
	// On top of what `miam install` wrote there (miam's MCP server).
	cfg := map[string]any{}
	if old, err := os.ReadFile(filepath.Join(s.proj, "opencode.json")); err == nil {
		if err := json.Unmarshal(old, &cfg); err != nil {
			t.Fatalf("opencode.json after miam install: %v", err)
		}
	}
	for k, v := range map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"fake": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "Fake (e2e)",
			"options": map[string]any{"baseURL": baseURL, "apiKey": "sk-fake-e2e"},
			"models": map[string]any{"fake-model": map[string]any{"name": "Fake model", "tool_call": true,
				"limit": map[string]any{"context": 128000, "output": 8192}}},
		}},
		"model":       "fake/fake-model",
		"small_model": "fake/fake-model",
		"autoupdate":  false,
		"share":       "disabled",
	} {
		cfg[k] = v
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(s.proj, "opencode.json"), data)
	lock := []byte(`{"lockfileVersion": 3, "packages": {"": {"dependencies": {"@opencode-ai/plugin": "` + opencodeVersion + `"}}}}` + "\n")
	for _, dir := range []string{filepath.Join(s.proj, ".opencode"), filepath.Join(s.home, ".config", "opencode")} {
		if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "package-lock.json"), lock)
	}
}

// runOpencode runs `opencode run` in the project with an isolated HOME, no
// provider keys from the developer, and npm pointed at the fake server, so
// nothing leaves 127.0.0.1. It returns the --format json events.
func runOpencode(t *testing.T, opencode string, s sandbox, fakeURL, prompt string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, opencode, "run", "--print-logs", "--log-level", "INFO", "--format", "json",
		"-m", "fake/fake-model", prompt)
	cmd.Dir = s.proj
	cmd.Env = hostEnv(s,
		"XDG_DATA_HOME="+filepath.Join(s.home, ".local", "share"),
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"npm_config_registry="+fakeURL+"/npm/",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		t.Fatalf("opencode run: %v (ctx: %v)\nstdout tail:\n%s\nstderr tail:\n%s", err, ctx.Err(),
			tail(stdout.String(), 4000), tail(stderr.String(), 8000))
	}
	if bytes.Contains(stderr.Bytes(), []byte("failed to load plugin")) || bytes.Contains(stderr.Bytes(), []byte("dependency install failed")) {
		t.Errorf("opencode logged a plugin problem:\n%s", tail(stderr.String(), 8000))
	}
	return stdout.Bytes()
}

// claudeReason is the deny reason miam-hook gives Claude Code for a Bash
// command in proj: the words every host must show.
func claudeReason(t *testing.T, bindir, proj, command string) string {
	t.Helper()
	payload, _ := json.Marshal(map[string]any{
		"session_id": "same-words", "cwd": proj, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": command}, "tool_use_id": "toolu_same_words",
	})
	cmd := exec.Command(filepath.Join(bindir, "miam-hook"))
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+proj, "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Stdin = bytes.NewReader(payload)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("miam-hook --host claude: %v", err)
	}
	var v struct {
		HookSpecificOutput struct {
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &v); err != nil || v.HookSpecificOutput.PermissionDecisionReason == "" {
		t.Fatalf("miam-hook --host claude gave no deny reason (%v): %s", err, out)
	}
	return v.HookSpecificOutput.PermissionDecisionReason
}
