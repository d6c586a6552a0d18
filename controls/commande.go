package controls

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"miam/delegate/wire"
	"miam/sandbox"
)

// Commande is the commande control of SPEC §4–§5: it runs the request's
// declared command (`commande`) in a sandbox clone of the project with the
// answer written at `sortie`. The command must be in the project's
// allow-list (sandbox.commandes); a refused command spawns nothing. With
// RougeDabord the command must first fail on a clone without the answer, so
// that a test the same model wrote proves something. The zero Commande
// allows no command: the daemon builds one from the configuration.
type Commande struct {
	// Runner runs the sandbox; nil means a Runner of its own per check
	// (which probes the machine each time).
	Runner *sandbox.Runner
	// Commandes is sandbox.commandes: the argv[0] names allowed.
	Commandes []string
	// AllowUnsandboxed is sandbox.allow_unsandboxed, taken from the user's
	// own configuration only.
	AllowUnsandboxed bool
	// RougeDabord requires the command to fail without the answer first,
	// for every request; a request asks it for itself with rouge_dabord.
	RougeDabord bool
	// Policy is the base sandbox policy (timeout, limits, read-only
	// toolchains); Clone and AllowUnsandboxed are set per check.
	Policy sandbox.Policy
}

// WithCommande returns a copy of r whose commande control is c: how a
// caller holding the configuration (sandbox.commandes, the user's
// allow_unsandboxed) replaces Full's commande, which allows no command.
func WithCommande(r *Registry, c Commande) *Registry {
	out := &Registry{byName: make(map[string]Control, len(r.byName))}
	for k, v := range r.byName {
		out.byName[k] = v
	}
	out.byName[NameCommande] = c
	return out
}

// Name returns "commande".
func (Commande) Name() string { return NameCommande }

// Cost returns CostSandbox.
func (Commande) Cost() Cost { return CostSandbox }

// maxCommandeOutput bounds the command output a failure message carries.
const maxCommandeOutput = 3000

// Check runs the command with the answer applied (and without it first,
// with RougeDabord) and fails with the command's trimmed output.
func (c Commande) Check(ctx context.Context, in Input) wire.Control {
	fail := func(format string, a ...any) wire.Control {
		return wire.Control{Nom: NameCommande, OK: false, Message: fmt.Sprintf(format, a...)}
	}
	line := strings.TrimSpace(in.Request.Commande)
	switch {
	case line == "":
		return fail("no command to run: give `commande` (for example \"pytest -k name\") or leave commande out of `controle`")
	case in.Dir == "":
		return fail("the project's directory is unknown: the command cannot run")
	case in.Request.Sortie == "":
		return fail("the command needs `sortie`: the file the answer is written to before it runs")
	}
	argv, err := sandbox.Parse(line, c.Commandes)
	if err != nil {
		return fail("%v", err)
	}
	r := c.Runner
	if r == nil {
		r = new(sandbox.Runner)
	}
	if c.RougeDabord || in.Request.RougeDabord {
		res, _, err := c.runIn(ctx, r, in, argv, false)
		if err != nil {
			return fail("cannot run %q without the answer: %s", line, shortError(err))
		}
		if res.ExitCode == 0 && !res.TimedOut {
			return fail("rouge_dabord: %q already passes without your answer, so its tests prove nothing; write a test that fails until %s is right", line, in.Request.Sortie)
		}
	}
	res, clone, err := c.runIn(ctx, r, in, argv, true)
	if err != nil {
		return fail("cannot run %q: %s", line, shortError(err))
	}
	switch {
	case res.TimedOut:
		return fail("%q was killed after %v (timeout); the code or its tests may loop or wait forever:\n%s", line, res.Duration.Round(time.Second), TrimOutput(res.Stdout, res.Stderr, clone))
	case res.ExitCode != 0:
		return fail("%q failed (exit %d) with your answer at %s:\n%s", line, res.ExitCode, in.Request.Sortie, TrimOutput(res.Stdout, res.Stderr, clone))
	}
	msg := fmt.Sprintf("%q passed in the sandbox (%s, %v)", line, res.Backend, res.Duration.Round(time.Millisecond))
	if c.RougeDabord || in.Request.RougeDabord {
		msg += ", and failed without the answer"
	}
	if res.Backend == sandbox.BackendNone {
		msg += "; WARNING: run WITHOUT isolation (sandbox.allow_unsandboxed is on in the user's config)"
	}
	return wire.Control{Nom: NameCommande, OK: true, Message: msg}
}

// runIn makes a clone of in.Dir, writes the answer when apply is set, runs
// argv there and removes the clone. The sandbox is prepared while the
// clone is filled (PrepareClone), which takes its set-up off the run's
// path. It returns the clone's path for trimming it from the output.
func (c Commande) runIn(ctx context.Context, r *sandbox.Runner, in Input, argv []string, apply bool) (sandbox.Result, string, error) {
	p := c.Policy
	p.AllowUnsandboxed = c.AllowUnsandboxed
	cl, pr, err := r.PrepareClone(ctx, in.Dir, p, argv)
	if err != nil {
		return sandbox.Result{}, "", err
	}
	defer cl.Close()
	defer pr.Close() // before the clone goes: it kills an unused sandbox
	if apply {
		if err := cl.WriteFile(filepath.FromSlash(in.Request.Sortie), []byte(in.Code)); err != nil {
			return sandbox.Result{}, cl.Dir, err
		}
	}
	if err := cl.Seal(); err != nil {
		return sandbox.Result{}, cl.Dir, err
	}
	res, err := pr.Run(ctx)
	return res, cl.Dir, err
}

// shortError is the first line of err: the no-isolation diagnostic is for
// `miam doctor`, not for the model.
func shortError(err error) string {
	first, _, _ := strings.Cut(err.Error(), "\n")
	if errors.Is(err, sandbox.ErrNoIsolation) {
		first += " (run `miam doctor`)"
	}
	return first
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// failureStart finds where a test runner's failure report begins: pytest's
// FAILURES/ERRORS banner, unittest's first FAIL/ERROR block.
var failureStart = regexp.MustCompile(`(?m)^(=+ (FAILURES|ERRORS) =+|={10,}\n(FAIL|ERROR): )`)

// goNoise are go test -v lines that say nothing about a failure.
var goNoise = regexp.MustCompile(`(?m)^(=== (RUN|PAUSE|CONT|NAME) .*|\s*--- (PASS|SKIP): .*)\n`)

// TrimOutput turns a failed command's output into what the model needs: valid
// UTF-8 without colour codes, the clone's path shown as ".", from the test
// runner's failure report on when one is found (pytest, unittest), without
// go test's RUN/PASS lines, and at most about 3000
// bytes (the head of the report and the summary at its end).
func TrimOutput(stdout, stderr []byte, clone string) string {
	out := strings.ToValidUTF8(string(stdout), "?")
	if len(stderr) > 0 {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += strings.ToValidUTF8(string(stderr), "?")
	}
	out = ansi.ReplaceAllString(out, "")
	if clone != "" {
		out = strings.ReplaceAll(out, clone+"/", "")
		out = strings.ReplaceAll(out, clone, ".")
	}
	if loc := failureStart.FindStringIndex(out); loc != nil {
		out = out[loc[0]:]
	}
	out = goNoise.ReplaceAllString(out, "")
	out = strings.TrimSpace(out)
	if len(out) <= maxCommandeOutput {
		return out
	}
	head, tail := out[:maxCommandeOutput*2/3], out[len(out)-maxCommandeOutput/3:]
	return strings.ToValidUTF8(head, "") + "\n[…]\n" + strings.ToValidUTF8(tail, "")
}
