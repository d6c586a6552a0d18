// Package budgets counts what the main agent writes — code, comment, blank
// and docstring lines, by tree-sitter grammar — and keeps each session's
// counters in a state file that parallel hook processes update safely.
package budgets
