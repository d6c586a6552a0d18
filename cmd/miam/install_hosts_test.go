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

	"github.com/google/go-cmp/cmp"
)

func TestInstallCopilotMergesAndIsIdempotent(t *testing.T) {
	proj := t.TempDir()
	userHooks := `{
  "version": 1,
  "hooks": {
    "preToolUse": [{"type": "command", "bash": "./audit.sh", "timeoutSec": 5}]
  }
}
`
	writeTestFile(t, filepath.Join(proj, ".github", "hooks", "miam.json"), userHooks)
	changed, err := installCopilot(proj, "/opt/miam dir/miam-hook")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{filepath.Join(proj, ".github", "hooks", "miam.json"), filepath.Join(proj, ".gitignore")}, changed); d != "" {
		t.Errorf("first install changed (-want +got):\n%s", d)
	}
	var doc struct {
		Version int                         `json:"version"`
		Hooks   map[string][]map[string]any `json:"hooks"`
	}
	data, _ := os.ReadFile(filepath.Join(proj, ".github", "hooks", "miam.json"))
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != 1 {
		t.Errorf("version %d, want 1", doc.Version)
	}
	pre := doc.Hooks["preToolUse"]
	if len(pre) != 2 || pre[0]["bash"] != "./audit.sh" {
		t.Fatalf("preToolUse handlers: want the user's then miam's:\n%s", data)
	}
	want := map[string]any{"type": "command", "bash": "'/opt/miam dir/miam-hook' --host copilot preToolUse", "timeoutSec": float64(hookTimeout)}
	if d := cmp.Diff(want, pre[1]); d != "" {
		t.Errorf("miam's preToolUse handler (-want +got):\n%s", d)
	}
	for _, ev := range copilotEvents {
		n := 0
		for _, h := range doc.Hooks[ev] {
			if bash, _ := h["bash"].(string); strings.HasSuffix(bash, "--host copilot "+ev) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d miam handlers, want 1", ev, n)
		}
	}

	before := snapshot(t, proj)
	if changed, err := installCopilot(proj, "/opt/miam dir/miam-hook"); err != nil || len(changed) != 0 {
		t.Errorf("second install changed %v (err %v), want nothing", changed, err)
	}
	if d := cmp.Diff(before, snapshot(t, proj)); d != "" {
		t.Errorf("second install rewrote files:\n%s", d)
	}
	if _, err := installCopilot(proj, "/new/miam-hook"); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(filepath.Join(proj, ".github", "hooks", "miam.json"))
	if strings.Count(string(data), "miam-hook") != len(copilotEvents) || !strings.Contains(string(data), "/new/miam-hook --host copilot") {
		t.Errorf("reinstall from a new place did not replace the handlers:\n%s", data)
	}
}

func TestInstallCopilotRefusesBrokenFile(t *testing.T) {
	proj := t.TempDir()
	name := filepath.Join(proj, ".github", "hooks", "miam.json")
	writeTestFile(t, name, "{oops")
	if _, err := installCopilot(proj, "/x/miam-hook"); err == nil || !strings.Contains(err.Error(), "miam.json") {
		t.Errorf("err %v, want one naming miam.json", err)
	}
	if data, _ := os.ReadFile(name); string(data) != "{oops" {
		t.Error("install modified a file it could not parse")
	}
}

