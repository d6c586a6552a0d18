package policies

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"miam/budgets"
)

// Outcome is the policies' answer to one PreToolUse. The zero Outcome is
// "no opinion".
type Outcome struct {
	// Verdict is the strongest of the rules that spoke: Block, Ask or
	// Allow (an approved call); "" for none. Warn never appears here: warnings
	// go to Warnings.
	Verdict Verdict
	Rule    string // the rule whose verdict it is
	Reason  string
	// Warnings are the texts of rules that warn; they never block.
	Warnings []string
}

func (o *Outcome) add(v Verdict, rule, reason string) {
	if v == Warn {
		o.Warnings = append(o.Warnings, reason)
		return
	}
	if v.rank() > o.Verdict.rank() {
		o.Verdict, o.Rule, o.Reason = v, rule, reason
	}
}

// Inputs are what an evaluation reads besides the call and the state.
type Inputs struct {
	// Now is the hook's clock, read once by the caller.
	Now time.Time
	// Cost returns the session's cost so far in USD and the state's cost
	// part brought up to date; it is called only when a max_cost_usd cap
	// applies to the call. Nil means the cost cannot be known: no cost
	// cap trips.
	Cost func(budgets.TranscriptCost) (float64, budgets.TranscriptCost)
}

// maxPending bounds the approvals waiting for their PostToolUse: calls the
// host never reported are forgotten past it.
const maxPending = 128

// Start returns the state with the session's start recorded, once.
func Start(st *budgets.PolicyState, now time.Time) *budgets.PolicyState {
	if st != nil && !st.StartedAt.IsZero() {
		return st
	}
	st = clone(st)
	st.StartedAt = now
	return st
}

// Pre evaluates a PreToolUse. It returns the outcome and the new state,
// which counts the call unless it is blocked; st is not modified. The
// caller keeps the old state when something else then denies the call.
func Pre(set *Set, c Call, st *budgets.PolicyState, in Inputs) (Outcome, *budgets.PolicyState) {
	st = clone(Start(st, in.Now))
	var out Outcome
	var asking []string
	for _, r := range set.Rules {
		if !r.Pattern.Match(c) {
			continue
		}
		n := st.Rules[r.ID]
		if !r.temporal() {
			out.add(r.Verdict, r.ID, render(r, c, "", 0, 0, defaultMatchReason(r, c)))
			continue
		}
		if r.PerSession != nil && !c.ReadOnly && !c.Repair {
			if what, limit, used := spent(r.PerSession, n, st, c, in); what != "" {
				out.add(r.Verdict, r.ID, budgetReason(set, r, c, what, limit, used))
			}
		}
		if cd := r.Cooldown; cd != nil && !c.Repair && cd.Pattern.Match(c) && in.Now.Before(n.CooldownUntil) {
			left := int(n.CooldownUntil.Sub(in.Now).Round(time.Minute) / time.Minute)
			out.add(r.Verdict, r.ID, render(r, c, "cooldown_after", float64(cd.Count), float64(cd.Count), fmt.Sprintf(
				"miam policy %s: %d calls matching %s in a row start a %d-minute cooldown; about %d min left (until %s UTC).",
				r.ID, cd.Count, cd.Pattern, cd.Minutes, max(left, 1), n.CooldownUntil.UTC().Format("15:04"))))
		}
		if r.RequireApproval && !c.Repair {
			if slices.Contains(n.Approved, c.Fingerprint) {
				out.add(Allow, r.ID, "")
			} else {
				asking = append(asking, r.ID)
				out.add(Ask, r.ID, render(r, c, "require_approval", 0, 0, fmt.Sprintf(
					"miam policy %s: %s needs the user's approval once per session; the same call will then pass without asking.",
					r.ID, describe(c))))
			}
		}
	}
	if out.Verdict == Block {
		return out, st
	}
	if len(asking) > 0 && c.ToolUseID != "" {
		if len(st.Pending) >= maxPending {
			st.Pending = nil
		}
		if st.Pending == nil {
			st.Pending = map[string]budgets.PendingApproval{}
		}
		st.Pending[c.ToolUseID] = budgets.PendingApproval{Fingerprint: c.Fingerprint, Rules: asking}
	}
	count(set, c, st, in.Now)
	return out, st
}

// count charges an allowed call to the counters of the rules it matches.
// A repair call is charged to none: it is how a budget is lifted.
func count(set *Set, c Call, st *budgets.PolicyState, now time.Time) {
	if c.Repair {
		return
	}
	for _, r := range set.Rules {
		if !r.temporal() || !r.Pattern.Match(c) {
			continue
		}
		n := st.Rules[r.ID]
		changed := false
		if r.PerSession != nil {
			n.ToolCalls++
			if c.Mutating {
				n.Writes++
			}
			changed = true
		}
		if cd := r.Cooldown; cd != nil && cd.Pattern.Match(c) && !now.Before(n.CooldownUntil) {
			n.CooldownCount++
			if n.CooldownCount >= cd.Count {
				n.CooldownCount, n.CooldownUntil = 0, now.Add(time.Duration(cd.Minutes)*time.Minute)
			}
			changed = true
		}
		if changed {
			if st.Rules == nil {
				st.Rules = map[string]budgets.RuleCounters{}
			}
			st.Rules[r.ID] = n
		}
	}
}

