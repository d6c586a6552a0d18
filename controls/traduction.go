package controls

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"miam/delegate/wire"
)

// Traduction is the `traduction` control (SPEC §4): a translation keeps
// what must not be translated and has a plausible length. The source is
// the joined files, else the consigne's text after its first line ending
// in ":" (or the whole consigne). Kept, as multisets: placeholders
// ({name}, {0}, {{x}}, ${x}, %s, %(name)s, %1$d, %{name}, $1), inline
// `code spans`, URLs, HTML tags and numbers (digit grouping and decimal
// comma free); a JSON source keeps its keys. The length in characters must
// stay within a band for the pair: 0.5–2× between alphabetic languages,
// 0.15–1× into Chinese, Japanese or Korean, 1–6× out of them, twice as wide
// for sources under 40 characters. An answer equal to its source is not a
// translation.
type Traduction struct{}

// Name returns "traduction".
func (Traduction) Name() string { return NameTraduction }

// Cost returns CostPure.
func (Traduction) Cost() Cost { return CostPure }

// Check runs the control.
func (Traduction) Check(_ context.Context, in Input) wire.Control {
	src := translationSource(in)
	if strings.TrimSpace(src) == "" {
		return wire.Control{Nom: NameTraduction, OK: true, Message: "no source text found: skipped"}
	}
	out := in.Code
	if strings.TrimSpace(out) == "" {
		return result(NameTraduction, []string{"the translation is empty"})
	}
	var problems []string
	if normText(src) == normText(out) && len(words(src)) >= 3 {
		return result(NameTraduction, []string{fmt.Sprintf("the text is not translated: translate it into %s", orDefault(in.Request.Langue, "the requested language"))})
	}
	a, b := protectedParts(src), protectedParts(out)
	for _, kind := range []string{"placeholder", "code span", "URL", "HTML tag"} {
		lost, added := multisetDiff(a[kind], b[kind])
		if len(lost) > 0 {
			problems = append(problems, fmt.Sprintf("%s%s lost: %s", kind, plural(len(lost)), quoteList(lost)))
		}
		if len(added) > 0 {
			problems = append(problems, fmt.Sprintf("%s%s not in the source: %s", kind, plural(len(added)), quoteList(added)))
		}
	}
	if lost := lostNumbers(a["number"], b["number"]); len(lost) > 0 {
		problems = append(problems, fmt.Sprintf("number%s changed or lost: %s", plural(len(lost)), strings.Join(lost, ", ")))
	}
	if missing := missingKeys(src, out); len(missing) > 0 {
		problems = append(problems, "JSON keys lost: "+quoteList(missing))
	}
	if len(problems) > 0 {
		problems[len(problems)-1] += ": keep them exactly as in the source"
	}
	if p := lengthProblem(src, out, in.Request.Langue); p != "" {
		problems = append(problems, p)
	}
	return result(NameTraduction, problems)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func plural(n int) string {
	if n > 1 {
		return "s"
	}
	return ""
}

func quoteList(ss []string) string {
	if len(ss) > 6 {
		ss = append(ss[:6:6], "…")
	}
	return "`" + strings.Join(ss, "`, `") + "`"
}

// translationSource is the text to translate.
func translationSource(in Input) string {
	if len(in.Files) > 0 {
		keys := make([]string, 0, len(in.Files))
		for p := range in.Files {
			keys = append(keys, p)
		}
		slices.Sort(keys)
		var parts []string
		for _, p := range keys {
			parts = append(parts, string(in.Files[p]))
		}
		return strings.Join(parts, "\n")
	}
	c := in.Request.Consigne
	lines := strings.Split(c, "\n")
	for i, ln := range lines {
		if strings.HasSuffix(strings.TrimSpace(ln), ":") && i+1 < len(lines) {
			return strings.Join(lines[i+1:], "\n")
		}
	}
	return c
}

var (
	urlPattern  = regexp.MustCompile(`https?://[^\s<>()"'\x60]+[^\s<>()"'\x60.,;:!?]`)
	htmlTag     = regexp.MustCompile(`</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>`)
	placeholder = regexp.MustCompile(`\{\{\s*[^{}]+?\s*\}\}|\$\{[^{}]+\}|%\{[A-Za-z0-9_]+\}|\{[A-Za-z0-9_.]*(?:[:!][^{}\s]*)?\}|%\([A-Za-z0-9_]+\)[-#0+]*\d*(?:\.\d+)?[sdifrxXeEgG]|%(?:\d+\$)?[-#0+]*\d*(?:\.\d+)?[sdifuxXeEgGcp@]|\$\d+`)
)

// protectedParts sorts what a text must keep, by kind; each part is
// removed before the next kind is looked for, so that a URL's digits are
// not numbers.
func protectedParts(s string) map[string][]string {
	out := map[string][]string{}
	take := func(kind string, re *regexp.Regexp, group int) {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			v := m
			if group > 0 {
				v = re.FindStringSubmatch(m)[group]
			}
			out[kind] = append(out[kind], v)
			return " "
		})
	}
	take("code span", inlineCode, 1)
	take("URL", urlPattern, 0)
	take("HTML tag", htmlTag, 0)
	take("placeholder", placeholder, 0)
	for _, n := range scanNumbers(s, true) {
		out["number"] = append(out["number"], n.text)
	}
	for k := range out {
		if k != "number" {
			for i, v := range out[k] {
				out[k][i] = strings.Join(strings.Fields(v), " ")
			}
		}
	}
	return out
}

