package controls

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"miam/budgets"
	"miam/delegate/wire"
)

// The control names of SPEC §4, as requests spell them in `controle`.
const (
	NameSyntaxe    = "syntaxe"
	NameComplet    = "complet"
	NameSymboles   = "symboles"
	NameDocstrings = "docstrings"
	NameLint       = "lint"
	NameCommande   = "commande"
	NamePerimetre  = "perimetre"
	NameCitations  = "citations"
	NameTraduction = "traduction"
)

// Input is everything a control may look at. It is built once per answer
// (NewInput) and shared, read-only, by every control of the run.
type Input struct {
	// Request is the bout being answered.
	Request wire.Request
	// Raw is the model's answer as it came.
	Raw string
	// Code is the artefact: for code and JSON answers, Raw cleaned of
	// markdown fences and prose (Clean); for text answers, Raw trimmed.
	Code string
	// Cleaned is set when Clean had to remove more than blanks.
	Cleaned bool
	// Lang is the artefact's language, "" when it has no grammar (text,
	// JSON, or a language budgets does not know).
	Lang budgets.Lang
	// Files are the joined files (`fichiers`, `modele`), by path without
	// line range; controls such as symboles and citations read them.
	Files map[string][]byte
	// Manifests are the project's dependency manifests (requirements.txt,
	// pyproject.toml, go.mod, package.json) by path from the project root,
	// as LoadManifests reads them; nil when unknown. symboles judges a
	// third-party import only when its ecosystem's manifest is known.
	Manifests map[string][]byte
	// Dir is the project's root on disk, "" when unknown; the lint control
	// runs eslint there so that the project's configuration applies.
	Dir string
}

// Kind is what sort of artefact an answer is, which decides what the
// controls check.
type Kind int

// The kinds of answer.
const (
	// KindCode is source code: type code or tests, unless format says
	// otherwise, or format code.
	KindCode Kind = iota
	// KindJSON is a JSON document: format json.
	KindJSON
	// KindText is prose: format texte, or types extraction, resume,
	// traduction and texte without a format.
	KindText
)

// KindOf tells the kind of answer req asks for.
func KindOf(req wire.Request) Kind {
	switch req.Format {
	case "json":
		return KindJSON
	case "texte":
		return KindText
	case "code":
		return KindCode
	}
	switch req.TypeOr() {
	case "code", "tests":
		return KindCode
	}
	return KindText
}

// Kind is KindOf(in.Request).
func (in Input) Kind() Kind { return KindOf(in.Request) }

// jsonLang is the fence info string Clean matches for JSON answers; it is no
// budgets grammar.
const jsonLang budgets.Lang = "json"

// NewInput cleans raw for req and gathers what the controls need. The
// language comes from `sortie`, else from `modele`, else from the first
// joined file, else from the info string of the answer's first fence.
func NewInput(req wire.Request, raw string, files map[string][]byte) Input {
	in := Input{Request: req, Raw: raw, Files: files}
	switch in.Kind() {
	case KindJSON:
		in.Code, in.Cleaned = Clean(raw, jsonLang)
	case KindText:
		in.Code = strings.TrimSpace(raw)
	default:
		in.Lang = langOfRequest(req)
		if in.Lang == "" {
			in.Lang = firstFenceLang(raw)
		}
		in.Code, in.Cleaned = Clean(raw, in.Lang)
	}
	return in
}

// langOfRequest is the language of the request's output or examples.
func langOfRequest(req wire.Request) budgets.Lang {
	if l := budgets.LangOf(req.Sortie); l != "" {
		return l
	}
	if l := budgets.LangOf(stripRange(req.Modele)); l != "" {
		return l
	}
	for _, f := range req.Fichiers {
		if l := budgets.LangOf(stripRange(f)); l != "" {
			return l
		}
	}
	return ""
}

// stripRange drops a ":START-END" line range from a path.
func stripRange(p string) string {
	i := strings.LastIndexByte(p, ':')
	if i < 0 || strings.Trim(p[i+1:], "0123456789-") != "" || i == len(p)-1 {
		return p
	}
	return p[:i]
}

// Cost orders controls: Run runs the cheaper ones first.
type Cost int

// The cost tiers.
const (
	// CostPure controls read the answer and the joined files only.
	CostPure Cost = iota
	// CostTool controls run a local tool on the staged output (lint).
	CostTool
	// CostSandbox controls run a command in a sandbox clone (commande).
	CostSandbox
)

// Control is one check of SPEC §4. Check must not modify in, must not
// panic on any answer (Run recovers anyway), and returns a result named
// Name() whose message, when it fails, tells the model what to fix in a
// sentence or two.
type Control interface {
	Name() string
	Cost() Cost
	Check(ctx context.Context, in Input) wire.Control
}

// Pending stands for a control of SPEC §4 not implemented yet: it passes
// with the message "not implemented yet: skipped", so the results list it
// honestly instead of dropping it.
type Pending struct {
	Nom  string
	Tier Cost
}

// Name returns p.Nom.
func (p Pending) Name() string { return p.Nom }

// Cost returns p.Tier.
func (p Pending) Cost() Cost { return p.Tier }

