// Command miam is everything but the per-call hook: install, replay, and
// (later) the delegation daemon and its clients.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"

	"miam/sandbox"
)

func main() {
	// The native and Landlock sandbox backends re-run miam as their helper:
	// such a run ends here.
	sandbox.Init()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"install":  {"install miam's hooks for Claude Code, Copilot CLI or opencode (install [--dir DIR] [--host claude,copilot,opencode])", runInstall},
		"replay":   {"replay a Claude Code transcript through the hooks (replay TRANSCRIPT [--json])", runReplay},
		"serve":    {"run the delegation daemon in the foreground (serve [--listen 127.0.0.1:0])", runServe},
		"mcp":      {"the MCP server Claude Code launches (stdio); starts the daemon if needed", runMCP},
		"etat":     {"engines, queue and spend today (etat [--json])", runEtat},
		"stats":    {"engines (tries, first-try success, repairs, cost per model) and governance (block rate, top rules from .miam/traces.jsonl) (stats [--dir DIR] [--json])", runStats},
		"doctor":   {"which sandbox backend works here and why the others do not (doctor [--json])", runDoctor},
		"attendre": {"wait for a delegation's end and print its answer as one JSON line (attendre DEMANDE_ID)", runAttendre},

		"exception": {"open an exception to write by hand (exception RAISON --fichiers F --lignes N)", runException},
		"statusline": {"rule 9's status line for Claude Code's statusLine setting (reads its JSON on stdin)",
			func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
				return runStatusline(ctx, args, os.Stdin, stdout, stderr)
			}},
		"policies": {"temporal policies' counters (policies status|reset-session [--session-id ID] [--json])", runPolicies},
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr, cmds)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "miam: unknown command %q\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	if err := c.run(ctx, args[1:], stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "miam %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: miam COMMAND [flags]")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
}

// projectDir is the project a command acts on: --dir, else
// $CLAUDE_PROJECT_DIR, else the nearest directory from here up that holds
// .miam/, else here.
func projectDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("CLAUDE_PROJECT_DIR")
	}
	if dir != "" {
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, ".miam")); err == nil && fi.IsDir() {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return wd, nil
		}
	}
}
