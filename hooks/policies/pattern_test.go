package policies

import (
	"testing"
)

func TestPatternMatch(t *testing.T) {
	bash := func(cmd string, cmds ...string) Call { return Call{Tool: "Bash", Command: cmd, Commands: cmds} }
	file := func(tool, rel, abs string) Call { return Call{Tool: tool, Path: rel, AbsPath: abs} }
	tests := []struct {
		name    string
		pattern string
		call    Call
		want    bool
	}{
		{"star matches any tool", "*", file("Write", "a.go", "/p/a.go"), true},
		{"bare name", "Bash", bash("ls"), true},
		{"bare name other tool", "Bash", file("Write", "a", "/p/a"), false},
		{"tool(*) is bare", "Write(*)", file("Write", "x/y", "/p/x/y"), true},
		{"prefix exact", "Bash(git push:*)", bash("git push"), true},
		{"prefix with args", "Bash(git push:*)", bash("git push origin main"), true},
		{"prefix word boundary", "Bash(git push:*)", bash("git pushx origin"), false},
		{"prefix folded blanks", "Bash(git push:*)", bash("git   push  origin"), true},
		{"prefix in a later command", "Bash(git push:*)", bash("cd repo && git push -f", "cd repo", "git push -f"), true},
		{"prefix not a substring", "Bash(git push:*)", bash("echo git push", "echo git push"), false},
		{"prefix rm", "Bash(rm:*)", bash("rm -rf build", "rm -rf build"), true},
		{"prefix rm not rmdir", "Bash(rm:*)", bash("rmdir x", "rmdir x"), false},
		{"bash exact", "Bash(npm test)", bash("npm test"), true},
		{"bash exact other", "Bash(npm test)", bash("npm test --watch"), false},
		{"bash star", "Bash(npm run *)", bash("npm run build"), true},
		{"write glob one level", "Write(src/*)", file("Write", "src/a.go", "/p/src/a.go"), true},
		{"write glob not deeper", "Write(src/*)", file("Write", "src/x/a.go", "/p/src/x/a.go"), false},
		{"write double star", "Write(src/**)", file("Write", "src/x/a.go", "/p/src/x/a.go"), true},
		{"double star slash", "Write(**/*.go)", file("Write", "a.go", "/p/a.go"), true},
		{"base name any depth", "Write(*.py)", file("Write", "x/y/z.py", "/p/x/y/z.py"), true},
		{"leading dot slash", "Write(./src/*)", file("Write", "src/a", "/p/src/a"), true},
		{"absolute", "Read(/etc/*)", file("Read", "/etc/passwd", "/etc/passwd"), true},
		{"absolute not relative", "Read(/etc/*)", file("Read", "etc/passwd", "/p/etc/passwd"), false},
		{"write is not edit", "Write(src/*)", file("Edit", "src/a", "/p/src/a"), false},
		{"edit covers write", "Edit(src/*)", file("Write", "src/a", "/p/src/a"), true},
		{"edit covers multiedit", "Edit", file("MultiEdit", "a", "/p/a"), true},
		{"mcp star", "mcp__miam__*", Call{Tool: "mcp__miam__deleguer"}, true},
		{"mcp other server", "mcp__miam__*", Call{Tool: "mcp__other__x"}, false},
		{"no path", "Write(src/*)", Call{Tool: "Write"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePattern(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Match(tt.call); got != tt.want {
				t.Errorf("%s.Match(%+v) = %v, want %v", tt.pattern, tt.call, got, tt.want)
			}
		})
	}
}

func TestParsePatternErrors(t *testing.T) {
	for _, s := range []string{"", "  ", "Bash(", "Bash()", "(x)", "Bash(:*)", "Ba sh", "Bash(x) y"} {
		if _, err := ParsePattern(s); err == nil {
			t.Errorf("ParsePattern(%q) accepted", s)
		}
	}
}

func TestZeroPatternMatchesAll(t *testing.T) {
	if !(Pattern{}).Match(Call{Tool: "Anything"}) {
		t.Error("the zero pattern must match every call")
	}
}

func TestSetConcerns(t *testing.T) {
	set, err := Decode("p", []byte(`rules:
  - id: push
    tool_pattern: "Bash(git push:*)"
    require_approval: true
  - id: writes
    verdict_on_match: block
    tool_pattern: "Edit(src/*)"
    per_session: {max_tool_calls: 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool string
		post bool
		want bool
	}{
		{"Bash", false, true},
		{"Bash", true, true},
		{"Write", false, true},
		{"Write", true, false}, // no approval rule for Write
		{"Read", false, false},
		{"mcp__x__y", false, false},
	}
	for _, tt := range tests {
		if got := set.Concerns(tt.tool, tt.post); got != tt.want {
			t.Errorf("Concerns(%s, post %v) = %v, want %v", tt.tool, tt.post, got, tt.want)
		}
	}
	all, _ := Decode("p", []byte("rules:\n  - id: all\n    verdict_on_match: warn\n    per_session: {max_tool_calls: 3}\n"))
	if !all.Concerns("Read", false) {
		t.Error("a rule without tool_pattern concerns every tool")
	}
}
