package budgets

import (
	"path"
	"strings"
	"unicode/utf8"
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
// `[...]` a class (`[!...]` or `[^...]` negated); a segment that is exactly `**`
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

// matchSegment matches one path segment against one glob segment: `*`
// any run of characters, `?` one character, `[abc]`, `[a-z]` and negated
// `[!a-z]` or `[^a-z]` classes, and `\\` escaping the next character. A
// malformed class (no closing `]`) matches nothing.
func matchSegment(pat, name string) bool {
	// Greedy `*` with one backtrack point, as for ** above.
	p, n := 0, 0
	star, starN := -1, 0
	for n < len(name) {
		if p < len(pat) && pat[p] == '*' {
			star, starN = p, n
			p++
			continue
		}
		if p < len(pat) {
			r, size := utf8.DecodeRuneInString(name[n:])
			if ok, width := matchOne(pat[p:], r); width > 0 && ok {
				p += width
				n += size
				continue
			} else if width == 0 {
				return false // malformed class
			}
		}
		if star < 0 {
			return false
		}
		_, size := utf8.DecodeRuneInString(name[starN:])
		starN += size
		p, n = star+1, starN
	}
	for p < len(pat) && pat[p] == '*' {
		p++
	}
	return p == len(pat)
}

// matchOne matches r against the pattern element at the start of pat (not
// a `*`) and returns how many bytes of pat it took; 0 for a malformed class.
func matchOne(pat string, r rune) (ok bool, width int) {
	switch pat[0] {
	case '?':
		return true, 1
	case '\\':
		if len(pat) == 1 {
			return r == '\\', 1
		}
		c, size := utf8.DecodeRuneInString(pat[1:])
		return c == r, 1 + size
	case '[':
		return matchClass(pat, r)
	}
	c, size := utf8.DecodeRuneInString(pat)
	return c == r, size
}

// matchClass matches r against the class opening pat.
func matchClass(pat string, r rune) (ok bool, width int) {
	i := 1
	negate := i < len(pat) && (pat[i] == '!' || pat[i] == '^')
	if negate {
		i++
	}
	matched := false
	for first := true; ; first = false {
		if i >= len(pat) {
			return false, 0
		}
		if pat[i] == ']' && !first {
			return matched != negate, i + 1
		}
		lo, size := classRune(pat[i:])
		if size == 0 {
			return false, 0
		}
		i += size
		hi := lo
		if i+1 < len(pat) && pat[i] == '-' && pat[i+1] != ']' {
			if hi, size = classRune(pat[i+1:]); size == 0 {
				return false, 0
			}
			i += 1 + size
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
}

// classRune reads one possibly escaped character of a class.
func classRune(s string) (rune, int) {
	if s[0] == '\\' {
		if len(s) == 1 {
			return 0, 0
		}
		r, size := utf8.DecodeRuneInString(s[1:])
		return r, 1 + size
	}
	return utf8.DecodeRuneInString(s)
}
