package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"miam/sandbox"
)

// errNoBackend makes `miam doctor` exit 1 when no sandbox backend works.
var errNoBackend = errors.New("no sandbox backend works on this machine: the commande control will refuse to run")

// runDoctor reports which sandbox backend works on this machine and why the
// others do not (doctor [--json]).
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return doctor(ctx, args, stdout, stderr, sandbox.Detect)
}

// doctor is runDoctor with the detection injected.
func doctor(ctx context.Context, args []string, stdout, stderr io.Writer, detect func(context.Context) sandbox.Capabilities) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the probes as one JSON object")
	dir := fs.String("dir", "", "the project whose miam files to check (default $CLAUDE_PROJECT_DIR, else the nearest directory holding .miam/)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	project, err := projectDir(*dir)
	if err != nil {
		return err
	}
	warnings := slices.Concat(policiesWarnings(project), managedWarnings(project), hostsWarnings(project))
	caps := detect(ctx)
	best, ok := caps.Best()
	if *asJSON {
		out := struct {
			Backend string `json:"backend"`
			sandbox.Capabilities
			Warnings []string `json:"warnings"`
		}{Capabilities: caps, Warnings: warnings}
		if ok {
			out.Backend = best.Backend
		}
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout, "sandbox backends, in order of preference:")
		for _, p := range caps.Probes {
			state := "no"
			if p.OK {
				state = "ok"
			}
			detail := p.Reason
			if p.OK {
				detail = p.Path
				if p.Rlimits != "" {
					detail = strings.TrimSpace(detail + " (rlimits set by " + p.Rlimits + ")")
				}
			}
			fmt.Fprintf(stdout, "  %-9s %-3s %s\n", p.Backend, state, detail)
			if p.Fix != "" {
				fmt.Fprintf(stdout, "                fix: %s\n", p.Fix)
			}
		}
		if ok {
			fmt.Fprintf(stdout, "the commande control runs in: %s\n", best.Backend)
			if caps.Root {
				fmt.Fprintln(stdout, "miam runs as root: commands run as uid 65534 inside the sandbox")
			}
		}
		fmt.Fprintf(stdout, "project %s: ", project)
		if len(warnings) == 0 {
			fmt.Fprintln(stdout, "no warning")
		} else {
			fmt.Fprintln(stdout, len(warnings), "warning(s)")
			for _, w := range warnings {
				fmt.Fprintln(stdout, "  warning:", w)
			}
		}
	}
	if !ok {
		return errNoBackend
	}
	return nil
}
