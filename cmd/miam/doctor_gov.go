package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"miam/hooks/policies"
	"miam/hooks/trace"
)

// minDurationMin is the shortest per_session max_duration_min doctor lets
// pass quietly: two days. A shorter cap ends long sessions in the middle of
// work, which is rarely what its author meant (SPEC §9).
const minDurationMin = 2880

// policiesWarnings checks project/.miam/policies.yaml: it loads, no blocking
// rule lacks a tool_pattern (it would block every call, read-only ones
// aside), and no max_duration_min is under two days.
func policiesWarnings(project string) []string {
	name := filepath.Join(project, filepath.FromSlash(policies.File))
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", policies.File, err)}
	}
	set, err := policies.Decode(policies.File, data)
	if err != nil {
		return []string{fmt.Sprintf("%v: the hook ignores the file (fail open) until it is fixed", err)}
	}
	var out []string
	for _, r := range set.Rules {
		if r.Pattern.Source == "" && (r.Verdict == policies.Block || r.Verdict == policies.Ask) {
			out = append(out, fmt.Sprintf("%s:%d: rule %q %ss without a tool_pattern: it applies to every call", policies.File, r.Line, r.ID, r.Verdict))
		}
		if r.PerSession != nil && r.PerSession.MaxDurationMin > 0 && r.PerSession.MaxDurationMin < minDurationMin {
			out = append(out, fmt.Sprintf("%s:%d: rule %q caps sessions at %d min (< %d, two days): long sessions will be stopped mid-work",
				policies.File, r.Line, r.ID, r.PerSession.MaxDurationMin, minDurationMin))
		}
	}
	return out
}

// guardHook finds the hook path a generated miam-guard.js was written for.
var guardHook = regexp.MustCompile(`(?m)^const HOOK = ("(?:[^"\\]|\\.)*")`)

// managedWarnings reports the files `miam install` wrote whose miam part was
// changed by hand since: installing again would rewrite them. Files that
// are not there (a host not installed) are not reported.
func managedWarnings(project string) []string {
	var out []string
	read := func(rel string) ([]byte, bool) {
		data, err := os.ReadFile(filepath.Join(project, filepath.FromSlash(rel)))
		return data, err == nil
	}
	// miam's entries of a merged file: merging them again with the hook
	// path found there must change nothing.
	if data, ok := read(".claude/settings.json"); ok && bytes.Contains(data, []byte("miam-hook")) {
		if hook := hookIn(data); hook != "" {
			if merged, err := mergeSettings(data, hook); err != nil || !jsonEqual(data, merged) {
				out = append(out, ".claude/settings.json: miam's hook entries were edited by hand (some event lost its miam-hook, or changed): run miam install again")
			}
		}
	}
	if data, ok := read(copilotHooksFile); ok {
		if hook := hookIn(data); hook != "" {
			if merged, err := mergeCopilotHooks(data, hook); err != nil || !jsonEqual(data, merged) {
				out = append(out, copilotHooksFile+": miam's handlers were edited by hand: run miam install --host copilot again")
			}
		}
	}
	// A whole generated file: it must be exactly what install writes.
	if data, ok := read(opencodePlugin); ok && bytes.Contains(data, []byte(managedMark)) {
		var hook string
		if m := guardHook.FindSubmatch(data); m == nil || json.Unmarshal(m[1], &hook) != nil || !bytes.Equal(data, opencodeGuard(hook)) {
			out = append(out, opencodePlugin+": edited by hand since miam install wrote it (install again would overwrite it; remove the "+managedMark+" line to keep your version)")
		}
	}
	return out
}

// hookCommand finds the first miam-hook path in a hooks document.
// The path is bare, or single-quoted by shellQuote when it holds a space
// or another character the shell would read.
var hookCommand = regexp.MustCompile(`"(?:command|bash)"\s*:\s*"(?:'([^']*miam-hook)'|([^"' ]*miam-hook))`)

func hookIn(data []byte) string {
	if m := hookCommand.FindSubmatch(data); m != nil {
		return string(m[1]) + string(m[2])
	}
	return ""
}

// hostsWarnings reports the hosts miam is installed for in the project
// that never emitted a trace: a hook that never runs (Copilot CLI runs a
// folder's hooks only once it is trusted; opencode loads plugins from the
// project it starts in) protects nothing. Without a ledger yet, nothing
// ran at all, which is said once.
func hostsWarnings(project string) []string {
	installed := map[string]bool{}
	for host, rel := range map[string]string{"claude": ".claude/settings.json", "copilot": copilotHooksFile, "opencode": opencodePlugin} {
		if data, err := os.ReadFile(filepath.Join(project, filepath.FromSlash(rel))); err == nil &&
			(bytes.Contains(data, []byte("miam-hook")) || bytes.Contains(data, []byte(managedMark))) {
			installed[host] = true
		}
	}
	if len(installed) == 0 {
		return nil
	}
	f, err := os.Open(filepath.Join(project, ".miam", trace.FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return []string{"miam is installed here but no hook has run yet (no .miam/" + trace.FileName + "): start a session to check it"}
	}
	if err != nil {
		return []string{fmt.Sprintf(".miam/%s: %v", trace.FileName, err)}
	}
	defer f.Close()
	t, err := trace.Read(f)
	if err != nil {
		return []string{fmt.Sprintf(".miam/%s: %v", trace.FileName, err)}
	}
	var out []string
	for _, host := range slices.Sorted(maps.Keys(installed)) {
		if t.Hosts[host] == 0 {
			hint := ""
			if host == "copilot" {
				hint = " (Copilot CLI runs a folder's hooks only once the folder is trusted)"
			}
			out = append(out, fmt.Sprintf("miam is installed for %s but %s never ran miam-hook here%s", host, host, hint))
		}
	}
	return out
}
