package wire

import (
	"errors"
	"time"
)

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

// ErrUnreachable is wrapped by every error of a delegation tool whose
// daemon does not answer (not started, crashed, refused). Its text reaches
// the hook in the PostToolUseFailure of the tool call, where it opens the
// delegation rules for the turn (SPEC §8 fallback); a refusal of the
// request itself (a bad field) does not carry it.
var ErrUnreachable = errors.New(UnreachableText)

// UnreachableText is ErrUnreachable's text, which the hook looks for.
const UnreachableText = "no executor answers: the miam daemon is unreachable"
