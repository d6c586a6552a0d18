package budgets

import (
	"path"
	"strings"
)

// DefaultTestGlobs returns the globs that mark a file as a test when the
// configuration names none. It is a function so that no caller can change
// another's defaults.
func DefaultTestGlobs() []string {
	return []string{
		"tests/**", "test/**", "**/tests/**", "**/__tests__/**",
		"**/test_*.py", "**/*_test.py", "**/*_test.go",
		"**/*.test.*", "**/*.spec.*",
	}
}

// IsTestFile reports whether rel, a slash-separated path relative to the
// project root, matches one of globs.
func IsTestFile(rel string, globs []string) bool {
	rel = strings.TrimPrefix(path.Clean("/"+rel), "/")
	for _, g := range globs {
		if Match(g, rel) {
			return true
		}
	}
	return false
}

// Match reports whether the slash-separated path rel matches glob. Within a
// segment, `*` matches any run of characters, `?` one character, and
// `[...]` a class (as in path.Match); a segment that is exactly `**`
// matches any number of whole segments, including none, so `**/x.py`
// matches `x.py` and `tests/**` matches `tests/a/b.py`. A malformed glob
// matches nothing.
func Match(glob, rel string) bool {
	pat := strings.Split(glob, "/")
	name := strings.Split(rel, "/")
	// Greedy matching with one backtrack point, as for `*` in a string:
	// when a later segment fails, the latest `**` swallows one more
	// segment. Remembering only the latest `**` is enough because any
	// earlier one could have been extended just as well. O(len(pat)·len(name)).
	p, n := 0, 0
	star, starN := -1, 0
	for n < len(name) {
		switch {
		case p < len(pat) && pat[p] == "**":
			star, starN = p, n
			p++
		case p < len(pat) && matchSegment(pat[p], name[n]):
			p++
			n++
		case star >= 0:
			starN++
			p, n = star+1, starN
		default:
			return false
		}
	}
	for p < len(pat) && pat[p] == "**" {
		p++
	}
	return p == len(pat)
}

// matchSegment matches one path segment; errors (a malformed class) are no
// match.
func matchSegment(pat, name string) bool {
	ok, err := path.Match(pat, name)
	return err == nil && ok
}
