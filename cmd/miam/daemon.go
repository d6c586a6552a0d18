package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"miam/delegate"
	"miam/delegate/engines/api"
	"miam/delegate/engines/haiku"
	"miam/delegate/engines/local"
	"miam/delegate/store"
	"miam/delegate/tools"
	"miam/delegate/wire"
	"miam/hooks/config"
)

// version is reported to MCP clients.
const version = "0.1.0"

// daemonEnv is what the daemon side reads from the environment, once.
type daemonEnv struct {
	stateDir   string
	configFile string // the user's config.yaml
	ollamaHost string
	lookup     func(string) string // for the key variables named in config
}

func readDaemonEnv() (daemonEnv, error) {
	dir, err := stateDir()
	if err != nil {
		return daemonEnv{}, err
	}
	cfgHome := os.Getenv("XDG_CONFIG_HOME")
	if cfgHome == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cfgHome = filepath.Join(home, ".config")
		}
	}
	return daemonEnv{stateDir: dir, configFile: filepath.Join(cfgHome, "miam", "config.yaml"),
		ollamaHost: os.Getenv("OLLAMA_HOST"), lookup: os.Getenv}, nil
}

// loadUserConfig reads the user's config; the daemon serves every project
// of the user, so project files do not configure it.
func loadUserConfig(path string) (config.Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return config.Config{}, nil
	}
	if err != nil {
		return config.Config{}, err
	}
	return config.Decode(config.Config{}, path, data)
}

// buildEngines makes the ladder of config engines.order.
func buildEngines(cfg config.Config, env daemonEnv, spent func(context.Context) (float64, error)) ([]delegate.Engine, error) {
	e := cfg.Engines
	host := e.Local.Host
	if host == "" {
		host = env.ollamaHost
	}
	keyOf := func(name, def string) string {
		if name == "" {
			name = def
		}
		return env.lookup(name)
	}
	byName := map[string]delegate.Engine{
		"local": &local.Engine{Host: host, Model: e.Local.Model, BenchLock: e.BenchLock},
		"api": &api.Engine{BaseURL: e.API.BaseURL, Key: keyOf(e.API.KeyEnv, "OPENROUTER_API_KEY"), Model: e.API.Model,
			DailyCapUSD: e.API.DailyCapUSD, Projects: e.API.Projects,
			SpentToday: spent},
		"haiku": &haiku.Engine{BaseURL: e.Haiku.BaseURL, Key: keyOf(e.Haiku.KeyEnv, "ANTHROPIC_API_KEY"), Model: e.Haiku.Model},
	}
	order := e.Order
	if len(order) == 0 {
		order = []string{"local", "api", "haiku"}
	}
	var out []delegate.Engine
	for _, n := range order {
		eng, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("engines.order: unknown engine %q (local, api, haiku)", n)
		}
		out = append(out, eng)
	}
	return out, nil
}

func seconds(n, def int) time.Duration {
	if n <= 0 {
		n = def
	}
	return time.Duration(n) * time.Second
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("serve", flag.ContinueOnError)
	fl.SetOutput(stderr)
	listen := fl.String("listen", "127.0.0.1:0", "loopback address to listen on")
	idle := fl.Duration("idle", 0, "exit after this long with nothing to do (0: never; miam mcp starts the daemon with 30m)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	env, err := readDaemonEnv()
	if err != nil {
		return err
	}
	cfg, err := loadUserConfig(env.configFile)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(env.stateDir, 0o700); err != nil {
		return err
	}
	// One daemon per user: the lock is held for the daemon's lifetime.
	lock, err := os.OpenFile(filepath.Join(env.stateDir, "serve.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("a miam daemon already runs for this user (%s): %w", env.stateDir, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()

	// The api engine's spend ledger is the store, which the daemon opens
	// after the engines are built; it is set before the daemon serves.
	var st *store.Store
	spent := func(ctx context.Context) (float64, error) {
		if st == nil {
			return 0, errors.New("spend ledger not open")
		}
		return st.SpentToday(ctx, "api", time.Now())
	}
	engines, err := buildEngines(cfg, env, spent)
	if err != nil {
		return err
	}
	d, err := delegate.Open(delegate.Config{
		StateDir: env.stateDir, Engines: engines, Listen: *listen,
		Checker:     newProjectChecker(cfg, log),
		CallWait:    seconds(cfg.Delegation.CallWaitS, 45),
		RouteWait:   seconds(cfg.Delegation.AttenteRouteS, 3600),
		SansProgres: seconds(cfg.Delegation.SansProgresS, 600),
		Essais:      cfg.Delegation.Essais,
		JobContext: func(ctx context.Context, j delegate.Job) context.Context {
			return local.WithSession(ctx, j.Session)
		},
		Log: log,
	})
	if err != nil {
		return err
	}
	defer d.Close()
	st = d.Store()

	mux := daemonMux(d, seconds(cfg.Delegation.CallWaitS, 45))
	fmt.Fprintf(stdout, "miam daemon on %s (state in %s)\n", d.Addr().URL(), env.stateDir)
	if *idle > 0 {
		ctx = exitWhenIdle(ctx, d, *idle)
	}
	return d.Run(ctx, mux)
}

// daemonMux serves the daemon's routes and, at /mcp, the same MCP tools
// over streamable HTTP; the session and project come in the X-Miam-Session
// and X-Miam-Project headers. Every route needs the bearer token.
func daemonMux(d *delegate.Daemon, callWait time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", d.Handler())
	mcpHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return tools.NewServer(d, tools.Session{ID: r.Header.Get("X-Miam-Session"), Project: r.Header.Get("X-Miam-Project"),
			CallWait: callWait}, version)
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux.Handle("/mcp", d.Authorize(mcpHandler))
	return mux
}

// exitWhenIdle ends ctx once the daemon has been idle for limit, so that a
// daemon started on demand does not outlive its use.
func exitWhenIdle(ctx context.Context, d *delegate.Daemon, limit time.Duration) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(min(limit/4, time.Minute))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if d.IdleFor() >= limit {
					cancel()
					return
				}
			}
		}
	}()
	return ctx
}