// Check reports the control skipped.
func (p Pending) Check(context.Context, Input) wire.Control {
	return wire.Control{Nom: p.Nom, OK: true, Message: "not implemented yet: skipped"}
}

// Registry maps control names to controls. It is built once and only read
// afterwards.
type Registry struct {
	byName map[string]Control
}

// NewRegistry registers cs under their names; two controls of the same name
// are an error.
func NewRegistry(cs ...Control) (*Registry, error) {
	r := &Registry{byName: make(map[string]Control, len(cs))}
	for _, c := range cs {
		if _, dup := r.byName[c.Name()]; dup {
			return nil, fmt.Errorf("controls: %q registered twice", c.Name())
		}
		r.byName[c.Name()] = c
	}
	return r, nil
}

// Builtin returns the registry of every control of SPEC §4: complet and
// syntaxe implemented, the others Pending.
func Builtin() *Registry {
	r := &Registry{byName: map[string]Control{}}
	for _, c := range []Control{
		Complet{},
		Syntaxe{},
		Pending{Nom: NameSymboles},
		Pending{Nom: NameDocstrings},
		Pending{Nom: NameLint, Tier: CostTool},
		Pending{Nom: NameCommande, Tier: CostSandbox},
		Pending{Nom: NamePerimetre},
		Pending{Nom: NameCitations},
		Pending{Nom: NameTraduction},
	} {
		r.byName[c.Name()] = c
	}
	return r
}

// Full returns the registry of every control of SPEC §4 implemented:
// complet, syntaxe, symboles, docstrings, lint, commande, perimetre,
// citations and traduction. Its commande allows no command: callers with a
// configuration register a Commande built from it instead.
func Full() *Registry {
	r := &Registry{byName: map[string]Control{}}
	for _, c := range []Control{
		Complet{},
		Syntaxe{},
		Symboles{},
		Docstrings{},
		Lint{},
		Commande{},
		Perimetre{},
		Citations{},
		Traduction{},
	} {
		r.byName[c.Name()] = c
	}
	return r
}

// Lookup returns the control registered as name.
func (r *Registry) Lookup(name string) (Control, bool) {
	c, ok := r.byName[name]
	return c, ok
}

// Select returns the controls named, in the order given, once each; an
// unknown name is an error naming it.
func (r *Registry) Select(names []string) ([]Control, error) {
	var out []Control
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		c, ok := r.byName[n]
		if !ok {
			return nil, fmt.Errorf("controls: unknown control %q", n)
		}
		out = append(out, c)
	}
	return out, nil
}

// Defaults returns the controls SPEC §4 applies to a request of type typ
// ("" is code) when it names none: complet always; code (and tests) add
// syntaxe, symboles, docstrings and lint; extraction and resume add
// citations; traduction adds traduction. commande depends on the request,
// not the type: see Selected.
func Defaults(typ string) []string {
	switch typ {
	case "", "code", "tests":
		return []string{NameComplet, NameSyntaxe, NameSymboles, NameDocstrings, NameLint}
	case "extraction", "resume":
		return []string{NameComplet, NameCitations}
	case "traduction":
		return []string{NameComplet, NameTraduction}
	}
	return []string{NameComplet}
}

// Selected returns the control names a request runs: its `controle` when
// given (an empty list disables every control), else Defaults of its type,
// plus commande when it declares a command, plus syntaxe for a JSON answer
// (SPEC §4: syntaxe checks JSON valid and matching its schema).
func Selected(req wire.Request) []string {
	if req.Controle != nil {
		return slices.Clone(*req.Controle)
	}
	names := Defaults(req.TypeOr())
	if KindOf(req) == KindJSON && !slices.Contains(names, NameSyntaxe) {
		names = append(names, NameSyntaxe)
	}
	if req.Commande != "" {
		names = append(names, NameCommande)
	}
	return names
}

// Run runs cs on in, cheapest first (by Cost, then in the order given), and
// reports ok when every result is OK. Within a cost tier every control runs,
// so that the retry prompt carries all the failures the cheap controls
// found at once; once a tier has a failure, the costlier tiers are not run
// (a lint or a sandboxed command on code that does not parse would only
// repeat the news) and appear in no result. A cancelled ctx stops the run
// before the next control, with ok false. A control that panics fails with
// an internal-error message rather than taking the caller down.
func Run(ctx context.Context, cs []Control, in Input) (results []wire.Control, ok bool) {
	order := slices.Clone(cs)
	slices.SortStableFunc(order, func(a, b Control) int { return cmp.Compare(a.Cost(), b.Cost()) })
	ok = true
	for i, c := range order {
		if i > 0 && c.Cost() != order[i-1].Cost() && !ok {
			break
		}
		if ctx.Err() != nil {
			return results, false
		}
		r := checkSafely(ctx, c, in)
		results = append(results, r)
		ok = ok && r.OK
	}
	return results, ok
}

// checkSafely runs one control, turning a panic into a failure.
func checkSafely(ctx context.Context, c Control, in Input) (r wire.Control) {
	defer func() {
		if p := recover(); p != nil {
			r = wire.Control{Nom: c.Name(), OK: false, Message: fmt.Sprintf("internal error in the %s control: %v", c.Name(), p)}
		}
	}()
	r = c.Check(ctx, in)
	r.Nom = c.Name()
	return r
}
