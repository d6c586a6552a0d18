// Command miam-hook is the per-call hook Claude Code runs on every tool call
// and session event: one payload on stdin, one verdict on stdout. It must
// stay small and fast, and it never breaks the user's session: any internal
// failure lets the call through and says so (fail open).
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
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"miam/budgets"
	"miam/delegate/wire"
	"miam/hooks"
	"miam/hooks/config"
	"miam/hooks/trace"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, environ()))
}

// maxPayload bounds what is read from stdin: a Write payload carries the
// whole file, but nothing legitimate comes near this.
const maxPayload = 64 << 20

// Env is the environment the hook reads, once, here and nowhere else.
type Env struct {
	ProjectDir    string // CLAUDE_PROJECT_DIR
	ConfigHome    string // XDG_CONFIG_HOME, else $HOME/.config
	StateHome     string // XDG_STATE_HOME, else $HOME/.local/state: the daemon's status.json
	DebugLogLevel string // MIAM_LOG: debug, info; logs go to stderr, never stdout
	// UnderCopilot is COPILOT_CLI=1: the GitHub Copilot CLI runs this hook
	// (it also runs the hooks of .claude/settings.json).
	UnderCopilot bool
	// Now is the clock, read once; zero is time.Now at the start of run.
	Now time.Time
}

// envVars documents the variables read, for -help.
var envVars = [][2]string{
	{"CLAUDE_PROJECT_DIR", "project root (set by Claude Code and Copilot CLI, and by miam-guard.js under opencode); never the payload cwd, which follows cd"},
	{"XDG_CONFIG_HOME", "user config dir (miam/config.yaml); default $HOME/.config"},
	{"XDG_STATE_HOME", "state dir (miam/status.json, the daemon's executors); default $HOME/.local/state"},
	{"MIAM_LOG", "log level on stderr (debug, info); silent when unset"},
	{"COPILOT_CLI", "1 under the GitHub Copilot CLI: the Claude Code entry stands aside when the Copilot one is installed"},
}

func environ() Env {
	e := Env{
		ProjectDir:    os.Getenv("CLAUDE_PROJECT_DIR"),
		ConfigHome:    os.Getenv("XDG_CONFIG_HOME"),
		StateHome:     os.Getenv("XDG_STATE_HOME"),
		DebugLogLevel: os.Getenv("MIAM_LOG"),
		UnderCopilot:  os.Getenv("COPILOT_CLI") == "1",
		Now:           time.Now(),
	}
	home, herr := os.UserHomeDir()
	if e.ConfigHome == "" && herr == nil {
		e.ConfigHome = filepath.Join(home, ".config")
	}
	if e.StateHome == "" && herr == nil {
		e.StateHome = filepath.Join(home, ".local", "state")
	}
	return e
}

// hook holds the seams of one run; the zero value is the real thing.
type hook struct {
	decide func(hooks.Event, budgets.State, hooks.Env) (hooks.Verdict, budgets.State)
	log    *slog.Logger
}

// run never returns anything but 0: Claude Code reads exit 1 as "proceed"
// and exit 2 (what a Go panic gives) as "deny", so an accident must not be
// either. Decisions travel in stdout's JSON.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env Env) int {
	h := hook{decide: hooks.Decide}
	return h.run(ctx, args, stdin, stdout, stderr, env)
}

func (h hook) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env Env) (code int) {
	fl := flag.NewFlagSet("miam-hook", flag.ContinueOnError)
	fl.SetOutput(stderr)
	host := fl.String("host", "claude", "host whose wire format to speak: claude, copilot or opencode")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: miam-hook [--host claude|copilot|opencode] [event] < payload.json")
		fmt.Fprintln(stderr, "  event: the host's event name, for hosts whose payload lacks it (copilot: preToolUse, …)")
		fl.PrintDefaults()
		fmt.Fprintln(stderr, "environment:")
		for _, v := range envVars {
			fmt.Fprintf(stderr, "  %-20s %s\n", v[0], v[1])
		}
	}
	if err := fl.Parse(args); err != nil {
		return 0
	}
	if h.log == nil {
		h.log = logger(stderr, env.DebugLogLevel)
	}
	ev := hooks.Event{}
	answer := hooks.Host(*host) // the dialect to answer in; decoding may refine it
	if env.Now.IsZero() {
		env.Now = time.Now()
	}
	var rec *trace.Record
	emitted := false // stdout carries one verdict: a panic after it adds none
	defer func() {
		if r := recover(); r != nil {
			h.log.Error("panic", "panic", r, "stack", string(debug.Stack()))
			if !emitted {
				h.emit(stdout, answer, ev.Name, failOpen(fmt.Errorf("internal error: %v", r)))
			}
			if rec == nil && env.ProjectDir != "" && hooks.Traced(ev, true) {
				unchecked := hooks.UncheckedRecord(ev, answer, env.Now)
				h.record(env.ProjectDir, &unchecked)
			}
			code = 0
		}
	}()
	var v hooks.Verdict
	var name hooks.EventName
	v, name, rec = h.decideOne(ctx, stdin, env, &ev, &answer, fl.Arg(0))
	h.emit(stdout, answer, name, v)
	emitted = true
	h.record(env.ProjectDir, rec)
	return 0
}

