package hooks

// Decision is what a verdict asks of the host. The order is the precedence
// used by Combine: Deny beats Ask beats Allow beats None.
type Decision uint8

const (
	// None is "no opinion": the host proceeds as if no hook ran.
	None Decision = iota
	// Allow lets a tool call through without asking the user.
	Allow
	// Ask has the host ask the user to confirm the call.
	Ask
	// Deny refuses a tool call (PreToolUse) or blocks a stop (Stop,
	// SubagentStop) with Reason shown to the model.
	Deny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return "none"
}

// Verdict is the host-neutral answer to one event. The zero Verdict is "no
// opinion", never "allow". It knows nothing of exit codes or JSON: each
// host's encoder maps it to that host's bytes.
type Verdict struct {
	Decision Decision
	// Rule names the rule that decided ("tests", "write_budget", …), for
	// traces and replay; never shown to the model on its own.
	Rule string
	// Reason is the text the model reads when a call is denied or a stop
	// blocked.
	Reason string
	// Context is added to the model's context where the event allows it
	// (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse).
	Context string
	// Notice is shown to the user, not the model: fail-open notices and the
	// like.
	Notice string
}

// IsZero reports whether v is "no opinion".
func (v Verdict) IsZero() bool { return v == Verdict{} }

// Combine merges verdicts: the strongest decision wins with its rule and
// reason; contexts and notices of all verdicts are kept, in order.
func Combine(vs ...Verdict) Verdict {
	var out Verdict
	for _, v := range vs {
		if v.Decision > out.Decision {
			out.Decision, out.Rule, out.Reason = v.Decision, v.Rule, v.Reason
		}
		out.Context = joinNonEmpty(out.Context, v.Context)
		out.Notice = joinNonEmpty(out.Notice, v.Notice)
	}
	return out
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}