// multisetDiff is what a lacks of b's… and what b adds to a: the elements
// of a not matched in b (lost), those of b not matched in a (added).
func multisetDiff(a, b []string) (lost, added []string) {
	count := map[string]int{}
	for _, x := range b {
		count[x]++
	}
	for _, x := range a {
		if count[x] > 0 {
			count[x]--
		} else if !slices.Contains(lost, x) {
			lost = append(lost, x)
		}
	}
	for _, x := range b {
		if count[x] > 0 {
			count[x]--
			if !slices.Contains(added, x) {
				added = append(added, x)
			}
		}
	}
	return lost, added
}

// lostNumbers lists the source's numbers the translation lacks, values
// compared (1,000.5 = 1 000,5).
func lostNumbers(src, out []string) []string {
	used := make([]bool, len(out))
	var lost []string
	for _, n := range src {
		found := false
		for i, m := range out {
			if !used[i] && sameNumber(n, m) {
				used[i], found = true, true
				break
			}
		}
		if !found && !slices.Contains(lost, n) {
			lost = append(lost, n)
		}
	}
	return lost
}

func sameNumber(a, b string) bool {
	for _, x := range numberValues(a) {
		if slices.Contains(numberValues(b), x) {
			return true
		}
	}
	return false
}

// missingKeys lists the keys of a JSON source object the translation lacks.
func missingKeys(src, out string) []string {
	var a, b any
	if json.Unmarshal([]byte(strings.TrimSpace(src)), &a) != nil {
		return nil
	}
	if json.Unmarshal([]byte(strings.TrimSpace(out)), &b) != nil {
		if _, ok := a.(map[string]any); ok {
			return []string{"(the translation is no valid JSON)"}
		}
		return nil
	}
	ka, kb := map[string]bool{}, map[string]bool{}
	jsonPaths(a, "", ka)
	jsonPaths(b, "", kb)
	var lost []string
	for k := range ka {
		if !kb[k] {
			lost = append(lost, k)
		}
	}
	slices.Sort(lost)
	return lost
}

func jsonPaths(v any, prefix string, into map[string]bool) {
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			p := prefix + "." + k
			into[strings.TrimPrefix(p, ".")] = true
			jsonPaths(x, p, into)
		}
	}
}

// cjkShare is the share of a text's letters that are Han, kana or Hangul.
func cjkShare(s string) float64 {
	letters, cjk := 0, 0
	for _, r := range s {
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			cjk++
		}
	}
	if letters == 0 {
		return 0
	}
	return float64(cjk) / float64(letters)
}

// cjkLangue reports whether a `langue` names Chinese, Japanese or Korean.
func cjkLangue(l string) bool {
	l = strings.ToLower(strings.TrimSpace(l))
	for _, p := range []string{"zh", "ja", "ko", "chin", "japon", "japan", "cor", "kor", "中文", "日本", "한국"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// lengthProblem says when the translation's length is implausible.
func lengthProblem(src, out, langue string) string {
	ns, no := utf8.RuneCountInString(strings.TrimSpace(src)), utf8.RuneCountInString(strings.TrimSpace(out))
	if ns == 0 {
		return ""
	}
	srcCJK := cjkShare(src) > 0.3
	outCJK := cjkShare(out) > 0.3 || cjkLangue(langue)
	lo, hi := 0.5, 2.0
	switch {
	case !srcCJK && outCJK:
		lo, hi = 0.15, 1.0
	case srcCJK && !outCJK:
		lo, hi = 1.0, 6.0
	}
	if ns < 40 {
		lo, hi = lo/2, hi*2
	}
	ratio := float64(no) / float64(ns)
	switch {
	case ratio < lo:
		return fmt.Sprintf("the translation is %.0f%% of the source's length: translate all of it", ratio*100)
	case ratio > hi:
		return fmt.Sprintf("the translation is %.1f times the source's length: translate only, add nothing", ratio)
	}
	return ""
}