// record appends rec, when there is one, to the trace ledger. A ledger
// that cannot be written is only logged, at debug: every call would say so
// again, and the ledger must never get in the session's way.
func (h hook) record(project string, rec *trace.Record) {
	if rec == nil {
		return
	}
	if err := appendTrace(project, *rec); err != nil {
		h.log.Debug("trace ledger", "err", err)
	}
}

// decideOne reads the payload, loads config and state, decides and persists.
// Every failure becomes a fail-open verdict carrying a notice. The record
// returned is the trace ledger's, nil when the event has none.
func (h hook) decideOne(_ context.Context, stdin io.Reader, env Env, ev *hooks.Event, host *hooks.Host, event string) (hooks.Verdict, hooks.EventName, *trace.Record) {
	data, err := io.ReadAll(io.LimitReader(stdin, maxPayload))
	if err != nil {
		return failOpen(fmt.Errorf("read payload: %w", err)), "", nil
	}
	*ev, *host, err = hooks.DecodeHost(*host, event, data)
	if err != nil {
		// Not a payload we understand: no opinion, and nothing to notify
		// about, since we cannot tell which event this was.
		h.log.Warn("undecodable payload", "err", err)
		return hooks.Verdict{}, "", nil
	}
	if env.ProjectDir == "" {
		h.log.Info("no CLAUDE_PROJECT_DIR: no opinion")
		return hooks.Verdict{}, ev.Name, nil
	}
	if *host == hooks.Claude && env.UnderCopilot && copilotInstalled(env.ProjectDir) {
		// Copilot runs .claude/settings.json's hooks besides its own: the
		// Copilot entry decides, this one would charge every call twice.
		h.log.Info("under Copilot CLI with miam's Copilot hooks installed: the Claude Code entry stands aside")
		return hooks.Verdict{}, ev.Name, nil
	}
	// traced is the ledger's record of verdict v; unchecked, of a failure.
	traced := func(v hooks.Verdict, evaluated bool, measured []string, args string) *trace.Record {
		if !hooks.Traced(*ev, evaluated) {
			return nil
		}
		r := hooks.TraceRecord(*ev, *host, v, measured, args, env.Now)
		return &r
	}
	unchecked := func() *trace.Record {
		if !hooks.Traced(*ev, true) {
			return nil
		}
		r := hooks.UncheckedRecord(*ev, *host, env.Now)
		return &r
	}
	files := os.DirFS(env.ProjectDir)
	// Counting the lines of a file write is most of the work: it starts
	// now, on the other core, while the policies and the config are read
	// and the session's lock is taken.
	var measured chan *hooks.Measurement
	if ev.Name == hooks.PreToolUse && hooks.WritesFile(ev.Tool) {
		measured = make(chan *hooks.Measurement, 1)
		go func() {
			defer func() {
				if recover() != nil {
					measured <- nil // Decide will measure again, and fail open there
				}
			}()
			measured <- hooks.Measure(ev.Tool, env.ProjectDir, files)
		}()
	}
	pol, hasPolicies, polErr := loadPolicies(env.ProjectDir, hooks.PoliciesAct(*ev))
	if !hooks.NeedsState(*ev) && !(hasPolicies && hooks.PoliciesConcern(*ev, pol)) {
		return hooks.Verdict{}, ev.Name, traced(hooks.Verdict{}, false, nil, hooks.TraceArgs(*ev))
	}
	cfg, err := loadConfig(env)
	if err != nil {
		return failOpen(err), ev.Name, unchecked()
	}
	denv := hooks.Env{Config: cfg, Project: env.ProjectDir, Files: files, TaskOutput: readTaskOutput,
		Executors: statusLoader(env.StateHome), Now: env.Now, Policies: pol, PoliciesErr: polErr, Transcript: readTranscript}
	store := budgets.Store{Dir: filepath.Join(env.ProjectDir, ".miam", "state")}
	// The ledger's hash of the input, while the other core counts lines
	// (Decide waits for the count below).
	var args string
	if hooks.Traced(*ev, true) {
		args = hooks.TraceArgs(*ev)
		denv.Fingerprint = args // the same hash: the policies' approvals
	}
	if measured != nil {
		// Decide waits for the count only when a rule needs it.
		denv.Measured = sync.OnceValue(func() *hooks.Measurement { return <-measured })
	}
	var v hooks.Verdict
	var decided bool
	var measuredBy []string
	err = store.Update(ev.SessionID, func(st *budgets.State) error {
		// `miam exception` requests go to the first session that calls.
		if req, err := store.ClaimExceptions(); err != nil {
			h.log.Error("exceptions", "err", err)
		} else {
			denv.Requested = req
		}
		before := *st // Decide does not modify the state it is given
		v, *st = h.decide(*ev, before, denv)
		decided, measuredBy = true, hooks.NewlyMeasured(before, *st)
		return nil
	})
	if err != nil {
		// The verdict stands even when its charge could not be saved.
		h.log.Error("state", "err", err)
		v = hooks.Combine(v, hooks.Verdict{Notice: "miam: session state not saved: " + err.Error()})
	}
	if !decided {
		return v, ev.Name, unchecked() // the session's lock could not be taken
	}
	return v, ev.Name, traced(v, true, measuredBy, args)
}