func TestInstallOpencode(t *testing.T) {
	proj := t.TempDir()
	writeTestFile(t, filepath.Join(proj, "opencode.json"), `{"model": "fake/m", "mcp": {"other": {"type": "remote", "url": "http://x"}}}`)
	changed, err := installOpencode(proj, `/opt/it's "here"/miam-hook`, "/opt/miam")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(proj, ".opencode", "plugin", "miam-guard.js")
	if d := cmp.Diff([]string{filepath.Join(proj, "opencode.json"), name, filepath.Join(proj, ".gitignore")}, changed); d != "" {
		t.Errorf("changed (-want +got):\n%s", d)
	}
	// miam's MCP server is registered beside the project's own.
	var cfg struct {
		Model string                    `json:"model"`
		MCP   map[string]map[string]any `json:"mcp"`
	}
	if raw, _ := os.ReadFile(filepath.Join(proj, "opencode.json")); json.Unmarshal(raw, &cfg) != nil ||
		cfg.Model != "fake/m" || cfg.MCP["other"] == nil || fmt.Sprint(cfg.MCP["miam"]["command"]) != "[/opt/miam mcp]" {
		t.Errorf("opencode.json does not register miam mcp beside the rest: %+v", cfg)
	}
	data, _ := os.ReadFile(name)
	for _, want := range []string{managedMark, `const HOOK = "/opt/it's \"here\"/miam-hook"`, `"tool.execute.before"`, "export const MiamGuard"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("plugin lacks %q", want)
		}
	}
	if n := bytes.Count(data, []byte("export ")); n != 1 {
		t.Errorf("plugin has %d exports: opencode calls every export as a plugin", n)
	}
	before := snapshot(t, proj)
	if changed, err := installOpencode(proj, `/opt/it's "here"/miam-hook`, "/opt/miam"); err != nil || len(changed) != 0 {
		t.Errorf("second install changed %v (err %v), want nothing", changed, err)
	}
	if d := cmp.Diff(before, snapshot(t, proj)); d != "" {
		t.Errorf("second install rewrote files:\n%s", d)
	}
	if _, err := installOpencode(proj, "/new/miam-hook", "/opt/miam"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(name); !bytes.Contains(data, []byte(`const HOOK = "/new/miam-hook"`)) {
		t.Error("reinstall from a new place did not point the plugin there")
	}

	// A hand-written file at the managed path is kept.
	writeTestFile(t, name, "export const Mine = async () => ({})\n")
	if _, err := installOpencode(proj, "/x/miam-hook", "/opt/miam"); err == nil || !strings.Contains(err.Error(), "not written by miam") {
		t.Errorf("err %v, want a conflict", err)
	}
	if data, _ := os.ReadFile(name); string(data) != "export const Mine = async () => ({})\n" {
		t.Error("install overwrote a hand-written plugin")
	}
}

func TestInstallOpencodeRefusesJSONC(t *testing.T) {
	proj := t.TempDir()
	writeTestFile(t, filepath.Join(proj, "opencode.jsonc"), "{\n  // mine\n}\n")
	if _, err := installOpencode(proj, "/x/miam-hook", "/opt/miam"); err == nil || !strings.Contains(err.Error(), "opencode.jsonc") {
		t.Errorf("err %v, want a refusal naming opencode.jsonc", err)
	}
	if _, err := os.Stat(filepath.Join(proj, "opencode.json")); err == nil {
		t.Error("install wrote a second opencode config")
	}
}

func TestHostInstallers(t *testing.T) {
	if in, err := hostInstallers("claude, opencode,copilot"); err != nil || len(in) != 3 {
		t.Errorf("three hosts: %d installers, err %v", len(in), err)
	}
	if _, err := hostInstallers("claude,cursor"); err == nil || !strings.Contains(err.Error(), `"cursor"`) {
		t.Errorf("unknown host: err %v", err)
	}
}

// guardHarness loads the generated plugin in node (opencode runs it in Bun;
// both run node: built-ins) and drives its hooks as opencode would, printing
// what each call did as one JSON line.
const guardHarness = `
const [plugin, dir, calls] = process.argv.slice(1)
const warnings = []
console.warn = (m) => warnings.push(String(m))
const mod = await import("file://" + plugin)
const hooks = await mod.MiamGuard({ directory: dir })
const out = []
for (const c of JSON.parse(calls)) {
  const output = c.hook === "tool.execute.before" ? { args: c.args } : { title: "t", output: "ran", metadata: {} }
  try {
    await hooks[c.hook]({ tool: c.tool, sessionID: "ses_1", callID: "call_1", args: c.args }, output)
    out.push({ ok: true, output: output.output })
  } catch (e) {
    out.push({ threw: e.message })
  }
}
console.log(JSON.stringify({ out, warnings }))
`

