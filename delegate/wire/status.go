package wire

import "time"

// StatusFile is the name of the executors' status file in the daemon's
// state directory ($XDG_STATE_HOME/miam), which the hook reads to say which
// executor a delegation would reach (SPEC §8 rule 7).
const StatusFile = "status.json"

// Status is what the daemon last saw of its engines.
type Status struct {
	Updated time.Time      `json:"updated"`
	Engines []EngineStatus `json:"engines"`
}

// EngineStatus is one engine's availability. Projects is the api engine's
// allow-list (nil for the others): the hook checks its own project there.
type EngineStatus struct {
	Name     string   `json:"name"`
	Ready    bool     `json:"ready"`
	Model    string   `json:"model,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Projects []string `json:"projects"`
}
