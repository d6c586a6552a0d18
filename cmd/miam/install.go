package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/shlex"

	"miam/budgets"
)

// hookEvents are the events miam-hook is registered for, with their matcher
// ("" for events that take none).
var hookEvents = []struct{ event, matcher string }{
	{"SessionStart", ""},
	{"UserPromptSubmit", ""},
	{"PreToolUse", "*"},
	{"PostToolUse", "*"},
	{"PostToolUseFailure", "*"},
	{"Stop", ""},
	{"SubagentStop", ""},
	{"PreCompact", ""}, // governance's capsule (SPEC §9)
}

// hookTimeout (seconds) bounds a stuck hook; Claude Code fails open after it.
const hookTimeout = 10

func runInstall(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("install", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("dir", ".", "project directory")
	hosts := fl.String("host", "claude", "hosts to install for, comma-separated: claude, copilot, opencode")
	statusline := fl.Bool("statusline", false, "also set Claude Code's statusLine to `miam statusline` (rule 9), unless one is set")
	if err := fl.Parse(args); err != nil {
		return err
	}
	installers, err := hostInstallers(*hosts)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find miam's own path: %w", err)
	}
	self, err = filepath.EvalSymlinks(self)
	if err != nil {
		return fmt.Errorf("find miam's own path: %w", err)
	}
	hookBin := filepath.Join(filepath.Dir(self), "miam-hook")
	miamBin := self
	if _, err := os.Stat(hookBin); err != nil {
		return fmt.Errorf("miam-hook must be built beside miam (%s): %w", hookBin, err)
	}
	project, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	var changed []string
	for _, in := range installers {
		c, err := in(project, hookBin, miamBin)
		if err != nil {
			return err
		}
		changed = append(changed, c...)
	}
	if *statusline {
		c, kept, err := installStatusline(project, miamBin)
		if err != nil {
			return err
		}
		if kept != "" {
			fmt.Fprintf(stderr, "note: .claude/settings.json already has a statusLine (%s): left as it is\n", kept)
		}
		changed = append(changed, c...)
	}
	if strings.Contains(","+strings.ReplaceAll(*hosts, " ", "")+",", ",copilot,") {
		fmt.Fprintln(stderr, "note: Copilot CLI runs .github/hooks only in a trusted folder (--trust-folder, or trust given once interactively)")
		if data, err := os.ReadFile(filepath.Join(project, ".claude", "settings.json")); err == nil && bytes.Contains(data, []byte("miam-hook")) {
			fmt.Fprintln(stderr, "note: Copilot CLI also runs the hooks of .claude/settings.json; under Copilot (COPILOT_CLI=1) that",
				"entry of miam-hook stands aside, and the Copilot one decides, so nothing is charged twice")
		}
	}
	if len(changed) == 0 {
		fmt.Fprintln(stdout, "miam is already installed in", project)
		return nil
	}
	for _, c := range changed {
		fmt.Fprintln(stdout, "wrote", c)
	}
	return nil
}

// hostInstallers returns the install step of each host named in list.
func hostInstallers(list string) ([]func(project, hookBin, miamBin string) ([]string, error), error) {
	var out []func(project, hookBin, miamBin string) ([]string, error)
	for _, h := range strings.Split(list, ",") {
		switch strings.TrimSpace(h) {
		case "claude":
			out = append(out, install)
		case "copilot":
			out = append(out, func(project, hookBin, _ string) ([]string, error) { return installCopilot(project, hookBin) })
		case "opencode":
			out = append(out, installOpencode)
		default:
			return nil, fmt.Errorf("unknown host %q (claude, copilot or opencode)", h)
		}
	}
	return out, nil
}

// install merges miam's hooks into project/.claude/settings.json, registers
// the MCP server in project/.mcp.json and git-ignores .miam/state/ and the
// trace ledger. It
// returns the files it changed: none on a second run.
func install(project, hookBin, miamBin string) ([]string, error) {
	var changed []string
	settings := filepath.Join(project, ".claude", "settings.json")
	old, err := os.ReadFile(settings)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", settings, err)
	}
	merged, err := mergeSettings(old, hookBin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", settings, err)
	}
	if !bytes.Equal(old, merged) {
		if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
			return nil, err
		}
		if err := budgets.WriteFileAtomic(settings, merged, 0o644); err != nil {
			return nil, err
		}
		changed = append(changed, settings)
	}
	mcpFile := filepath.Join(project, ".mcp.json")
	oldMCP, err := os.ReadFile(mcpFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", mcpFile, err)
	}
	mergedMCP, err := mergeMCP(oldMCP, miamBin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mcpFile, err)
	}
	if !bytes.Equal(oldMCP, mergedMCP) {
		if err := budgets.WriteFileAtomic(mcpFile, mergedMCP, 0o644); err != nil {
			return nil, err
		}
		changed = append(changed, mcpFile)
	}
	return ignoreState(project, changed)
}

