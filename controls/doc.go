// Package controls judges a delegated answer by machine (syntax, completeness,
// symbols, docstrings, lint, scope, citations, translation, command), each
// control a pure function of (answer, context). Built in its own issue.
package controls
