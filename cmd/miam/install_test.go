package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInstallMergesAndIsIdempotent(t *testing.T) {
	proj := t.TempDir()
	userSettings := `{
  "permissions": {"allow": ["Bash(go test:*)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/guard.sh"}]}]
  },
  "model": "opus"
}
`
	writeTestFile(t, filepath.Join(proj, ".claude", "settings.json"), userSettings)
	writeTestFile(t, filepath.Join(proj, ".gitignore"), "node_modules/")
	hookBin := "/opt/miam dir/miam-hook"

	changed, err := install(proj, hookBin, "/opt/miam dir/miam")
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 3 {
		t.Errorf("first install changed %v, want settings.json, .mcp.json and .gitignore", changed)
	}
	var mcpDoc struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	mcpData, _ := os.ReadFile(filepath.Join(proj, ".mcp.json"))
	if err := json.Unmarshal(mcpData, &mcpDoc); err != nil {
		t.Fatal(err)
	}
	if s := mcpDoc.MCPServers["miam"]; s.Command != "/opt/miam dir/miam" || len(s.Args) != 1 || s.Args[0] != "mcp" {
		t.Errorf(".mcp.json does not register miam mcp: %s", mcpData)
	}
	var doc struct {
		Permissions map[string]any              `json:"permissions"`
		Model       string                      `json:"model"`
		Hooks       map[string][]map[string]any `json:"hooks"`
	}
	data, _ := os.ReadFile(filepath.Join(proj, ".claude", "settings.json"))
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Model != "opus" || doc.Permissions == nil {
		t.Errorf("install dropped the user's keys: %s", data)
	}
	pre := doc.Hooks["PreToolUse"]
	if len(pre) != 2 {
		t.Fatalf("PreToolUse groups = %d, want the user's and miam's: %s", len(pre), data)
	}
	userCmd := pre[0]["hooks"].([]any)[0].(map[string]any)["command"]
	miamCmd := pre[1]["hooks"].([]any)[0].(map[string]any)["command"]
	if userCmd != "/usr/local/bin/guard.sh" || miamCmd != "'/opt/miam dir/miam-hook'" || pre[1]["matcher"] != "*" {
		t.Errorf("PreToolUse groups wrong: %s", data)
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop", "PreCompact"} {
		if len(doc.Hooks[ev]) != 1 {
			t.Errorf("%s not registered once: %v", ev, doc.Hooks[ev])
		}
	}
	ignore, _ := os.ReadFile(filepath.Join(proj, ".gitignore"))
	if d := cmp.Diff("node_modules/\n.miam/state/\n.miam/traces.jsonl\n", string(ignore)); d != "" {
		t.Errorf(".gitignore (-want +got):\n%s", d)
	}

	before := snapshot(t, proj)
	changed, err = install(proj, hookBin, "/opt/miam dir/miam")
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 0 {
		t.Errorf("second install changed %v, want nothing", changed)
	}
	if d := cmp.Diff(before, snapshot(t, proj)); d != "" {
		t.Errorf("second install rewrote files (-before +after):\n%s", d)
	}

	// A moved binary updates miam's handler in place, never duplicates it.
	if _, err := install(proj, "/new/place/miam-hook", "/new/place/miam"); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(filepath.Join(proj, ".claude", "settings.json"))
	if strings.Count(string(data), "miam-hook") != len(hookEvents) || !strings.Contains(string(data), "/new/place/miam-hook") {
		t.Errorf("reinstall from a new place did not replace the handlers:\n%s", data)
	}
}

func TestInstallRefusesBrokenSettings(t *testing.T) {
	proj := t.TempDir()
	writeTestFile(t, filepath.Join(proj, ".claude", "settings.json"), "{not json")
	if _, err := install(proj, "/x/miam-hook", "/x/miam"); err == nil || !strings.Contains(err.Error(), "settings.json") {
		t.Errorf("install on broken settings: err %v, want one naming settings.json", err)
	}
	data, _ := os.ReadFile(filepath.Join(proj, ".claude", "settings.json"))
	if string(data) != "{not json" {
		t.Error("install modified a settings file it could not parse")
	}
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			info, _ := d.Info()
			m[p] = string(data) + "@" + info.ModTime().String()
		}
		return nil
	})
	return m
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDaemonEnvironDropsSessionPlumbing(t *testing.T) {
	got := daemonEnviron([]string{"HOME=/h", "CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=s", "CLAUDE_CODE_MESSAGING_TOKEN=t",
		"CLAUDE_PROJECT_DIR=/p", "ANTHROPIC_API_KEY=k", "XDG_STATE_HOME=/x", "CLAUDE_CONFIG_DIR=/c"})
	want := []string{"HOME=/h", "ANTHROPIC_API_KEY=k", "XDG_STATE_HOME=/x", "CLAUDE_CONFIG_DIR=/c"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestInstallStatusline(t *testing.T) {
	proj := t.TempDir()
	changed, kept, err := installStatusline(proj, "/opt/miam")
	if err != nil || kept != "" || len(changed) != 1 {
		t.Fatalf("first install: changed %v, kept %q, err %v", changed, kept, err)
	}
	var doc struct {
		StatusLine map[string]string `json:"statusLine"`
	}
	data, _ := os.ReadFile(filepath.Join(proj, ".claude", "settings.json"))
	if err := json.Unmarshal(data, &doc); err != nil || doc.StatusLine["type"] != "command" || doc.StatusLine["command"] != "/opt/miam statusline" {
		t.Errorf("statusLine = %v (err %v)", doc.StatusLine, err)
	}
	if changed, _, err := installStatusline(proj, "/opt/miam"); err != nil || len(changed) != 0 {
		t.Errorf("second install changed %v (err %v), want nothing", changed, err)
	}
	// A line of ours from elsewhere is updated.
	writeTestFile(t, filepath.Join(proj, ".claude", "settings.json"), `{"statusLine": {"type": "command", "command": "'/old place/miam' statusline"}}`)
	if changed, kept, err := installStatusline(proj, "/opt/miam"); err != nil || kept != "" || len(changed) != 1 {
		t.Errorf("moved miam: changed %v, kept %q, err %v", changed, kept, err)
	}
	// The user's own status line is kept, even one that names miam.
	writeTestFile(t, filepath.Join(proj, ".claude", "settings.json"), `{"statusLine": {"type": "command", "command": "~/bin/miam-and-git-line"}}`)
	if changed, kept, err := installStatusline(proj, "/opt/miam"); err != nil || len(changed) != 0 || kept != "~/bin/miam-and-git-line" {
		t.Errorf("changed %v, kept %q, err %v: want the user's line kept", changed, kept, err)
	}
	mine := `{"statusLine": {"type": "command", "command": "~/bin/my-line"}, "model": "opus"}`
	writeTestFile(t, filepath.Join(proj, ".claude", "settings.json"), mine)
	changed, kept, err = installStatusline(proj, "/opt/miam")
	if err != nil || len(changed) != 0 || kept != "~/bin/my-line" {
		t.Errorf("changed %v, kept %q, err %v: want the user's line kept", changed, kept, err)
	}
	if data, _ := os.ReadFile(filepath.Join(proj, ".claude", "settings.json")); string(data) != mine {
		t.Errorf("settings.json was rewritten:\n%s", data)
	}
}
