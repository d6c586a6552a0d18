package policies

import (
	"time"

	"miam/budgets"
)

// Budget is one cap of one rule and how much of it the session used.
type Budget struct {
	Rule    string  `json:"rule"`
	Pattern string  `json:"tool_pattern"`
	What    string  `json:"budget"` // max_tool_calls, max_writes, max_cost_usd, max_duration_min, cooldown_after
	Limit   float64 `json:"limit"`
	Used    float64 `json:"used"`
	Left    float64 `json:"left"`
	// Low is set when less than 10 % of the cap is left (or none).
	Low bool `json:"low,omitempty"`
	// Until is when a running cooldown ends.
	Until time.Time `json:"until,omitzero"`
}

// Status lists every cap of the set with the session's use of it; costUSD
// is the session's cost so far, negative when unknown.
func Status(set *Set, st *budgets.PolicyState, now time.Time, costUSD float64) []Budget {
	if st == nil {
		st = &budgets.PolicyState{}
	}
	var out []Budget
	for _, r := range set.Rules {
		n := st.Rules[r.ID]
		add := func(what string, limit, used float64) {
			b := Budget{Rule: r.ID, Pattern: r.Pattern.String(), What: what, Limit: limit, Used: used, Left: max(0, limit-used)}
			b.Low = b.Left < limit*0.1 || b.Left == 0
			out = append(out, b)
		}
		if ps := r.PerSession; ps != nil {
			if ps.MaxToolCalls > 0 {
				add("max_tool_calls", float64(ps.MaxToolCalls), float64(n.ToolCalls))
			}
			if ps.MaxWrites > 0 {
				add("max_writes", float64(ps.MaxWrites), float64(n.Writes))
			}
			if ps.MaxCostUSD > 0 && costUSD >= 0 {
				add("max_cost_usd", ps.MaxCostUSD, costUSD)
			}
			if ps.MaxDurationMin > 0 {
				used := 0.0
				if !st.StartedAt.IsZero() {
					used = now.Sub(st.StartedAt).Minutes()
				}
				add("max_duration_min", float64(ps.MaxDurationMin), used)
			}
		}
		if cd := r.Cooldown; cd != nil {
			b := Budget{Rule: r.ID, Pattern: cd.Pattern.String(), What: "cooldown_after", Limit: float64(cd.Count),
				Used: float64(n.CooldownCount), Left: float64(cd.Count - n.CooldownCount)}
			if now.Before(n.CooldownUntil) {
				b.Until, b.Used, b.Left, b.Low = n.CooldownUntil, float64(cd.Count), 0, true
			}
			out = append(out, b)
		}
	}
	return out
}
