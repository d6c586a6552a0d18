// Package policies reads and evaluates the temporal policies of
// .miam/policies.yaml (SPEC §9): rules matched on Claude Code's
// permission-rule syntax that ask once for approval, cool down after a burst
// of calls or cap a session's calls, writes, cost and duration. Everything
// here is pure: the caller classifies the call, reads the clock and the
// files, and keeps the state.
package policies

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"miam/hooks/config"
)

// Verdict is what a rule answers when it trips: a budget spent, a cooldown
// running, or, for a rule with no temporal part, a match.
type Verdict string

// The verdicts, weakest first. Deny is read as Block.
const (
	Allow Verdict = "allow"
	Warn  Verdict = "warn"
	Ask   Verdict = "ask"
	Block Verdict = "block"
)

func (v Verdict) rank() int {
	switch v {
	case Warn:
		return 1
	case Allow:
		return 2
	case Ask:
		return 3
	case Block:
		return 4
	}
	return 0
}

// Set is one policies file, decoded and checked.
type Set struct {
	// Name is the file's path, for messages.
	Name  string
	Rules []Rule
}

// NeedsCost reports whether a rule caps the session's cost, the only thing
// that needs the transcript read.
func (s *Set) NeedsCost() bool {
	for _, r := range s.Rules {
		if r.PerSession != nil && r.PerSession.MaxCostUSD > 0 {
			return true
		}
	}
	return false
}

// Concerns reports whether a rule may speak on or count a call of this
// tool: in PreToolUse (post false) any rule whose pattern names the tool, in
// PostToolUse only those that record approvals. It lets the hook skip the
// session's state for calls no rule cares about.
func (s *Set) Concerns(tool string, post bool) bool {
	for _, r := range s.Rules {
		if post && !r.RequireApproval {
			continue
		}
		if r.Pattern.MatchTool(tool) || r.Cooldown != nil && r.Cooldown.Pattern.MatchTool(tool) {
			return true
		}
	}
	return false
}

// Rule is one entry of rules:.
type Rule struct {
	ID             string
	Description    string
	Verdict        Verdict // what a match (plain rule) or a trip does
	ReasonTemplate string
	// Pattern is tool_pattern; the zero Pattern matches every call.
	Pattern         Pattern
	RequireApproval bool
	Cooldown        *Cooldown
	PerSession      *PerSession
	Line            int // where the rule starts in the file
}

// temporal reports whether the rule has a part that depends on the session.
func (r Rule) temporal() bool {
	return r.RequireApproval || r.Cooldown != nil || r.PerSession != nil
}

// Cooldown is cooldown_after: once Count calls matched Pattern, the next
// ones trip for Minutes.
type Cooldown struct {
	Pattern Pattern
	Count   int
	Minutes int
}

// PerSession is per_session: caps over the whole session; zero is no cap.
type PerSession struct {
	MaxToolCalls   int
	MaxWrites      int
	MaxCostUSD     float64
	MaxDurationMin int
}

// MaxApprovals is how many approved fingerprints a rule keeps; the oldest
// go first.
const MaxApprovals = 64

// File is the policies file's path, relative to the project.
const File = ".miam/policies.yaml"

// ErrInvalid marks a policies file that cannot be used.
var ErrInvalid = errors.New("invalid policies")

// The file's shape, decoded strictly.
type file struct {
	Rules []fileRule `yaml:"rules"`
}

type fileRule struct {
	ID              string          `yaml:"id"`
	Description     string          `yaml:"description"`
	VerdictOnMatch  string          `yaml:"verdict_on_match"`
	ReasonTemplate  string          `yaml:"reason_template"`
	ToolPattern     *string         `yaml:"tool_pattern"`
	RequireApproval bool            `yaml:"require_approval"`
	CooldownAfter   *fileCooldown   `yaml:"cooldown_after"`
	PerSession      *filePerSession `yaml:"per_session"`
}

type fileCooldown struct {
	Pattern *string `yaml:"pattern"`
	Count   int     `yaml:"count"`
	Minutes int     `yaml:"minutes"`
}

