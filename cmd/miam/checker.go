package main

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"miam/controls"
	"miam/delegate"
	"miam/delegate/wire"
	"miam/hooks/config"
	"miam/sandbox"
)

// projectChecker runs the full controls with the commande control built
// from the project's own configuration: sandbox.commandes comes from the
// project's .miam/config.yaml (merged over the user's), allow_unsandboxed
// from the user's file only. The daemon serves every project of the user,
// so this is read per check.
type projectChecker struct {
	user   config.Config
	runner *sandbox.Runner // shared: the machine is probed once
	log    *slog.Logger
}

func newProjectChecker(user config.Config, log *slog.Logger) *projectChecker {
	return &projectChecker{user: user, log: log,
		runner: &sandbox.Runner{Warn: func(msg string) { log.Warn("sandbox", "warning", msg) }}}
}

// Check implements delegate.Checker.
func (p *projectChecker) Check(ctx context.Context, project string, req wire.Request, raw string) (string, []wire.Control, bool) {
	cfg := p.user
	name := filepath.Join(project, ".miam", "config.yaml")
	data, err := os.ReadFile(name)
	switch {
	case err == nil:
		if cfg, err = config.Decode(p.user, name, data); err != nil {
			return raw, []wire.Control{{Nom: "commande", Message: "project config unusable: " + err.Error()}}, false
		}
	case !errors.Is(err, fs.ErrNotExist):
		p.log.Warn("project config", "file", name, "err", err)
	}
	reg := controls.WithCommande(controls.Full(), controls.Commande{Runner: p.runner, Commandes: cfg.Sandbox.Commandes,
		AllowUnsandboxed: p.user.Sandbox.AllowUnsandboxed})
	return controls.Pipeline{Registry: reg, Load: delegate.LoadFiles}.Check(ctx, project, req, raw)
}
