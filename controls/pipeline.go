package controls

import (
	"context"

	"miam/delegate/wire"
)

// Loader reads the files a request joins (`fichiers`, `modele`) from the
// project, by path without line range. It is how the pipeline reaches the
// disk: the controls themselves never do.
type Loader func(ctx context.Context, project string, paths []string) (map[string][]byte, error)

// Pipeline judges an executor's raw answer: it builds the Input (NewInput),
// selects the request's controls (Selected) from Registry and runs them
// (Run). Its Check has the shape of delegate.Checker.
type Pipeline struct {
	// Registry holds the controls; nil means Builtin().
	Registry *Registry
	// Load reads the joined files; nil means none are read.
	Load Loader
}

// Check returns the artefact (the cleaned answer), the controls' results
// and whether they all passed. A request whose `controle` is [] runs no
// control and passes. A control name the registry does not know, or joined
// files that cannot be read, fail the answer with a result saying so
// (named "controle" or "fichiers"): such requests should have been refused
// by delegate.Validate, and passing them unchecked would be a silent pass.
func (p Pipeline) Check(ctx context.Context, project string, req wire.Request, raw string) (artefact string, results []wire.Control, ok bool) {
	reg := p.Registry
	if reg == nil {
		reg = Builtin()
	}
	cs, err := reg.Select(Selected(req))
	if err != nil {
		return raw, []wire.Control{{Nom: "controle", OK: false, Message: err.Error()}}, false
	}
	var files map[string][]byte
	if p.Load != nil {
		if paths := joinedPaths(req); len(paths) > 0 {
			files, err = p.Load(ctx, project, paths)
			if err != nil {
				return raw, []wire.Control{{Nom: "fichiers", OK: false, Message: "cannot read the joined files: " + err.Error()}}, false
			}
		}
	}
	in := NewInput(req, raw, files)
	in.Dir = project
	if p.Load != nil {
		// Declared dependencies let symboles accept third-party imports.
		in.Manifests = LoadManifests(ctx, p.Load, project, req.Sortie)
	}
	results, ok = Run(ctx, cs, in)
	return in.Code, results, ok
}

// joinedPaths lists the request's joined files once each, without ranges.
func joinedPaths(req wire.Request) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range append(append([]string(nil), req.Fichiers...), req.Modele) {
		p = stripRange(p)
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