// editObject decodes a JSON document (empty means {}), lets edit change the
// object under key, and re-encodes it. Unchanged content gives back the old
// bytes, so a second install writes nothing even when the user's file was
// formatted differently.
func editObject(old []byte, key string, edit func(obj map[string]any)) ([]byte, error) {
	doc := map[string]any{}
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &doc); err != nil {
			return nil, fmt.Errorf("not valid JSON, left untouched: %w", err)
		}
	}
	obj, _ := doc[key].(map[string]any)
	if obj == nil {
		if _, exists := doc[key]; exists {
			return nil, fmt.Errorf("%q is not an object, left untouched", key)
		}
		obj = map[string]any{}
	}
	edit(obj)
	doc[key] = obj
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	out = append(out, '\n')
	if len(old) > 0 && jsonEqual(old, out) {
		return old, nil
	}
	return out, nil
}

// mergeSettings adds miam's hook handlers to a settings.json document,
// keeping every other key and handler as it was. A handler already pointing
// at a miam-hook binary is updated in place rather than duplicated.
func mergeSettings(old []byte, hookBin string) ([]byte, error) {
	return editObject(old, "hooks", func(hooksObj map[string]any) {
		for _, he := range hookEvents {
			groups, _ := hooksObj[he.event].([]any)
			handler := map[string]any{"type": "command", "command": shellQuote(hookBin), "timeout": hookTimeout}
			if !replaceMiamHandler(groups, handler) {
				group := map[string]any{"hooks": []any{handler}}
				if he.matcher != "" {
					group["matcher"] = he.matcher
				}
				groups = append(groups, group)
			}
			hooksObj[he.event] = groups
		}
	})
}

// mergeMCP registers miam's MCP server under the name "miam" (so Claude Code
// names its tools mcp__miam__…), keeping the other servers.
func mergeMCP(old []byte, miamBin string) ([]byte, error) {
	return editObject(old, "mcpServers", func(servers map[string]any) {
		servers["miam"] = map[string]any{"type": "stdio", "command": miamBin, "args": []any{"mcp"}}
	})
}

// replaceMiamHandler points an existing miam-hook handler at hookBin.
func replaceMiamHandler(groups []any, handler map[string]any) bool {
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		hs, _ := gm["hooks"].([]any)
		for i, h := range hs {
			hm, _ := h.(map[string]any)
			cmd, _ := hm["command"].(string)
			if strings.Contains(cmd, "miam-hook") {
				hs[i] = handler
				return true
			}
		}
	}
	return false
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// ensureLine appends line to a file unless a line equal to it is there.
func ensureLine(name, line string) (bool, error) {
	data, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == line {
			return false, nil
		}
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, line+"\n"...)
	return true, budgets.WriteFileAtomic(name, data, 0o644)
}

// shellQuote quotes a path for the shell Claude Code runs hook commands in.
func shellQuote(s string) string {
	if strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// installStatusline sets Claude Code's statusLine to `miam statusline` in
// project/.claude/settings.json. A status line that is not miam's is the
// user's: it is kept, and returned in kept.
func installStatusline(project, miamBin string) (changed []string, kept string, err error) {
	name := filepath.Join(project, ".claude", "settings.json")
	old, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("read %s: %w", name, err)
	}
	command := shellQuote(miamBin) + " statusline"
	var doc map[string]any
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &doc); err != nil {
			return nil, "", fmt.Errorf("%s: not valid JSON, left untouched: %w", name, err)
		}
	}
	if sl, ok := doc["statusLine"].(map[string]any); ok {
		// Ours is exactly `<…/miam> statusline`; anything else is the user's.
		cmd, _ := sl["command"].(string)
		words, err := shlex.Split(cmd)
		if err != nil || len(words) != 2 || filepath.Base(words[0]) != "miam" || words[1] != "statusline" {
			return nil, fmt.Sprint(sl["command"]), nil
		}
	}
	out, err := editObject(old, "statusLine", func(sl map[string]any) {
		sl["type"], sl["command"] = "command", command
	})
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	changed, err = writeIfChanged(name, old, out)
	return changed, "", err
}
