package policies

import (
	"fmt"
	"strings"
	"testing"
)

// thirtyRules is a policies file of 30 rules of every kind, as
// .ci/hook-timing-policies.py writes it.
func thirtyRules() []byte {
	var b strings.Builder
	b.WriteString("rules:\n")
	for i, p := range []string{"git push", "rm", "kubectl delete", "terraform apply", "npm publish", "docker push", "helm upgrade", "gh release", "aws s3 rm", "psql"} {
		fmt.Fprintf(&b, "  - id: approve-%d\n    tool_pattern: \"Bash(%s:*)\"\n    require_approval: true\n", i, p)
	}
	for i, g := range []string{"src/*", "src/**/*.go", "*.py", "docs/**", "/etc/*", "migrations/*.sql", "deploy/**", ".github/**", "Makefile", "**/*.lock"} {
		fmt.Fprintf(&b, "  - id: warn-%d\n    verdict_on_match: warn\n    reason_template: \"{tool} writes {target}\"\n    tool_pattern: \"Write(%s)\"\n", i, g)
	}
	for i := range 5 {
		fmt.Fprintf(&b, "  - id: cool-%d\n    verdict_on_match: block\n    tool_pattern: \"Bash(cmd%d:*)\"\n    cooldown_after: {count: 1000000, minutes: 1}\n", i, i)
	}
	for i, p := range []string{"Bash", "Write", "Edit", "*"} {
		fmt.Fprintf(&b, "  - id: budget-%d\n    verdict_on_match: block\n    tool_pattern: %q\n    per_session: {max_tool_calls: 100000000, max_writes: 100000000}\n", i, p)
	}
	b.WriteString("  - id: cost\n    verdict_on_match: warn\n    per_session: {max_cost_usd: 1000000}\n")
	return []byte(b.String())
}

func BenchmarkDecode30(b *testing.B) {
	data := thirtyRules()
	for b.Loop() {
		if _, err := Decode("p", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPre30(b *testing.B) {
	set, err := Decode("p", thirtyRules())
	if err != nil || len(set.Rules) != 30 {
		b.Fatal(err, len(set.Rules))
	}
	c := Call{Tool: "Bash", Command: "touch notes.txt", Commands: []string{"touch notes.txt"}, Mutating: true, Fingerprint: "f", ToolUseID: "t"}
	for b.Loop() {
		Pre(&set, c, nil, Inputs{Now: t0})
	}
}
