// Package wire holds the agent-facing request and answer types of the
// deleguer tool, shared by the daemon and the hook (stdlib imports only).
package wire