// spent names the first cap the call would go past, with its limit and what
// was used; "" when none is spent. A cap trips on the call after the last
// one it allows.
func spent(ps *PerSession, n budgets.RuleCounters, st *budgets.PolicyState, c Call, in Inputs) (what string, limit, used float64) {
	switch {
	case ps.MaxToolCalls > 0 && n.ToolCalls >= ps.MaxToolCalls:
		return "max_tool_calls", float64(ps.MaxToolCalls), float64(n.ToolCalls)
	case ps.MaxWrites > 0 && c.Mutating && n.Writes >= ps.MaxWrites:
		return "max_writes", float64(ps.MaxWrites), float64(n.Writes)
	case ps.MaxDurationMin > 0 && !st.StartedAt.IsZero() && in.Now.Sub(st.StartedAt) >= time.Duration(ps.MaxDurationMin)*time.Minute:
		return "max_duration_min", float64(ps.MaxDurationMin), in.Now.Sub(st.StartedAt).Minutes()
	}
	if ps.MaxCostUSD > 0 && in.Cost != nil {
		var usd float64
		usd, st.Cost = in.Cost(st.Cost)
		if usd >= ps.MaxCostUSD {
			return "max_cost_usd", ps.MaxCostUSD, usd
		}
	}
	return "", 0, 0
}

// Post records, in PostToolUse, the approval of a call that ran after
// PreToolUse asked for it: the fingerprint kept under its tool_use_id (the
// input may have been rewritten since). Only an ask followed by the call's
// run approves: an ask alone is no proof that the user said yes, and a run
// that nobody was asked about (the PreToolUse hook failed open, or the call
// came before the rule) approves nothing.
func Post(set *Set, c Call, st *budgets.PolicyState) *budgets.PolicyState {
	p, ok := pending(st, c.ToolUseID)
	if !ok {
		return st
	}
	fp, rules := p.Fingerprint, p.Rules
	st = clone(st)
	delete(st.Pending, c.ToolUseID)
	for _, id := range rules {
		if !set.has(id) {
			continue
		}
		n := st.Rules[id]
		if !slices.Contains(n.Approved, fp) {
			n.Approved = append(slices.Clone(n.Approved), fp)
			if len(n.Approved) > MaxApprovals {
				n.Approved = n.Approved[len(n.Approved)-MaxApprovals:]
			}
		}
		if st.Rules == nil {
			st.Rules = map[string]budgets.RuleCounters{}
		}
		st.Rules[id] = n
	}
	return st
}

// Failed forgets the approval a call asked for when the host says it did
// not run to completion (PostToolUseFailure).
func Failed(c Call, st *budgets.PolicyState) *budgets.PolicyState {
	if !hasPending(st, c.ToolUseID) {
		return st
	}
	st = clone(st)
	delete(st.Pending, c.ToolUseID)
	return st
}

func pending(st *budgets.PolicyState, id string) (budgets.PendingApproval, bool) {
	if st == nil || id == "" {
		return budgets.PendingApproval{}, false
	}
	p, ok := st.Pending[id]
	return p, ok
}

func hasPending(st *budgets.PolicyState, id string) bool {
	_, ok := pending(st, id)
	return ok
}

func (s *Set) has(id string) bool {
	for _, r := range s.Rules {
		if r.ID == id {
			return true
		}
	}
	return false
}

// clone returns a copy of st that can be changed freely; nil gives a new
// state.
func clone(st *budgets.PolicyState) *budgets.PolicyState {
	if st == nil {
		return &budgets.PolicyState{}
	}
	c := *st
	c.Rules = maps.Clone(st.Rules)
	c.Pending = maps.Clone(st.Pending)
	return &c
}

// budgetReason is a spent budget's deny text: the rule's own words, then
// what was spent and how to lift it. The remedy it names is exempt from
// every budget, so a deny never recommends a call it would refuse.
func budgetReason(set *Set, r Rule, c Call, what string, limit, used float64) string {
	def := fmt.Sprintf("miam policy %s: the session's %s budget is spent (%s of %s).", r.ID, what, num(used), num(limit))
	text := render(r, c, what, limit, used, def)
	if text != def {
		text += fmt.Sprintf(" (miam policy %s: %s, %s of %s used.)", r.ID, what, num(used), num(limit))
	}
	return text + fmt.Sprintf(" Read-only calls still work. To go on, ask the user: `miam policies status` shows the counters, "+
		"`miam policies reset-session` clears this session's, or per_session can be raised in %s.", policiesName(set))
}

func policiesName(set *Set) string {
	if set.Name == "" {
		return File
	}
	return set.Name
}

func defaultMatchReason(r Rule, c Call) string {
	return fmt.Sprintf("miam policy %s: %s matches %s.", r.ID, describe(c), r.Pattern)
}

// render fills the rule's reason_template, or returns def without one.
func render(r Rule, c Call, budget string, limit, used float64, def string) string {
	if r.ReasonTemplate == "" {
		return def
	}
	return strings.NewReplacer(
		"{id}", r.ID, "{tool}", c.Tool, "{target}", target(c),
		"{limit}", num(limit), "{used}", num(used), "{budget}", budget,
	).Replace(r.ReasonTemplate)
}

func target(c Call) string {
	if c.Command != "" {
		cmd := fold(c.Command)
		if len(cmd) > 200 {
			cmd = cmd[:200] + "…"
		}
		return cmd
	}
	return c.Path
}

func describe(c Call) string {
	if t := target(c); t != "" {
		return fmt.Sprintf("this %s call (`%s`)", c.Tool, t)
	}
	return "this " + c.Tool + " call"
}

func num(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%.2f", f)
}
