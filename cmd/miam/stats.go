package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"miam/delegate/store"
	"miam/hooks/trace"
)

// statsReport is `miam stats`: the daemon's engines, from its SQLite
// state, and governance, from the project's trace ledger. Each part is
// read on its own: a missing or broken one leaves the other printed.
type statsReport struct {
	Engines []store.ModelStats `json:"engines"`
	// EnginesNote says why Engines is empty: no daemon state yet, or the
	// error reading it.
	EnginesNote string          `json:"engines_note,omitempty"`
	Governance  governanceStats `json:"governance"`
}

// governanceStats is the ledger's tally (block rate, top rules) and where
// it was read.
type governanceStats struct {
	Ledger string `json:"ledger"`
	// Present is false when the project has no ledger yet.
	Present bool `json:"present"`
	// Error is why the ledger could not be read, or read to its end.
	Error string `json:"error,omitempty"`
	trace.Tally
}

// topRules is how many rules the text report lists; --json lists them all.
const topRules = 5

func runStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("stats", flag.ContinueOnError)
	fl.SetOutput(stderr)
	asJSON := fl.Bool("json", false, "print JSON")
	dir := fl.String("dir", "", "project whose trace ledger to read (default $CLAUDE_PROJECT_DIR, else the nearest directory holding .miam/)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	project, err := projectDir(*dir)
	if err != nil {
		return err
	}
	var rep statsReport
	var failed []error
	engines, note, err := engineStats(ctx)
	rep.Engines, rep.EnginesNote = engines, note
	if err != nil {
		rep.EnginesNote = "daemon state unreadable: " + err.Error()
		failed = append(failed, err)
	}
	rep.Governance = ledgerStats(filepath.Join(project, ".miam", trace.FileName))
	if rep.Governance.Error != "" {
		failed = append(failed, errors.New(rep.Governance.Error))
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(rep); err != nil {
			return err
		}
	} else if err := printStats(stdout, rep); err != nil {
		return err
	}
	// Whatever could be read is printed; what could not fails the command.
	return errors.Join(failed...)
}

// engineStats reads the daemon's per-model stats. A missing state is not an
// error: there is nothing to tell yet, and stats does not create it.
func engineStats(ctx context.Context) ([]store.ModelStats, string, error) {
	env, err := readDaemonEnv()
	if err != nil {
		return []store.ModelStats{}, "", err
	}
	if _, err := os.Stat(filepath.Join(env.stateDir, store.FileName)); errors.Is(err, fs.ErrNotExist) {
		return []store.ModelStats{}, "no daemon state yet (" + env.stateDir + "): no delegation recorded", nil
	}
	st, err := store.Open(env.stateDir, nil)
	if err != nil {
		return []store.ModelStats{}, "", err
	}
	defer st.Close()
	stats, err := st.Stats(ctx)
	if stats == nil {
		stats = []store.ModelStats{}
	}
	return stats, "", err
}

// ledgerStats tallies the ledger at path. Corrupt lines are skipped and
// counted; only a ledger that cannot be opened or read is an error.
func ledgerStats(path string) governanceStats {
	g := governanceStats{Ledger: path, Tally: trace.Tally{Rules: []trace.RuleCount{}}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return g
	}
	if err != nil {
		g.Error = fmt.Sprintf("trace ledger unreadable: %v", err)
		return g
	}
	defer f.Close()
	g.Present = true
	g.Tally, err = trace.Read(f)
	if err != nil {
		g.Error = fmt.Sprintf("trace ledger %s: read: %v", path, err)
	}
	return g
}

func printStats(w io.Writer, rep statsReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if rep.EnginesNote != "" {
		fmt.Fprintf(tw, "engines: %s\n", rep.EnginesNote)
	} else {
		fmt.Fprintln(tw, "ENGINE\tMODEL\tREQUESTS\tTRIES\tFIRST TRY\tREPAIRS\tCOST USD")
		for _, s := range rep.Engines {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%.4f\n", s.Engine, s.Model, s.Requests, s.Tries, s.FirstTry, s.Repairs, s.CostUSD)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	g := rep.Governance
	fmt.Fprintln(w)
	switch {
	case g.Error != "" && !g.Present:
		fmt.Fprintf(w, "governance: %s\n", g.Error)
		return nil
	case !g.Present:
		fmt.Fprintf(w, "governance: no trace ledger yet (%s): no call evaluated\n", g.Ledger)
		return nil
	}
	span := ""
	if !g.First.IsZero() {
		span = fmt.Sprintf(", %s → %s", g.First.UTC().Format(time.DateTime), g.Last.UTC().Format(time.DateTime+" MST"))
	}
	fmt.Fprintf(w, "governance (%s%s)\n", g.Ledger, span)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  evaluated calls\t%d\n", g.Evaluated)
	fmt.Fprintf(tw, "  denied\t%d\tblock rate %.1f %%\n", g.Denied, 100*g.BlockRate)
	fmt.Fprintf(tw, "  asked\t%d\n", g.Asked)
	fmt.Fprintf(tw, "  stops\t%d\tblocked %d\n", g.Stops, g.StopsBlocked)
	if g.Unchecked > 0 {
		fmt.Fprintf(tw, "  unchecked\t%d\tlet through by a failing hook\n", g.Unchecked)
	}
	if g.Corrupt > 0 {
		fmt.Fprintf(tw, "  corrupt lines\t%d\tskipped\n", g.Corrupt)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if g.Error != "" {
		fmt.Fprintf(w, "  (stopped early: %s)\n", g.Error)
	}
	if len(g.Rules) == 0 {
		return nil
	}
	fmt.Fprintf(w, "top rules by denies\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  RULE\tDENIES\tASKS\tMEASURED")
	for i, r := range g.Rules {
		if i == topRules {
			fmt.Fprintf(tw, "  … %d more (--json lists them all)\n", len(g.Rules)-topRules)
			break
		}
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\n", r.Rule, r.Denies, r.Asks, r.Measured)
	}
	return tw.Flush()
}