type filePerSession struct {
	MaxToolCalls   *int     `yaml:"max_tool_calls"`
	MaxWrites      *int     `yaml:"max_writes"`
	MaxCostUSD     *float64 `yaml:"max_cost_usd"`
	MaxDurationMin *int     `yaml:"max_duration_min"`
	Subagents      string   `yaml:"subagents"`
}

// placeholders are the words a reason_template may name in braces.
var placeholders = []string{"id", "tool", "target", "limit", "used", "budget"}

// Decode reads a policies file strictly: an unknown key, a bad value or an
// unusable rule is an error naming the file, the line and the key. name is
// used in messages only. An empty file is an empty Set.
func Decode(name string, data []byte) (Set, error) {
	set := Set{Name: name}
	if len(bytes.TrimSpace(data)) == 0 {
		return set, nil
	}
	// One parse, into nodes: the keys are checked on the nodes (the hook
	// reads this file on every call, and parsing is most of the cost),
	// then the nodes are decoded.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Set{}, fmt.Errorf("%w: %s: %s", ErrInvalid, name, config.YAMLMessage(err))
	}
	if len(root.Content) == 0 {
		return set, nil // comments only
	}
	if err := checkKeys(root.Content[0], reflect.TypeFor[file]()); err != nil {
		return Set{}, fmt.Errorf("%w: %s: %w", ErrInvalid, name, err)
	}
	var f file
	if err := root.Decode(&f); err != nil {
		return Set{}, fmt.Errorf("%w: %s: %s", ErrInvalid, name, config.YAMLMessage(err))
	}
	nodes := ruleNodes(&root)
	seen := map[string]int{}
	for i, fr := range f.Rules {
		var n *yaml.Node
		if i < len(nodes) {
			n = nodes[i]
		}
		r, err := fr.rule(n, seen)
		if err != nil {
			return Set{}, fmt.Errorf("%w: %s: %w", ErrInvalid, name, err)
		}
		set.Rules = append(set.Rules, r)
	}
	return set, nil
}

