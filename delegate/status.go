package delegate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"miam/delegate/wire"
)

// statusEvery is how often Run rewrites status.json; the hook reads it as
// stale after two minutes.
const statusEvery = 30 * time.Second

// ProjectLister is implemented by an engine that serves only some projects
// (the api engine): its availability is judged for the first of them, and
// the hook checks its own project against the list.
type ProjectLister interface {
	AllowedProjects() []string
}

// Status asks every engine whether it can take a request now.
func (d *Daemon) Status(ctx context.Context) wire.Status {
	st := wire.Status{Updated: time.Now().UTC().Truncate(time.Second), Engines: []wire.EngineStatus{}}
	for _, e := range d.cfg.Engines {
		var projects []string
		project := ""
		if pl, ok := e.(ProjectLister); ok {
			projects = append([]string{}, pl.AllowedProjects()...)
			if len(projects) > 0 {
				project = projects[0]
			}
		}
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		a := e.Available(actx, project)
		cancel()
		st.Engines = append(st.Engines, wire.EngineStatus{Name: e.Name(), Ready: a.Ready, Model: a.Model,
			Reason: a.Reason, Projects: projects})
	}
	return st
}

// WriteStatus writes status.json now, atomically (a temporary file renamed).
func (d *Daemon) WriteStatus(ctx context.Context) error {
	data, err := json.MarshalIndent(d.Status(ctx), "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(d.cfg.StateDir, wire.StatusFile+".*")
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("status: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	return os.Rename(tmp.Name(), filepath.Join(d.cfg.StateDir, wire.StatusFile))
}

// keepStatus rewrites status.json every statusEvery until ctx ends.
func (d *Daemon) keepStatus(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(statusEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := d.WriteStatus(ctx); err != nil {
				d.log.Error("status", "err", err)
			}
		}
	}
}
