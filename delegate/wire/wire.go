// Package wire holds the agent-facing request and answer types of the
// deleguer tool (SPEC §2), shared by the daemon and the hook. It imports the
// standard library only; the validation tags are read by the daemon
// (delegate.Validate), so the hook binary stays free of the validator.
package wire

import "encoding/json"

// Request is one deleguer call, or one bout of a lot.
type Request struct {
	Consigne string          `json:"consigne" validate:"required"`
	Langue   string          `json:"langue,omitempty"`
	Type     string          `json:"type,omitempty" validate:"omitempty,oneof=code tests extraction resume traduction texte"`
	Fichiers []string        `json:"fichiers,omitempty" validate:"dive,required"`
	Modele   string          `json:"modele,omitempty"`
	Sortie   string          `json:"sortie,omitempty"`
	Format   string          `json:"format,omitempty" validate:"omitempty,oneof=code json texte"`
	Schema   json.RawMessage `json:"schema,omitempty"`
	Retour   string          `json:"retour,omitempty" validate:"omitempty,oneof=apercu complet"`
	Moteur   string          `json:"moteur,omitempty" validate:"omitempty,oneof=auto local api haiku"`
	Controle *[]string       `json:"controle,omitempty" validate:"omitempty,dive,oneof=syntaxe complet symboles docstrings lint commande perimetre citations traduction"`
	Attendus []string        `json:"attendus,omitempty" validate:"dive,required"`
	NTests   int             `json:"n_tests,omitempty" validate:"min=0"`
	Commande string          `json:"commande,omitempty"`
	// RougeDabord asks that commande fail without the answer first, so a
	// test written by the same model proves something.
	RougeDabord bool      `json:"rouge_dabord,omitempty"`
	Perimetre   []string  `json:"perimetre,omitempty" validate:"dive,required"`
	Essais      int       `json:"essais,omitempty" validate:"min=0,max=5"`
	Lot         []Request `json:"lot,omitempty" validate:"dive"`
}

// TypeOr returns the request's type, code by default.
func (r Request) TypeOr() string {
	if r.Type == "" {
		return "code"
	}
	return r.Type
}

// States of a request. The first two are transient; the others are terminal
// (`fin`).
const (
	EnFile        = "en_file"
	EnCours       = "en_cours"
	Valide        = "valide"
	Termine       = "termine"
	EchecControle = "echec_controle"
	BesoinClaude  = "besoin_claude"
	Annule        = "annule"
	Perdue        = "perdue"
)

// Terminal reports whether a state ends the request.
func Terminal(etat string) bool {
	switch etat {
	case Valide, Termine, EchecControle, BesoinClaude, Annule, Perdue:
		return true
	}
	return false
}

// Verdicts of the controls.
const (
	VerdictValide        = "valide"
	VerdictEchecControle = "echec_controle"
	VerdictNonControle   = "non_controle"
)

// Control is one control's result, its message short enough to send back
// to the model as the retry prompt.
type Control struct {
	Nom     string `json:"nom"`
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
}

// Diff summarises what a valid output changed.
type Diff struct {
	Files   []string `json:"files"`
	Added   int      `json:"added"`
	Removed int      `json:"removed"`
}

// SubagentCall is a ready Claude Code Agent tool call, handed back when no
// paid executor may run the bout: Claude runs it with its cheapest model.
type SubagentCall struct {
	Tool  string         `json:"tool"` // "Agent"
	Input map[string]any `json:"input"`
}

// Answer is the same shape from deleguer, suivre and /attendre. OK is true
// (valide or termine), false (any other end) or null while pending.
type Answer struct {
	OK          *bool         `json:"ok"`
	DemandeID   string        `json:"demande_id,omitempty"`
	Etat        string        `json:"etat,omitempty"`
	Fin         string        `json:"fin,omitempty"` // the terminal state, on /attendre and once ended
	Verdict     string        `json:"verdict,omitempty"`
	Controles   []Control     `json:"controles,omitempty"`
	Essais      int           `json:"essais,omitempty"`
	MoteurFinal string        `json:"moteur_final,omitempty"`
	ModeleFinal string        `json:"modele_final,omitempty"`
	Sortie      string        `json:"sortie,omitempty"`
	Diff        *Diff         `json:"diff,omitempty"`
	Corps       string        `json:"corps,omitempty"` // the body, when retour=complet or no sortie
	Erreur      string        `json:"erreur,omitempty"`
	Raison      string        `json:"raison,omitempty"` // machine reason of besoin_claude/perdue, e.g. aucun_executeur
	Message     string        `json:"message,omitempty"`
	Reprise     string        `json:"reprise,omitempty"` // the exact wait command
	Appel       *SubagentCall `json:"appel,omitempty"`
	Lot         []Answer      `json:"lot,omitempty"`
}
