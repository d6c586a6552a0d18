package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// claudeVersion is the Claude Code release the e2e tests and their fixtures
// are pinned to.
const claudeVersion = "2.1.328"

// captureEvents are the hook events whose payloads the e2e tests record
// beside miam's own hooks.
var captureEvents = []string{
	"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
	"PostToolUseFailure", "SubagentStart", "SubagentStop", "Stop",
}

// toolEvents take a tool matcher in settings.json and name a tool in their payload.
var toolEvents = map[string]bool{"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true}

// repoRoot walks up from the test's directory to the go.mod of module miam.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// claudeBin finds the Claude Code CLI: MIAM_CLAUDE_BIN, else the copy the CI
// script installs under .ci/node. Without one the tests skip locally but fail
// in CI, where they are the proof that the hooks work and must never be skipped.
func claudeBin(t *testing.T, root string) string {
	t.Helper()
	bin := os.Getenv("MIAM_CLAUDE_BIN")
	if bin == "" {
		bin = filepath.Join(root, ".ci", "node", "node_modules", ".bin", "claude")
	}
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("Claude Code CLI not found (%v): set MIAM_CLAUDE_BIN or npm install @anthropic-ai/claude-code@%s into .ci/node", err, claudeVersion)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// buildBinaries builds miam-hook and miam into one directory, as miam install
// expects: it registers the miam-hook found beside the miam binary.
func buildBinaries(t *testing.T, root string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/miam-hook", "./cmd/miam")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/miam-hook ./cmd/miam: %v\n%s", err, out)
	}
	return dir
}

// sandbox is one scenario's throwaway world: a project, an empty HOME, a
// TMPDIR and the directory the capture hook writes payloads into.
type sandbox struct {
	root, proj, home, tmp, capdir string
}

func newSandbox(t *testing.T) sandbox {
	t.Helper()
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r // the CLI reports resolved paths; scrubbing must match them
	}
	s := sandbox{root: root, proj: filepath.Join(root, "proj"), home: filepath.Join(root, "home"),
		tmp: filepath.Join(root, "tmp"), capdir: filepath.Join(root, "capture")}
	for _, d := range []string{s.proj, s.home, s.tmp, s.capdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid"}, args...)...)
		cmd.Dir = s.proj
		cmd.Env = append(withoutGit(os.Environ()), "HOME="+s.home, "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	writeFile(t, filepath.Join(s.proj, "README.md"), []byte("e2e project\n"))
	git("add", ".")
	git("commit", "-q", "-m", "init")
	writeFile(t, filepath.Join(s.proj, ".miam", "config.yaml"), []byte(e2eProjectConfig))
	return s
}

// e2eProjectConfig is the project config of every end-to-end sandbox: the
// scenarios prove other rules than rule 6 (plan first), whose own scenario
// removes this file to run on the defaults. writeFixtures records it beside
// the payloads, so that their replay decides under the same config.
const e2eProjectConfig = "rules:\n  plan: off\n"

// withoutGit drops GIT_* variables, so a test run from a git hook (where
// GIT_DIR and GIT_INDEX_FILE are set) never touches the real repository.
func withoutGit(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GIT_") {
			out = append(out, kv)
		}
	}
	return out
}

// addCaptureHooks appends, for every captured event, a hook that stores the
// payload in its own file named by nanosecond time and pid, so payloads are
// never lost, merged or interleaved and sort in the order they fired. It
// answers nothing, so it never changes a decision.
func addCaptureHooks(t *testing.T, proj, capdir string) {
	t.Helper()
	path := filepath.Join(proj, ".claude", "settings.json")
	settings := map[string]any{}
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &settings); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	command := fmt.Sprintf(`cat > "%s/$(date +%%s%%N)-$$.json"`, capdir)
	for _, ev := range captureEvents {
		group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command}}}
		if toolEvents[ev] {
			group["matcher"] = "*"
		}
		list, _ := hooks[ev].([]any)
		hooks[ev] = append(list, group)
	}
	settings["hooks"] = hooks
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, append(data, '\n'))
}

