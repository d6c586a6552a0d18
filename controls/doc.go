// Package controls judges a delegated answer by machine (SPEC §4): it cleans
// the model's raw answer into the artefact (Clean), then runs the request's
// controls on it, cheapest first, each a pure function of (answer, context)
// to a wire.Control whose message is short and fit to send back to the model
// as the retry prompt.
//
// A Control plugs into a Registry built by NewRegistry, Builtin or Full;
// nothing is registered at package level. Full implements every control of
// §4 but commande (which needs the sandbox and reports itself skipped,
// "not implemented yet: skipped", OK, so that the results say honestly what
// was not checked); the daemon uses it. Builtin is the minimal set (complet
// and syntaxe, the rest Pending). Pipeline ties cleaning, selection and Run
// together behind the shape of delegate.Checker.
package controls
