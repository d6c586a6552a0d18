// Package plans reads and validates the plan of the current task
// (.claude/miam-plan.json, SPEC §7) and computes its bouts' statuses from
// the delegations' answers. It is a leaf: it imports no package of miam.
package plans

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// File is the plan's path, relative to the project.
const File = ".claude/miam-plan.json"

// MaxLines is the most lines a plan file may have.
const MaxLines = 80

// Moteur values: Claude writes the bout by hand; any other engine
// (auto by default) delegates it.
const (
	MoteurAuto   = "auto"
	MoteurClaude = "claude"
)

// Motifs are the reasons a bout may be kept by Claude: the exception
// reasons of SPEC §6.
var Motifs = []string{"concurrence", "securite", "debogage-multi-fichiers", "secret"}

// ErrInvalid is wrapped by every error Parse returns.
var ErrInvalid = errors.New("invalid plan")

// Plan is one task's plan.
type Plan struct {
	Tache string `json:"tache"`
	Bouts []Bout `json:"bouts"`
}

// Bout is one piece of the task: delegated (moteur auto or an engine) or
// written by Claude (moteur claude, with a motif).
type Bout struct {
	ID      int    `json:"id"`
	Quoi    string `json:"quoi"`
	Fichier string `json:"fichier,omitempty"`
	Moteur  string `json:"moteur,omitempty"` // empty means auto
	Motif   string `json:"motif,omitempty"`
	Modele  string `json:"modele,omitempty"`
	Contrat string `json:"contrat,omitempty"`
	// Controle is the command that checks a delegated bout.
	Controle string `json:"controle,omitempty"`
}

// Delegable reports whether the bout is meant to be delegated.
func (b Bout) Delegable() bool { return b.Moteur != MoteurClaude }

// Status is where a bout stands.
type Status string

// The statuses of SPEC §7.
const (
	AFaire  Status = "a_faire" // not started
	Delegue Status = "delegue" // a delegation runs (ok: null)
	Valide  Status = "valide"  // a delegation succeeded
	Echec   Status = "echec"   // a delegation failed
	Claude  Status = "claude"  // Claude writes it by hand
)

// Initial is a bout's status before any delegation.
func (b Bout) Initial() Status {
	if b.Delegable() {
		return AFaire
	}
	return Claude
}

// Error is a plan's validation error: the file and the field at fault.
type Error struct {
	File  string // as given to Parse
	Field string // e.g. bouts[1].motif; empty for the file as a whole
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": " + e.Field + ": " + e.Msg
}

// Unwrap makes every Error an ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }

// Parse decodes and validates a plan read from the file name. The error
// names the file and the first field at fault, and says what to do.
func Parse(name string, data []byte) (Plan, error) {
	fail := func(field, format string, a ...any) (Plan, error) {
		return Plan{}, &Error{File: name, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	if n := bytes.Count(bytes.TrimRight(data, "\n"), []byte("\n")) + 1; n > MaxLines {
		return fail("", "%d lines, at most %d: split the task or shorten the bouts", n, MaxLines)
	}
	var p Plan
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fail("", "not a plan: %v", err)
	}
	if dec.More() {
		return fail("", "not a plan: data after the JSON object")
	}
	// Checked by hand rather than with validator/v10: its package init
	// alone costs about 0.45 ms, paid by every hook process (perf, issue 2).
	switch {
	case strings.TrimSpace(p.Tache) == "":
		return fail("tache", "required: name the task")
	case len(p.Bouts) == 0:
		return fail("bouts", "needs at least 1 element")
	}
	seen := map[int]bool{}
	for i, b := range p.Bouts {
		f := fmt.Sprintf("bouts[%d].", i)
		switch {
		case b.ID < 0:
			return fail(f+"id", "must be 0 or more")
		case seen[b.ID]:
			return fail(f+"id", "%d is used twice: give each bout its own id", b.ID)
		case strings.TrimSpace(b.Quoi) == "":
			return fail(f+"quoi", "required: say what the bout does")
		case b.Motif != "" && !slices.Contains(Motifs, b.Motif):
			return fail(f+"motif", "%s is not one of %s", b.Motif, strings.Join(Motifs, ", "))
		case b.Moteur == MoteurClaude && b.Motif == "":
			return fail(f+"motif", "required when moteur is claude (one of %s)", strings.Join(Motifs, ", "))
		case b.Delegable() && strings.TrimSpace(b.Fichier) == "":
			return fail(f+"fichier", "required for a delegated bout: name the file it writes")
		case b.Delegable() && strings.TrimSpace(b.Controle) == "":
			return fail(f+"controle", "required for a delegated bout: the command that checks it")
		}
		seen[b.ID] = true
	}
	return p, nil
}

// Bout returns the delegated bout that writes the file sortie
// (project-relative), and whether there is one.
func (p Plan) Bout(sortie string) (Bout, bool) {
	if sortie == "" {
		return Bout{}, false
	}
	want := path.Clean(sortie)
	i := slices.IndexFunc(p.Bouts, func(b Bout) bool {
		return b.Delegable() && b.Fichier != "" && path.Clean(b.Fichier) == want
	})
	if i < 0 {
		return Bout{}, false
	}
	return p.Bouts[i], true
}

// AfterAnswer is the status of the bout writing sortie once a deleguer
// answer with this ok came back: ok true → valide, false → echec, nil (still
// running) → delegue. found is false when no delegated bout writes sortie.
func (p Plan) AfterAnswer(sortie string, ok *bool) (id int, s Status, found bool) {
	b, found := p.Bout(sortie)
	if !found {
		return 0, "", false
	}
	switch {
	case ok == nil:
		return b.ID, Delegue, true
	case *ok:
		return b.ID, Valide, true
	}
	return b.ID, Echec, true
}