func (fr fileRule) rule(n *yaml.Node, seen map[string]int) (Rule, error) {
	at := func(path ...string) string { return fmt.Sprintf("line %d", lineOf(n, path...)) }
	bad := func(key string, path []string, format string, args ...any) error {
		return fmt.Errorf("%s: rule %q: %s: %s", at(path...), fr.ID, key, fmt.Sprintf(format, args...))
	}
	r := Rule{ID: fr.ID, Description: fr.Description, ReasonTemplate: fr.ReasonTemplate,
		RequireApproval: fr.RequireApproval, Line: lineOf(n)}
	switch {
	case fr.ID == "":
		return Rule{}, fmt.Errorf("%s: rules: a rule has no id (give each rule a unique id)", at())
	case seen[fr.ID] > 0:
		return Rule{}, bad("id", []string{"id"}, "already used by the rule at line %d", seen[fr.ID])
	}
	seen[fr.ID] = r.Line
	switch v := Verdict(fr.VerdictOnMatch); v {
	case Allow, Warn, Ask, Block:
		r.Verdict = v
	case "deny":
		r.Verdict = Block
	case "":
		if !fr.RequireApproval || fr.CooldownAfter != nil || fr.PerSession != nil {
			return Rule{}, bad("verdict_on_match", nil, "missing (allow, warn, ask or block)")
		}
		r.Verdict = Ask
	default:
		return Rule{}, bad("verdict_on_match", []string{"verdict_on_match"}, "%q is not allow, warn, ask or block", fr.VerdictOnMatch)
	}
	if fr.ToolPattern != nil {
		p, err := ParsePattern(*fr.ToolPattern)
		if err != nil {
			return Rule{}, bad("tool_pattern", []string{"tool_pattern"}, "%v", err)
		}
		r.Pattern = p
	}
	if err := checkTemplate(fr.ReasonTemplate); err != nil {
		return Rule{}, bad("reason_template", []string{"reason_template"}, "%v", err)
	}
	if c := fr.CooldownAfter; c != nil {
		cd := Cooldown{Pattern: r.Pattern, Count: c.Count, Minutes: c.Minutes}
		if c.Pattern != nil {
			p, err := ParsePattern(*c.Pattern)
			if err != nil {
				return Rule{}, bad("cooldown_after.pattern", []string{"cooldown_after", "pattern"}, "%v", err)
			}
			cd.Pattern = p
		}
		if cd.Count < 1 {
			return Rule{}, bad("cooldown_after.count", []string{"cooldown_after", "count"}, "must be 1 or more, got %d", cd.Count)
		}
		if cd.Minutes < 1 {
			return Rule{}, bad("cooldown_after.minutes", []string{"cooldown_after", "minutes"}, "must be 1 or more, got %d", cd.Minutes)
		}
		r.Cooldown = &cd
	}
	if ps := fr.PerSession; ps != nil {
		var out PerSession
		for _, f := range []struct {
			key string
			v   *int
			dst *int
		}{{"max_tool_calls", ps.MaxToolCalls, &out.MaxToolCalls}, {"max_writes", ps.MaxWrites, &out.MaxWrites},
			{"max_duration_min", ps.MaxDurationMin, &out.MaxDurationMin}} {
			if f.v == nil {
				continue
			}
			if *f.v < 1 {
				return Rule{}, bad("per_session."+f.key, []string{"per_session", f.key}, "must be 1 or more, got %d", *f.v)
			}
			*f.dst = *f.v
		}
		if ps.MaxCostUSD != nil {
			if !(*ps.MaxCostUSD > 0) {
				return Rule{}, bad("per_session.max_cost_usd", []string{"per_session", "max_cost_usd"}, "must be above 0, got %v", *ps.MaxCostUSD)
			}
			out.MaxCostUSD = *ps.MaxCostUSD
		}
		switch ps.Subagents {
		case "", "shared":
		case "separate":
			return Rule{}, bad("per_session.subagents", []string{"per_session", "subagents"},
				"\"separate\" cannot be honoured: Claude Code sends a subagent's calls with its parent's session_id, so subagents always share the session's budget; remove the key or write \"shared\"")
		default:
			return Rule{}, bad("per_session.subagents", []string{"per_session", "subagents"}, "%q is not \"shared\"", ps.Subagents)
		}
		if out == (PerSession{}) {
			return Rule{}, bad("per_session", []string{"per_session"}, "sets no cap (max_tool_calls, max_writes, max_cost_usd or max_duration_min)")
		}
		r.PerSession = &out
	}
	return r, nil
}

// checkTemplate refuses a {word} that is not a known placeholder.
func checkTemplate(t string) error {
	for rest := t; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return nil
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil
		}
		word := rest[i+1 : i+j]
		ok := false
		for _, p := range placeholders {
			ok = ok || p == word
		}
		if !ok {
			return fmt.Errorf("unknown placeholder {%s} (known: {%s})", word, strings.Join(placeholders, "}, {"))
		}
		rest = rest[i+j+1:]
	}
}

// checkKeys refuses, in a mapping node decoded into a struct of type t
// (or a sequence of them, or a pointer to one), any key that no field of t
// names: the strictness of yaml's KnownFields, on nodes.
func checkKeys(n *yaml.Node, t reflect.Type) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode {
			for _, item := range n.Content {
				if err := checkKeys(item, t.Elem()); err != nil {
					return err
				}
			}
			return nil
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode {
		return nil // a scalar where a mapping belongs: Decode says so
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i]
		f, ok := fieldByTag(t, key.Value)
		if !ok {
			return fmt.Errorf("line %d: unknown key %q", key.Line, key.Value)
		}
		if err := checkKeys(n.Content[i+1], f.Type); err != nil {
			return err
		}
	}
	return nil
}

func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// ruleNodes returns the mapping node of each rule, in order.
func ruleNodes(root *yaml.Node) []*yaml.Node {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "rules" && m.Content[i+1].Kind == yaml.SequenceNode {
			return m.Content[i+1].Content
		}
	}
	return nil
}

// lineOf is the line of the key at path inside n, else of the deepest node
// found on the way, else 0.
func lineOf(n *yaml.Node, path ...string) int {
	if n == nil {
		return 0
	}
	line := n.Line
	for _, key := range path {
		if n.Kind != yaml.MappingNode {
			break
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				line, next = n.Content[i].Line, n.Content[i+1]
				break
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return line
}