// hostEnv is what every host CLI's environment starts with: PATH from the
// test, everything else pinned to the sandbox, so neither the developer's
// keys and config nor miam's user config leak into a run.
func hostEnv(s sandbox, more ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.home,
		"TMPDIR=" + s.tmp,
		"XDG_CONFIG_HOME=" + filepath.Join(s.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(s.home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(s.home, ".cache"),
		"LANG=C.UTF-8",
	}, more...)
}

// claudeEnv is Claude Code's whole environment.
func claudeEnv(s sandbox, baseURL string) []string {
	env := hostEnv(s,
		"ANTHROPIC_BASE_URL="+baseURL,
		"ANTHROPIC_API_KEY=sk-ant-fake-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	)
	if os.Geteuid() == 0 {
		env = append(env, "IS_SANDBOX=1") // bypassPermissions is refused to root otherwise
	}
	return env
}

// runClaude runs one headless prompt in the project and returns its
// stream-json output. A non-zero exit fails the test with the output's tail.
func runClaude(t *testing.T, claude string, s sandbox, baseURL, prompt string) []byte {
	t.Helper()
	return runClaudeEnv(t, claude, s, claudeEnv(s, baseURL), prompt)
}

// runClaudeEnv is runClaude with the CLI's whole environment given.
func runClaudeEnv(t *testing.T, claude string, s sandbox, env []string, prompt string) []byte {
	t.Helper()
	return runClaudeMode(t, claude, s, env, prompt, "bypassPermissions")
}

// runClaudeMode is runClaudeEnv in the given permission mode, with more
// arguments.
func runClaudeMode(t *testing.T, claude string, s sandbox, env []string, prompt, mode string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, append([]string{"-p", prompt, "--output-format", "stream-json", "--verbose", "--permission-mode", mode}, args...)...)
	cmd.Dir = s.proj
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("claude -p: %v (ctx: %v)\nstdout tail:\n%s\nstderr:\n%s", err, ctx.Err(), tail(stdout.String(), 4000), stderr.String())
	}
	return stdout.Bytes()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// payload is one captured hook input.
type payload struct {
	Raw   []byte
	Event string // hook_event_name
	Tool  string // tool_name, for tool events
	Data  map[string]any
}