func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fl.SetOutput(stderr)
	if err := fl.Parse(args); err != nil {
		return err
	}
	env, err := readDaemonEnv()
	if err != nil {
		return err
	}
	cfg, err := loadUserConfig(env.configFile)
	if err != nil {
		return err
	}
	project := os.Getenv("CLAUDE_PROJECT_DIR")
	if project == "" {
		if project, err = os.Getwd(); err != nil {
			return err
		}
	}
	session := os.Getenv("CLAUDE_CODE_SESSION_ID")
	backend := lazyDaemon{c: &delegate.Client{Dir: env.stateDir}, dir: env.stateDir}
	srv := tools.NewServer(backend, tools.Session{ID: session, Project: project, CallWait: seconds(cfg.Delegation.CallWaitS, 45)}, version)
	return srv.Run(ctx, &mcp.StdioTransport{})
}

// ensureDaemon attaches to the user's daemon, starting it when none answers.
// Several `miam mcp` may start at once (two Claude sessions): a lock makes
// one of them spawn and the others wait for it.
func ensureDaemon(ctx context.Context, c *delegate.Client, dir string) error {
	if c.Ping(ctx) == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "spawn.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	if c.Ping(ctx) == nil {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "daemon.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(self, "serve", "--idle", "30m")
	cmd.Stdout, cmd.Stderr = logf, logf
	// The daemon serves every project of the user and outlives this
	// session: it runs in its state dir, not in the project that happened
	// to start it, and without this session's Claude Code plumbing.
	cmd.Dir = dir
	cmd.Env = daemonEnviron(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives this session
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the daemon: %w", err)
	}
	// A daemon that cannot start (a broken config, another one wedged on
	// the lock) exits at once: say so now rather than after the deadline.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if c.Ping(ctx) == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-exited:
			if c.Ping(ctx) == nil {
				return nil // it lost the race to a daemon that answers now
			}
			return fmt.Errorf("the daemon exited at start (%v); see %s", err, filepath.Join(dir, "daemon.log"))
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("the daemon did not answer within 15 s; see %s", filepath.Join(dir, "daemon.log"))
}

// lazyDaemon starts the daemon on the first tool call that needs it, not
// when Claude Code launches `miam mcp`: a session that never delegates
// starts nothing.
type lazyDaemon struct {
	c   *delegate.Client
	dir string
}

// ensured runs f once the daemon answers.
func ensured[T any](ctx context.Context, l lazyDaemon, f func() (T, error)) (T, error) {
	if err := ensureDaemon(ctx, l.c, l.dir); err != nil {
		var zero T
		if !errors.Is(err, wire.ErrUnreachable) {
			err = fmt.Errorf("%w: %w", wire.ErrUnreachable, err)
		}
		return zero, err
	}
	return f()
}

func (l lazyDaemon) Submit(ctx context.Context, session, project string, req wire.Request) (wire.Answer, error) {
	return ensured(ctx, l, func() (wire.Answer, error) { return l.c.Submit(ctx, session, project, req) })
}

func (l lazyDaemon) Follow(ctx context.Context, id string, wait time.Duration) (wire.Answer, error) {
	return ensured(ctx, l, func() (wire.Answer, error) { return l.c.Follow(ctx, id, wait) })
}

func (l lazyDaemon) Cancel(ctx context.Context, id string) (wire.Answer, error) {
	return ensured(ctx, l, func() (wire.Answer, error) { return l.c.Cancel(ctx, id) })
}

func (l lazyDaemon) Etat(ctx context.Context, project string) (delegate.Etat, error) {
	return ensured(ctx, l, func() (delegate.Etat, error) { return l.c.Etat(ctx, project) })
}

// daemonEnviron drops the variables that belong to one Claude Code session
// (its id, messaging socket and token, project dir) from the daemon's
// environment; keys and XDG paths stay.
func daemonEnviron(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name == "CLAUDECODE" || strings.HasPrefix(name, "CLAUDE_CODE_") || name == "CLAUDE_PROJECT_DIR" || name == "CLAUDE_PID" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func runEtat(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("etat", flag.ContinueOnError)
	fl.SetOutput(stderr)
	asJSON := fl.Bool("json", false, "print JSON")
	if err := fl.Parse(args); err != nil {
		return err
	}
	env, err := readDaemonEnv()
	if err != nil {
		return err
	}
	project, _ := os.Getwd()
	if p := os.Getenv("CLAUDE_PROJECT_DIR"); p != "" {
		project = p
	}
	e, err := (&delegate.Client{Dir: env.stateDir}).Etat(ctx, project)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(e)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ENGINE\tREADY\tMODEL\tREASON")
	for _, en := range e.Engines {
		fmt.Fprintf(tw, "%s\t%v\t%s\t%s\n", en.Name, en.Ready, en.Model, en.Reason)
	}
	tw.Flush()
	var q []string
	for _, k := range slices.Sorted(maps.Keys(e.Queue)) {
		if v := e.Queue[k]; v > 0 {
			q = append(q, fmt.Sprintf("%s %d", k, v))
		}
	}
	fmt.Fprintf(stdout, "queue: %s\nspent today: %.4f USD\n", strings.Join(q, ", "), e.SpentToday)
	return nil
}
