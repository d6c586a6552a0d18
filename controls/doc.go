// Package controls judges a delegated answer by machine (SPEC §4): it cleans
// the model's raw answer into the artefact (Clean), then runs the request's
// controls on it, cheapest first, each a pure function of (answer, context)
// to a wire.Control whose message is short and fit to send back to the model
// as the retry prompt.
//
// A Control plugs into a Registry built by NewRegistry or Builtin; nothing is
// registered at package level. Builtin implements complet and syntaxe and
// registers every other control of §4 as Pending, which reports itself
// skipped ("not implemented yet: skipped", OK) so that the results say
// honestly what was not checked. Pipeline ties cleaning, selection and Run
// together behind the shape of delegate.Checker.
package controls