// readPayloads returns the captured payloads in the order they fired.
func readPayloads(t *testing.T, capdir string) []payload {
	t.Helper()
	entries, err := os.ReadDir(capdir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var out []payload
	for _, name := range names {
		raw, err := os.ReadFile(filepath.Join(capdir, name))
		if err != nil {
			t.Fatal(err)
		}
		p := payload{Raw: raw}
		if err := json.Unmarshal(raw, &p.Data); err != nil {
			t.Fatalf("captured payload %s: %v\n%s", name, err, raw)
		}
		p.Event, _ = p.Data["hook_event_name"].(string)
		p.Tool, _ = p.Data["tool_name"].(string)
		out = append(out, p)
	}
	return out
}

// scrubber replaces what is particular to one run or one machine with
// placeholders, so fixtures are stable and carry no machine paths.
type scrubber struct {
	repl map[string]string // literal → placeholder
}

var (
	toolUseID = regexp.MustCompile(`toolu_[A-Za-z0-9_]+`)
	osVersion = regexp.MustCompile(`"osVersion":"([^"]+)"`)
	slugChars = regexp.MustCompile(`[^A-Za-z0-9]`)
	// machine finds what must never reach a fixture.
	machine = regexp.MustCompile(`/tmp/|/root\b|/home/|/Users/|/private/`)
)

// newScrubber learns the run's session and agent ids from the payloads, its
// tool_use ids (numbered in order of first appearance) from the payloads then
// extra (the transcript), and the sandbox's paths.
func newScrubber(s sandbox, bindir string, payloads []payload, extra ...[]byte) *scrubber {
	sc := &scrubber{repl: map[string]string{}}
	add := func(old, placeholder string) {
		if _, seen := sc.repl[old]; old != "" && !seen {
			sc.repl[old] = placeholder
		}
	}
	var texts [][]byte
	agents := 0
	for _, p := range payloads {
		if id, _ := p.Data["session_id"].(string); id != "" {
			add(id, "<SESSION_ID>")
		}
		if id, _ := p.Data["agent_id"].(string); id != "" && sc.repl[id] == "" {
			agents++
			if agents == 1 {
				add(id, "<AGENT_ID>")
			} else {
				add(id, fmt.Sprintf("<AGENT_ID_%d>", agents))
			}
		}
		texts = append(texts, p.Raw)
	}
	tools := 0
	for _, text := range append(texts, extra...) {
		for _, id := range toolUseID.FindAllString(string(text), -1) {
			if sc.repl[id] == "" {
				tools++
				add(id, fmt.Sprintf("toolu_%d", tools))
			}
		}
		for _, m := range osVersion.FindAllSubmatch(text, -1) {
			add(string(m[1]), "<OS_VERSION>")
		}
	}
	add(s.proj, "<PROJ>")
	add(s.home, "<HOME>")
	add(s.tmp, "<TMPDIR>")
	add(s.capdir, "<CAPDIR>")
	add(slug(s.proj), "<PROJ_SLUG>")
	add(bindir, "<BIN>")
	add(s.root, "<ROOT>")
	return sc
}

// slug is how Claude Code names a project's directory under ~/.claude/projects.
func slug(path string) string { return slugChars.ReplaceAllString(path, "-") }

// scrub replaces every learned literal, longest first, so a path is never
// cut by a shorter prefix of it (the project lies under the sandbox root).
func (sc *scrubber) scrub(data []byte) []byte {
	olds := make([]string, 0, len(sc.repl))
	for old := range sc.repl {
		olds = append(olds, old)
	}
	sort.Slice(olds, func(i, j int) bool {
		if len(olds[i]) != len(olds[j]) {
			return len(olds[i]) > len(olds[j])
		}
		return olds[i] < olds[j]
	})
	var pairs []string
	for _, old := range olds {
		pairs = append(pairs, old, sc.repl[old])
	}
	return []byte(strings.NewReplacer(pairs...).Replace(string(data)))
}

// writeFixtures replaces fixtures/hosts/claude/<version>/<scenario>/ with the
// scrubbed payloads, one file each: NNN-<event>[-<tool>].json.
func writeFixtures(t *testing.T, root, scenario, proj string, sc *scrubber, payloads []payload) {
	t.Helper()
	dir := filepath.Join(root, "fixtures", "hosts", "claude", claudeVersion, scenario)
	// Replace the recorded payloads but keep the hand-written expect.txt.
	old, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := os.ReadFile(filepath.Join(proj, ".miam", "config.yaml"))
	switch {
	case err == nil:
		writeClean(t, filepath.Join(dir, "config.yaml"), cfg)
	case errors.Is(err, fs.ErrNotExist):
		os.Remove(filepath.Join(dir, "config.yaml"))
	default:
		t.Fatal(err)
	}
	for i, p := range payloads {
		name := fmt.Sprintf("%03d-%s", i+1, p.Event)
		if p.Tool != "" {
			name += "-" + p.Tool
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, sc.scrub(p.Raw), "", "  "); err != nil {
			t.Fatal(err)
		}
		pretty.WriteByte('\n')
		writeClean(t, filepath.Join(dir, name+".json"), pretty.Bytes())
	}
}

// writeClean writes a scrubbed fixture, refusing one that still holds a machine path.
func writeClean(t *testing.T, path string, data []byte) {
	t.Helper()
	if loc := machine.FindIndex(data); loc != nil {
		lo, hi := max(loc[0]-80, 0), min(loc[1]+80, len(data))
		t.Fatalf("%s would keep a machine path: …%s…", path, data[lo:hi])
	}
	writeFile(t, path, data)
}

// transcript returns the main session transcript Claude Code wrote under HOME.
func transcript(t *testing.T, s sandbox, sessionID string) []byte {
	t.Helper()
	path := filepath.Join(s.home, ".claude", "projects", slug(s.proj), sessionID+".jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		found, _ := filepath.Glob(filepath.Join(s.home, ".claude", "projects", "*", "*.jsonl"))
		t.Fatalf("transcript: %v (found %v)", err, found)
	}
	return data
}
