package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"miam/budgets"
	"miam/hooks/trace"
)

// copilotEvents are the GitHub Copilot CLI events miam-hook is registered
// for, camelCase: their payload does not name the event, so the command
// line does (`miam-hook --host copilot preToolUse`).
var copilotEvents = []string{
	"sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse",
	"postToolUseFailure", "agentStop", "subagentStop",
}

// copilotHooksFile is where Copilot CLI reads a project's hooks (WIRE.md
// §3.1). It runs them only in a trusted folder (--trust-folder, or trust
// saved interactively).
const copilotHooksFile = ".github/hooks/miam.json"

// installCopilot merges miam's handlers into .github/hooks/miam.json,
// keeping any other handler, key and event there, and git-ignores
// .miam/state/ and the trace ledger. It returns the files it
// changed: none on a second run.
func installCopilot(project, hookBin string) ([]string, error) {
	name := filepath.Join(project, filepath.FromSlash(copilotHooksFile))
	old, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	merged, err := mergeCopilotHooks(old, hookBin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	changed, err := writeIfChanged(name, old, merged)
	if err != nil {
		return nil, err
	}
	return ignoreState(project, changed)
}

// ignoreState git-ignores what miam-hook writes in a project whatever the
// host: .miam/state/, each session's state, and .miam/traces.jsonl, the
// trace ledger (a per-user log: committed, it would conflict at every
// merge, and the sandbox would copy it as an untracked file).
func ignoreState(project string, changed []string) ([]string, error) {
	ignore := filepath.Join(project, ".gitignore")
	var did bool
	for _, line := range []string{".miam/state/", ".miam/" + trace.FileName} {
		added, err := ensureLine(ignore, line)
		if err != nil {
			return changed, err
		}
		did = did || added
	}
	if did {
		changed = append(changed, ignore)
	}
	return changed, nil
}

// mergeCopilotHooks adds miam's handlers to a Copilot hooks document. A
// handler already running a miam-hook binary is updated in place.
func mergeCopilotHooks(old []byte, hookBin string) ([]byte, error) {
	out, err := editObject(old, "hooks", func(hooksObj map[string]any) {
		for _, ev := range copilotEvents {
			handlers, _ := hooksObj[ev].([]any)
			handler := map[string]any{"type": "command",
				"bash": shellQuote(hookBin) + " --host copilot " + ev, "timeoutSec": hookTimeout}
			replaced := false
			for i, h := range handlers {
				hm, _ := h.(map[string]any)
				bash, _ := hm["bash"].(string)
				if strings.Contains(bash, "miam-hook") {
					handlers[i], replaced = handler, true
					break
				}
			}
			if !replaced {
				handlers = append(handlers, handler)
			}
			hooksObj[ev] = handlers
		}
	})
	if err != nil {
		return nil, err
	}
	// The file format is versioned; a document without a version gets 1.
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, err
	}
	if _, ok := doc["version"]; ok {
		return out, nil
	}
	doc["version"] = 1
	out, err = json.MarshalIndent(doc, "", "  ")
	return append(out, '\n'), err
}

// opencodePlugin is where opencode loads the guard from: every *.js directly
// in .opencode/plugin/ is a plugin (opencode-1.18.33/FINDINGS.md §a).
const opencodePlugin = ".opencode/plugin/miam-guard.js"

// managedMark opens every file miam generates whole; a file at a managed
// path without it was written by hand and is never overwritten.
const managedMark = "miam:managed"

// opencodeConfig is the project's opencode config, where miam's MCP server
// is registered; opencode names its tools `miam_deleguer`… (WIRE.md §3.4).
const opencodeConfig = "opencode.json"

// installOpencode writes .opencode/plugin/miam-guard.js for hookBin,
// registers miam's MCP server (miamBin mcp) in opencode.json and
// git-ignores .miam/state/. It returns the files it changed: none on a
// second run. A project configured in opencode.jsonc (comments: not JSON)
// is refused rather than given a second config file.
func installOpencode(project, hookBin, miamBin string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(project, "opencode.jsonc")); err == nil {
		return nil, fmt.Errorf("%s: this project configures opencode in opencode.jsonc; add miam's MCP server there by hand "+
			`("mcp": {"miam": {"type": "local", "command": [%q, "mcp"], "enabled": true}}), then install again without opencode`,
			filepath.Join(project, "opencode.jsonc"), miamBin)
	}
	cfgName := filepath.Join(project, opencodeConfig)
	onDisk, err := os.ReadFile(cfgName)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", cfgName, err)
	}
	base := onDisk
	if len(bytes.TrimSpace(base)) == 0 {
		base = []byte(`{"$schema": "https://opencode.ai/config.json"}`)
	}
	cfg, err := editObject(base, "mcp", func(servers map[string]any) {
		servers["miam"] = map[string]any{"type": "local", "command": []any{miamBin, "mcp"}, "enabled": true}
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfgName, err)
	}
	cfgChanged, err := writeIfChanged(cfgName, onDisk, cfg)
	if err != nil {
		return nil, err
	}
	changed, err := installOpencodeGuard(project, hookBin)
	return append(cfgChanged, changed...), err
}

// installOpencodeGuard writes .opencode/plugin/miam-guard.js for hookBin
// and git-ignores .miam/state/ and the trace ledger.
func installOpencodeGuard(project, hookBin string) ([]string, error) {
	name := filepath.Join(project, filepath.FromSlash(opencodePlugin))
	old, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if err == nil && !bytes.Contains(old, []byte(managedMark)) {
		return nil, fmt.Errorf("%s was not written by miam (no %q line): left untouched; move it away and install again", name, managedMark)
	}
	changed, err := writeIfChanged(name, old, opencodeGuard(hookBin))
	if err != nil {
		return nil, err
	}
	return ignoreState(project, changed)
}

