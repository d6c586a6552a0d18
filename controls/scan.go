package controls

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// numberToken is a number as written in a text, with where it was.
type numberToken struct {
	text       string
	start, end int // byte offsets
}

// isGroupSpace reports the spaces that group digits ("1 234", narrow
// no-break space in French).
func isGroupSpace(r rune) bool { return r == ' ' || r == '\u00a0' || r == '\u202f' || r == '\u2009' }

// scanNumbers finds the numbers of s: runs of digits joined by . , _ ' and,
// before exactly three digits, by spaces. With standalone, numbers touching
// a letter (sha256, v2, 10k) are left out.
func scanNumbers(s string, standalone bool) []numberToken {
	var out []numberToken
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isDigit(r) {
			i += w
			continue
		}
		start := i
		end := i
		for j := i; j < len(s); {
			r, w := utf8.DecodeRuneInString(s[j:])
			switch {
			case isDigit(r):
				j += w
				end = j
				continue
			case r == '.' || r == ',' || r == '_' || r == '\'':
				if j+w < len(s) && isDigit(rune(s[j+w])) {
					j += w
					continue
				}
			case isGroupSpace(r):
				if threeDigits(s[j+w:]) {
					j += w
					continue
				}
			}
			break
		}
		i = end
		if standalone {
			before, _ := utf8.DecodeLastRuneInString(s[:start])
			after, _ := utf8.DecodeRuneInString(s[end:])
			if unicode.IsLetter(before) || unicode.IsLetter(after) || before == '_' || after == '_' {
				continue
			}
		}
		out = append(out, numberToken{text: s[start:end], start: start, end: end})
	}
	return out
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// threeDigits reports whether s starts with exactly three digits.
func threeDigits(s string) bool {
	return len(s) >= 3 && isDigit(rune(s[0])) && isDigit(rune(s[1])) && isDigit(rune(s[2])) &&
		(len(s) == 3 || !isDigit(rune(s[3])))
}

// numberValues are the values a written number may stand for, canonical
// ("1,234.50" → 1234.5; "1.234" → 1234 or 1.234; "3,5" → 3.5 or 35): every
// separator read as grouping, or one kind of separator read as the decimal
// point.
func numberValues(tok string) []string {
	var out []string
	add := func(v string) {
		if v != "" && !contains(out, v) {
			out = append(out, v)
		}
	}
	isSep := func(r rune) bool { return r == '.' || r == ',' || r == '_' || r == '\'' || isGroupSpace(r) }
	add(canonicalNumber(strings.Map(func(r rune) rune {
		if isSep(r) {
			return -1
		}
		return r
	}, tok), ""))
	for _, dec := range []string{".", ","} {
		i := strings.LastIndex(tok, dec)
		if i < 0 {
			continue
		}
		intPart := strings.Map(func(r rune) rune {
			if isSep(r) {
				return -1
			}
			return r
		}, tok[:i])
		frac := tok[i+1:]
		if strings.IndexFunc(frac, func(r rune) bool { return !isDigit(r) }) >= 0 {
			continue
		}
		add(canonicalNumber(intPart, frac))
	}
	return out
}

// canonicalNumber writes a number without leading zeros in its integer
// part nor trailing zeros in its fraction.
func canonicalNumber(intPart, frac string) string {
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	frac = strings.TrimRight(frac, "0")
	if frac == "" {
		return intPart
	}
	return intPart + "." + frac
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// numberSet gathers the values of every number of the sources, with each
// run of digits on its own too (versions, dates, digits inside names).
func numberSet(sources ...string) map[string]bool {
	set := map[string]bool{}
	for _, s := range sources {
		for _, n := range scanNumbers(s, false) {
			for _, v := range numberValues(n.text) {
				set[v] = true
			}
			for _, part := range strings.FieldsFunc(n.text, func(r rune) bool { return !isDigit(r) }) {
				set[canonicalNumber(part, "")] = true
			}
		}
	}
	return set
}

// identKey normalises an identifier: case and separators do not count
// (max_retries, MaxRetries, max-retries → maxretries).
func identKey(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// identSet gathers the normalised identifiers (and words) of the sources.
func identSet(sources ...string) map[string]bool {
	set := map[string]bool{}
	for _, s := range sources {
		for _, w := range words(s) {
			set[identKey(w)] = true
		}
		// Hyphenated and dotted names as a whole too.
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !(isIdent(r) || r == '-') }) {
			set[identKey(f)] = true
		}
	}
	return set
}

// words splits s into identifier-like words.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !isIdent(r) })
}

// codeShaped reports whether a word of prose is an identifier rather than
// a word: it holds an underscore, an inner capital after a lower-case
// letter (camelCase), or letters and digits mixed.
func codeShaped(w string) bool {
	if utf8.RuneCountInString(w) < 2 {
		return false
	}
	if strings.Contains(strings.Trim(w, "_"), "_") || strings.HasPrefix(w, "_") {
		return true
	}
	prevLower, letters, digits := false, false, false
	for _, r := range w {
		if unicode.IsUpper(r) && prevLower {
			return true
		}
		prevLower = unicode.IsLower(r)
		letters = letters || unicode.IsLetter(r)
		digits = digits || isDigit(r)
	}
	return letters && digits && !unicode.IsDigit([]rune(w)[0])
}

// normText lower-cases s and collapses its blanks and typographic quotes,
// for containment tests.
func normText(s string) string {
	s = strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`, "\u00a0", " ", "\u202f", " ").Replace(s)
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}
