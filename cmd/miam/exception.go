package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"miam/budgets"
)

// fileList is a repeatable, comma-separated --fichiers.
type fileList []string

func (f *fileList) String() string { return strings.Join(*f, ",") }

func (f *fileList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*f = append(*f, p)
		}
	}
	return nil
}

// runException is `miam exception RAISON --fichiers F[,G] --lignes N`: it
// leaves the request in <project>/.miam/state/exceptions-pending.json, and
// the next hook call of any session of the project opens it in that
// session (SPEC §6). The MCP tool exception does the same in one step.
func runException(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("exception", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var files fileList
	fl.Var(&files, "fichiers", "files (or globs) the exception covers; repeat or separate with commas")
	lines := fl.Int("lignes", 0, "code lines granted")
	dir := fl.String("dir", "", "project directory (default $CLAUDE_PROJECT_DIR, else the nearest directory holding .miam/)")
	asJSON := fl.Bool("json", false, "print the request as JSON")
	fl.Usage = func() {
		fmt.Fprintf(stderr, "usage: miam exception RAISON --fichiers F[,G] --lignes N\nRAISON is one of %s\n", strings.Join(budgets.ExceptionReasons, ", "))
		fl.PrintDefaults()
	}
	var raison string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		raison, args = args[0], args[1:]
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if raison == "" && fl.NArg() > 0 {
		raison = fl.Arg(0)
	}
	project, err := projectDir(*dir)
	if err != nil {
		return err
	}
	abs := make([]string, len(files))
	for i, f := range files {
		a, err := filepath.Abs(f)
		if err != nil {
			return fmt.Errorf("fichiers: %w", err)
		}
		abs[i] = a
	}
	e := budgets.Exception{Raison: raison, Fichiers: abs, Lignes: *lines, Source: "cli"}
	if err := budgets.CheckException(e.Raison, e.Fichiers, e.Lignes); err != nil {
		return err
	}
	store := budgets.Store{Dir: filepath.Join(project, ".miam", "state")}
	if err := store.RequestException(e); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(e)
	}
	fmt.Fprintf(stdout, "exception requested (%s): %d code lines for %s; it opens at the hook's next call.\n", raison, *lines, strings.Join(files, ", "))
	return nil
}