// failOpen is the verdict of an internal failure: the call goes through and
// the user is told this call was not checked.
func failOpen(err error) hooks.Verdict {
	return hooks.Verdict{Notice: "miam-hook failed open (this call was not checked): " + err.Error()}
}

func (h hook) emit(w io.Writer, host hooks.Host, ev hooks.EventName, v hooks.Verdict) {
	out, _, err := hooks.Encode(host, ev, v)
	if err != nil {
		h.log.Error("encode", "err", err)
		return
	}
	if _, err := w.Write(out); err != nil {
		h.log.Error("write verdict", "err", err)
	}
}

// loadConfig reads the user's and the project's config files; a missing
// file is an empty one.
func loadConfig(env Env) (config.Config, error) {
	var userName string
	var user []byte
	if env.ConfigHome != "" {
		userName = filepath.Join(env.ConfigHome, "miam", "config.yaml")
		var err error
		if user, err = readOptional(userName); err != nil {
			return config.Config{}, err
		}
	}
	projectName := filepath.Join(env.ProjectDir, ".miam", "config.yaml")
	project, err := readOptional(projectName)
	if err != nil {
		return config.Config{}, err
	}
	return config.Load(userName, user, projectName, project)
}

// readTaskOutput reads a background task's output file (a reprise's one
// JSON line); it is small, and is read only on a wake-up.
func readTaskOutput(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

func readOptional(name string) ([]byte, error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return data, nil
}

func logger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	switch level {
	case "debug":
		l = slog.LevelDebug
	case "info":
		l = slog.LevelInfo
	default:
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// statusLoader reads the daemon's status.json, only when a delegation deny
// asks for it; false means missing or unreadable.
func statusLoader(stateHome string) func() (wire.Status, bool) {
	return func() (wire.Status, bool) {
		if stateHome == "" {
			return wire.Status{}, false
		}
		data, err := os.ReadFile(filepath.Join(stateHome, "miam", wire.StatusFile))
		if err != nil {
			return wire.Status{}, false
		}
		var st wire.Status
		if json.Unmarshal(data, &st) != nil {
			return wire.Status{}, false
		}
		return st, true
	}
}

// copilotInstalled reports whether the project has miam's Copilot CLI
// hooks (miam install --host copilot).
func copilotInstalled(project string) bool {
	data, err := os.ReadFile(filepath.Join(project, ".github", "hooks", "miam.json"))
	return err == nil && bytes.Contains(data, []byte("miam-hook"))
}
