package budgets

import "time"

// PolicyState is what the temporal policies of .miam/policies.yaml keep
// for one session (SPEC §9): counters, timestamps and fingerprints, never a
// tool's content. It rides in State.Policies; nil is a session no policy
// has seen yet.
type PolicyState struct {
	// StartedAt is when a policy first saw the session: max_duration_min
	// counts from it and nothing resets it but `miam policies reset-session`.
	StartedAt time.Time `json:"started_at,omitzero"`
	// Rules holds each rule's counters, by rule id.
	Rules map[string]RuleCounters `json:"rules,omitempty"`
	// Pending are the approvals asked in PreToolUse, by tool_use_id, until
	// PostToolUse says the call ran.
	Pending map[string]PendingApproval `json:"pending,omitempty"`
	// Cost is what the session's transcript has cost so far, read
	// incrementally (max_cost_usd).
	Cost TranscriptCost `json:"cost,omitzero"`
}

// RuleCounters are one rule's counters in one session.
type RuleCounters struct {
	ToolCalls int `json:"tool_calls,omitempty"`
	Writes    int `json:"writes,omitempty"`
	// Approved are the fingerprints of calls the user let run, oldest
	// first, at most 64.
	Approved []string `json:"approved,omitempty"`
	// CooldownCount is the matching calls since the last cooldown, and
	// CooldownUntil the end of the running one.
	CooldownCount int       `json:"cooldown_count,omitempty"`
	CooldownUntil time.Time `json:"cooldown_until,omitzero"`
}

// PendingApproval is an asked call: its fingerprint and the rules that
// asked.
type PendingApproval struct {
	Fingerprint string   `json:"fingerprint"`
	Rules       []string `json:"rules"`
}

// TranscriptCost is the estimated cost of the transcript read so far: up
// to Offset bytes, the last message (whose usage may be repeated on the
// next lines) counted separately so it is never counted twice.
type TranscriptCost struct {
	Path    string  `json:"path,omitempty"`
	Offset  int64   `json:"offset,omitempty"`
	USD     float64 `json:"usd,omitempty"` // every message but the last
	LastID  string  `json:"last_id,omitempty"`
	LastUSD float64 `json:"last_usd,omitempty"`
}

// Total is the transcript's whole cost so far.
func (c TranscriptCost) Total() float64 { return c.USD + c.LastUSD }
