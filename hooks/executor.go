package hooks

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"miam/delegate/wire"
)

// statusMaxAge is how old the daemon's status.json may be before the hook
// calls the executor unknown; the daemon rewrites it every 30 s.
const statusMaxAge = 2 * time.Minute

// executorLine is rule 7: which executor a delegation would reach, from the
// daemon's status file, loaded only for a delegation deny.
func executorLine(env Env) string {
	var st wire.Status
	ok := false
	if env.Executors != nil {
		st, ok = env.Executors()
	}
	if !ok {
		return "Executor: unknown (the daemon's status is missing; deleguer will tell)."
	}
	if env.Now.IsZero() {
		return "Executor: unknown (no clock to date the daemon's status; deleguer will tell)."
	}
	if age := env.Now.Sub(st.Updated); age > statusMaxAge {
		return fmt.Sprintf("Executor: unknown (the daemon's status is %d min old; deleguer will tell).", int(age.Minutes()))
	}
	var why []string
	local, api := find(st, "local"), find(st, "api")
	switch {
	case local != nil && local.Ready:
		return fmt.Sprintf("Executor: local (%s) is ready.", local.Model)
	case local == nil:
		why = append(why, "no local engine")
	case strings.Contains(local.Reason, "benchmark"):
		why = append(why, "a benchmark holds the GPU")
	default:
		why = append(why, "no local model ready")
	}
	switch {
	case api == nil:
		why = append(why, "no API engine")
	case !slices.Contains(api.Projects, env.Project):
		why = append(why, "API not allowed for this project")
	case api.Ready:
		return fmt.Sprintf("Executor: api (OpenRouter, model %s), this project is allowed.", api.Model)
	default:
		why = append(why, "API unavailable: "+api.Reason)
	}
	return "Executor: a Haiku subagent (" + strings.Join(why, ", ") +
		"): deleguer will hand the bout back as a ready Agent call."
}

func find(st wire.Status, name string) *wire.EngineStatus {
	for i := range st.Engines {
		if st.Engines[i].Name == name {
			return &st.Engines[i]
		}
	}
	return nil
}