// writeIfChanged writes data to name unless it already holds exactly that.
func writeIfChanged(name string, old, data []byte) ([]string, error) {
	if bytes.Equal(old, data) {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	if err := budgets.WriteFileAtomic(name, data, 0o644); err != nil {
		return nil, err
	}
	return []string{name}, nil
}

// opencodeGuard is the plugin's source for hookBin.
func opencodeGuard(hookBin string) []byte {
	quoted, _ := json.Marshal(hookBin) // a JSON string is a JS string literal
	return []byte(strings.Replace(guardJS, "__MIAM_HOOK__", string(quoted), 1))
}

// guardJS runs miam-hook in opencode's tool.execute.before and throws the
// verdict's reason on deny: opencode gives the model exactly the thrown
// message, and does not run the tool (FINDINGS.md §b). Any error of the
// plugin's own is caught, since an uncaught throw there also blocks the
// tool with a message that explains nothing (§d). It imports only node:
// built-ins, so opencode needs no npm package to load it.
const guardJS = `// miam:managed — written by ` + "`miam install --host opencode`" + `; a new install rewrites it.
// miam-guard hands opencode's tool calls to miam-hook and refuses what miam
// denies, with the reason the model reads on every host.
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"

const HOOK = __MIAM_HOOK__
const TIMEOUT_MS = 10000

// Only the plugin function is exported: opencode calls every export.
export const MiamGuard = async ({ directory }) => {
  const dir = directory || process.cwd()
  let warned = false
  const warn = (msg) => {
    if (!warned) {
      warned = true
      console.warn(msg)
    }
  }
  // A call miam could not check: refused on profiles governed and
  // production, let through with one warning otherwise.
  const unchecked = (why, refuse) => {
    const p = profile(dir)
    if (refuse && (p === "governed" || p === "production")) {
      throw new Error("miam could not check this call (" + why + "). Profile " + p +
        " refuses every call miam cannot check: install miam again (miam install --host opencode), or ask the user.")
    }
    warn("miam: " + why + "; tool calls go through unchecked (profile " + p + ").")
  }
  return {
    "tool.execute.before": async (input, output) => {
      const v = ask(dir, { hook: "tool.execute.before", input, output: { args: output.args }, directory: dir })
      if (v.failed) return unchecked(v.failed, true)
      if (v.notice) console.warn(v.notice)
      if (v.decision === "deny" || v.decision === "ask") {
        // opencode cannot ask the user from a plugin: an ask refuses too.
        throw new Error(v.reason)
      }
    },
    "tool.execute.after": async (input, output) => {
      const v = ask(dir, { hook: "tool.execute.after", input, output, directory: dir })
      if (v.failed) return unchecked(v.failed, false)
      if (v.notice) console.warn(v.notice)
      if (v.context && typeof output.output === "string") output.output += "\n\n" + v.context
    },
    "chat.message": async (input, output) => {
      const v = ask(dir, { hook: "chat.message", input, output: { parts: output.parts }, directory: dir })
      if (v.failed) return unchecked(v.failed, false)
    },
  }
}

// ask runs miam-hook on one hook call and returns its answer, {} for no
// opinion, or {failed: why} when there is no answer.
function ask(dir, payload) {
  try {
    const r = spawnSync(HOOK, ["--host", "opencode"], {
      input: JSON.stringify(payload),
      encoding: "utf8",
      timeout: TIMEOUT_MS,
      maxBuffer: 16 << 20,
      cwd: dir,
      env: { ...process.env, CLAUDE_PROJECT_DIR: dir },
    })
    if (r.error) {
      return { failed: r.error.code === "ENOENT" ? "miam-hook not found at " + HOOK : "miam-hook did not run: " + r.error.message }
    }
    if (r.status !== 0) return { failed: "miam-hook ended with " + (r.status ?? r.signal) }
    const out = (r.stdout || "").trim()
    return out ? JSON.parse(out) : {}
  } catch (e) {
    return { failed: "miam-hook's answer was unreadable: " + (e && e.message) }
  }
}

// profile is the governance profile miam-hook would read: the user's
// config, then the project's .miam/config.yaml, which wins.
function profile(dir) {
  let p = "default"
  const xdg = process.env.XDG_CONFIG_HOME || join(homedir(), ".config")
  for (const f of [join(xdg, "miam", "config.yaml"), join(dir, ".miam", "config.yaml")]) {
    let text
    try {
      text = readFileSync(f, "utf8")
    } catch {
      continue
    }
    p = governanceProfile(text) || p
  }
  return p
}

// governanceProfile finds governance.profile in a config's YAML, block or
// flow style, without a YAML library.
function governanceProfile(text) {
  let inside = false
  for (const line of text.split(/\r?\n/)) {
    const flow = line.match(/^governance\s*:\s*\{[^}]*\bprofile\s*:\s*["']?([A-Za-z]+)/)
    if (flow) return flow[1]
    if (/^[^\s#]/.test(line)) {
      inside = /^governance\s*:\s*(#.*)?$/.test(line)
      continue
    }
    const m = inside && line.match(/^\s+profile\s*:\s*["']?([A-Za-z]+)["']?\s*(#.*)?$/)
    if (m) return m[1]
  }
  return ""
}
`