type guardResult struct {
	Out []struct {
		OK     bool   `json:"ok"`
		Output string `json:"output"`
		Threw  string `json:"threw"`
	} `json:"out"`
	Warnings []string `json:"warnings"`
}

// TestOpencodeGuardScript runs the generated miam-guard.js against a
// stand-in miam-hook: a deny throws the reason as is, an answer's context is
// appended after the tool ran, and a missing miam-hook refuses on profile
// governed and production but warns once otherwise.
func TestOpencodeGuardScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node not found: the CI script installs the host CLIs with npm, so node must be there")
		}
		t.Skip("node not found")
	}
	stub := filepath.Join(t.TempDir(), "miam-hook")
	writeTestFile(t, stub, `#!/bin/sh
input=$(cat)
case "$input" in
  *tool.execute.after*) echo '{"context":"C"}' ;;
  *"rm -rf"*) echo '{"decision":"deny","reason":"R: `+"`rm -rf build`"+` <refused>"}' ;;
esac
`)
	if err := os.Chmod(stub, 0o755); err != nil {
		t.Fatal(err)
	}
	bash := func(cmd string) map[string]any {
		return map[string]any{"hook": "tool.execute.before", "tool": "bash", "args": map[string]any{"command": cmd}}
	}
	after := map[string]any{"hook": "tool.execute.after", "tool": "bash", "args": map[string]any{"command": "ls"}}
	run := func(t *testing.T, hookBin, profile string, calls ...map[string]any) guardResult {
		t.Helper()
		proj := t.TempDir()
		if profile != "" {
			writeTestFile(t, filepath.Join(proj, ".miam", "config.yaml"), profile)
		}
		plugin := filepath.Join(proj, "miam-guard.mjs") // node needs .mjs for ESM outside a module package
		writeTestFile(t, plugin, string(opencodeGuard(hookBin)))
		cj, _ := json.Marshal(calls)
		cmd := exec.Command(node, "--input-type=module", "-e", guardHarness, plugin, proj, string(cj))
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(proj, "no-user-config"))
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
		}
		var r guardResult
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("harness output %q: %v", out, err)
		}
		return r
	}

	t.Run("deny throws the reason, context follows the output", func(t *testing.T) {
		r := run(t, stub, "", bash("rm -rf build"), bash("ls"), after)
		if got := r.Out[0].Threw; got != "R: `rm -rf build` <refused>" {
			t.Errorf("deny threw %q", got)
		}
		if !r.Out[1].OK || !r.Out[2].OK || r.Out[2].Output != "ran\n\nC" {
			t.Errorf("allowed calls: %+v", r.Out[1:])
		}
		if len(r.Warnings) != 0 {
			t.Errorf("warnings %v", r.Warnings)
		}
	})
	missing := filepath.Join(t.TempDir(), "gone", "miam-hook")
	for _, profile := range []string{"governance:\n  profile: governed\n", "governance: {profile: production}\n"} {
		t.Run(fmt.Sprintf("missing hook refuses on %q", profile), func(t *testing.T) {
			r := run(t, missing, profile, bash("ls"), after)
			if !strings.Contains(r.Out[0].Threw, "miam could not check this call (miam-hook not found at "+missing) {
				t.Errorf("before: %+v", r.Out[0])
			}
			if !r.Out[1].OK {
				t.Errorf("after must never throw (it would replace the output): %+v", r.Out[1])
			}
		})
	}
	for _, profile := range []string{"", "governance:\n  profile: strict # comment\n", "rules:\n  tests: deny\n"} {
		t.Run(fmt.Sprintf("missing hook warns once on %q", profile), func(t *testing.T) {
			r := run(t, missing, profile, bash("ls"), bash("pwd"), after)
			for i, o := range r.Out {
				if !o.OK {
					t.Errorf("call %d refused: %+v", i, o)
				}
			}
			if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "unchecked") {
				t.Errorf("warnings %q, want one", r.Warnings)
			}
		})
	}
}
