package budgets

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		glob, rel string
		want      bool
	}{
		{"*.py", "a.py", true},
		{"*.py", "dir/a.py", false}, // * does not cross a slash
		{"a?c", "abc", true},
		{"a?c", "a/c", false},
		{"a?c", "ac", false},
		{"[ab]x", "bx", true},
		{"[!ab]x", "bx", false},
		{"[^ab]x", "cx", true},
		{"[]a]", "]", true}, // a leading ] is literal
		{"[a-]", "-", true},
		{`\*`, "*", true},
		{`\*`, "a", false},
		{"*", "", true},
		{"*a*b*", "xaxxbx", true},
		{"*a*b*", "xbxa", false},
		{"é?", "éè", true},
		{"[a-c]x", "cx", true},
		{"[", "[", false}, // malformed: no match
		{"**", "", true},
		{"**", "a/b/c", true},
		{"**/x.py", "x.py", true}, // ** matches zero segments
		{"**/x.py", "a/b/x.py", true},
		{"**/x.py", "a/b/y.py", false},
		{"tests/**", "tests", true},
		{"tests/**", "tests/a/b.py", true},
		{"tests/**", "src/tests/a.py", false},
		{"**/tests/**", "src/tests/a.py", true},
		{"**/tests/**", "tests/a.py", true},
		{"**/tests/**", "src/testsuite/a.py", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"a/**/b/**/c", "a/1/b/2/b/3/c", true}, // backtracking across two **
		{"a/**/b/**/c", "a/1/b/2/d", false},
		{"**/**/x", "x", true},
		{"**/*.test.*", "src/a.test.ts", true},
		{"**/*.test.*", "src/atest.ts", false},
		{"a/b", "a/b/c", false},
		{"a/b/c", "a/b", false},
		{"x**y", "xaby", true}, // ** inside a segment is a plain *
		{"x**y", "xa/by", false},
	}
	for _, tt := range tests {
		if got := Match(tt.glob, tt.rel); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.glob, tt.rel, got, tt.want)
		}
	}
}

func TestIsTestFile(t *testing.T) {
	tests := []struct {
		rel  string
		want bool
	}{
		{"tests/test_api.py", true},
		{"tests/fixtures/data.json", true},
		{"test/helper.rb", true},
		{"pkg/tests/x.py", true},
		{"web/src/__tests__/App.jsx", true},
		{"test_foo.py", true},
		{"pkg/test_foo.py", true},
		{"pkg/foo_test.py", true},
		{"budgets/count_test.go", true},
		{"web/src/App.test.tsx", true},
		{"web/src/App.spec.ts", true},
		{"./tests/x.py", true},
		{"src/main.py", false},
		{"src/testing.py", false},
		{"contest/main.go", false},
		{"pkg/test_foo.go", false},
		{"latest/x.py", false},
	}
	globs := DefaultTestGlobs()
	for _, tt := range tests {
		if got := IsTestFile(tt.rel, globs); got != tt.want {
			t.Errorf("IsTestFile(%q) = %v, want %v", tt.rel, got, tt.want)
		}
	}
	if IsTestFile("tests/x.py", nil) {
		t.Error("IsTestFile with no globs matched")
	}
	DefaultTestGlobs()[0] = "changed"
	if DefaultTestGlobs()[0] != "tests/**" {
		t.Error("DefaultTestGlobs shares its slice")
	}
}

// FuzzMatchSegment checks the hand-written segment matcher against
// path.Match wherever path.Match accepts the pattern.
func FuzzMatchSegment(f *testing.F) {
	for _, s := range [][2]string{{"*.py", "a.py"}, {"a?c", "abc"}, {"[a-c]x", "cx"}, {"[^a]*", "ba"}, {`\*`, "*"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		if strings.Contains(pat, "/") || strings.Contains(name, "/") || !utf8.ValidString(pat) || !utf8.ValidString(name) {
			return
		}
		want, err := path.Match(pat, name)
		if err != nil {
			return
		}
		if got := matchSegment(pat, name); got != want {
			t.Errorf("matchSegment(%q, %q) = %v, path.Match says %v", pat, name, got, want)
		}
	})
}
