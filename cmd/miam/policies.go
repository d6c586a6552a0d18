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
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"miam/budgets"
	"miam/hooks/policies"
)

// runPolicies is `miam policies status|reset-session`: the temporal
// policies' counters of a session (SPEC §9). Both are exempt from every
// budget, so a session a budget stopped can always run them.
func runPolicies(_ context.Context, args []string, stdout, stderr io.Writer) error {
	usage := "usage: miam policies status [--session-id ID] [--json] | reset-session [--session-id ID] [--json]"
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, usage)
		return errors.New("name a subcommand: status or reset-session")
	}
	verb := args[0]
	fl := flag.NewFlagSet("policies "+verb, flag.ContinueOnError)
	fl.SetOutput(stderr)
	sid := fl.String("session-id", "", "the session (default: the one whose state changed last)")
	asJSON := fl.Bool("json", false, "print JSON")
	dir := fl.String("dir", "", "project directory (default $CLAUDE_PROJECT_DIR, else the nearest directory holding .miam/)")
	if err := fl.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	project, err := projectDir(*dir)
	if err != nil {
		return err
	}
	store := budgets.Store{Dir: filepath.Join(project, ".miam", "state")}
	id := *sid
	if id == "" {
		if id, err = latestSession(store.Dir); err != nil {
			return err
		}
	}
	switch verb {
	case "status":
		return policiesStatus(project, store, id, *asJSON, time.Now(), stdout)
	case "reset-session":
		return policiesReset(project, store, id, *asJSON, stdout)
	}
	fmt.Fprintln(stderr, usage)
	return fmt.Errorf("unknown subcommand %q: status or reset-session", verb)
}

// latestSession is the session whose state file changed last.
func latestSession(dir string) (string, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "session-*.json"))
	type found struct {
		id  string
		mod time.Time
	}
	var all []found
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		data, err := budgets.ReadStateFile(p)
		if err != nil {
			continue
		}
		var st struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal(data, &st) != nil || st.SessionID == "" {
			continue
		}
		all = append(all, found{st.SessionID, fi.ModTime()})
	}
	if len(all) == 0 {
		return "", fmt.Errorf("no session state in %s: name one with --session-id", dir)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.After(all[j].mod) })
	return all[0].id, nil
}

// statusReport is `miam policies status --json`.
type statusReport struct {
	SessionID string             `json:"session_id"`
	StateFile string             `json:"state_file"`
	Policies  string             `json:"policies_file"`
	StartedAt time.Time          `json:"started_at,omitzero"`
	Budgets   []policies.Budget  `json:"budgets"`
	Approved  map[string]int     `json:"approved,omitempty"` // fingerprints by rule
	Warnings  []string           `json:"warnings,omitempty"`
	Rules     []statusReportRule `json:"rules"`
}

type statusReportRule struct {
	ID      string `json:"id"`
	Pattern string `json:"tool_pattern"`
	Verdict string `json:"verdict_on_match"`
}

func policiesStatus(project string, store budgets.Store, id string, asJSON bool, now time.Time, w io.Writer) error {
	set, name, err := loadProjectPolicies(project)
	if err != nil {
		return err
	}
	st := store.Load(id)
	ps := st.Policies
	if ps == nil {
		ps = &budgets.PolicyState{}
	}
	rep := statusReport{SessionID: id, StateFile: rel(project, store.Path(id)), Policies: name, StartedAt: ps.StartedAt,
		Budgets: policies.Status(&set, ps, now, ps.Cost.Total())}
	for _, r := range set.Rules {
		rep.Rules = append(rep.Rules, statusReportRule{ID: r.ID, Pattern: r.Pattern.String(), Verdict: string(r.Verdict)})
		if n := len(ps.Rules[r.ID].Approved); n > 0 {
			if rep.Approved == nil {
				rep.Approved = map[string]int{}
			}
			rep.Approved[r.ID] = n
		}
	}
	if rep.Budgets == nil {
		rep.Budgets = []policies.Budget{}
	}
	for _, b := range rep.Budgets {
		if b.Low {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("WARNING: rule %s: %s has %s of %s left (under 10 %%)",
				b.Rule, b.What, amount(b.Left), amount(b.Limit)))
		}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(w, "session %s (%s), rules from %s\n", id, rep.StateFile, name)
	if !ps.StartedAt.IsZero() {
		fmt.Fprintf(w, "started %s (%s ago)\n", ps.StartedAt.UTC().Format(time.RFC3339), now.Sub(ps.StartedAt).Round(time.Second))
	}
	if len(set.Rules) == 0 {
		fmt.Fprintln(w, "no rule: nothing is counted")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tPATTERN\tBUDGET\tUSED\tLIMIT\tLEFT\t")
	for _, b := range rep.Budgets {
		left := amount(b.Left)
		if !b.Until.IsZero() {
			left = "cooling down until " + b.Until.UTC().Format("15:04") + " UTC"
		}
		mark := ""
		if b.Low {
			mark = "WARNING: under 10 % left"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.Rule, b.Pattern, b.What, amount(b.Used), amount(b.Limit), left, mark)
	}
	tw.Flush()
	for rule, n := range rep.Approved {
		fmt.Fprintf(w, "rule %s: %d approved call(s)\n", rule, n)
	}
	for _, warn := range rep.Warnings {
		fmt.Fprintln(w, warn)
	}
	if len(rep.Warnings) > 0 {
		fmt.Fprintf(w, "`miam policies reset-session --session-id %s` clears this session's counters; per_session caps are in %s.\n", id, name)
	}
	return nil
}

func policiesReset(project string, store budgets.Store, id string, asJSON bool, w io.Writer) error {
	had := false
	err := store.Update(id, func(st *budgets.State) error {
		had = st.Policies != nil
		st.Policies = nil
		return nil
	})
	if err != nil {
		return err
	}
	file := rel(project, store.Path(id))
	if asJSON {
		return json.NewEncoder(w).Encode(map[string]any{"session_id": id, "state_file": file, "reset": had})
	}
	if !had {
		fmt.Fprintf(w, "session %s had no policy counters (%s): nothing to reset\n", id, file)
		return nil
	}
	fmt.Fprintf(w, "reset the policy counters, approvals and start time of session %s in %s; the next call starts afresh\n", id, file)
	return nil
}

// loadProjectPolicies reads .miam/policies.yaml; a missing file is an empty
// set.
func loadProjectPolicies(project string) (policies.Set, string, error) {
	name := filepath.FromSlash(policies.File)
	data, err := os.ReadFile(filepath.Join(project, name))
	if errors.Is(err, fs.ErrNotExist) {
		return policies.Set{Name: name}, name + " (missing)", nil
	}
	if err != nil {
		return policies.Set{}, "", err
	}
	set, err := policies.Decode(name, data)
	return set, name, err
}

func amount(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%.2f", f)
}
