package controls

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"miam/delegate/wire"
)

// Citations is the `citations` control (SPEC §4), on extractions and
// summaries: every number, identifier and quoted string of the answer
// occurs in the sources — the joined files (and their names) and the
// consigne. Comparisons are normalised: digit grouping and the decimal
// comma do not count (1 234,5 = 1,234.5), nor do the case and separators
// of identifiers (max_retries = MaxRetries), nor blanks and typographic
// quotes in quoted strings.
//
// In prose, the identifiers checked are the words shaped like code
// (snake_case, camelCase, letters with digits) and every word of an inline
// `code span`; numbers are those standing alone (not list markers, not
// part of a word like sha256); quoted strings are those in "…", “…” or
// «…». Fenced code blocks are not checked. A JSON answer's string values
// are checked as quotes when found verbatim, else as prose, and its
// numbers as numbers; keys are the schema's, not checked.
type Citations struct{}

// Name returns "citations".
func (Citations) Name() string { return NameCitations }

// Cost returns CostPure.
func (Citations) Cost() Cost { return CostPure }

// Check runs the control.
func (Citations) Check(_ context.Context, in Input) wire.Control {
	if len(in.Files) == 0 {
		return wire.Control{Nom: NameCitations, OK: true, Message: "no joined source to cite: skipped"}
	}
	src := citationSources(in)
	var missing []string
	if in.Kind() == KindJSON {
		var v any
		if json.Unmarshal([]byte(in.Code), &v) != nil {
			return wire.Control{Nom: NameCitations, OK: true, Message: "invalid JSON: left to syntaxe"}
		}
		missing = src.checkJSON(v, nil)
	} else {
		missing = src.checkProse(in.Code)
	}
	if len(missing) == 0 {
		return wire.Control{Nom: NameCitations, OK: true}
	}
	n := len(missing)
	if n > 6 {
		missing = append(missing[:6], fmt.Sprintf("and %d more", n-6))
	}
	return result(NameCitations, []string{"not found in the sources: " + strings.Join(missing, ", ") + ": cite the sources exactly, or leave it out"})
}

// sources is the text an answer may cite, indexed.
type sources struct {
	text    string // normText of everything
	numbers map[string]bool
	idents  map[string]bool
}

func citationSources(in Input) sources {
	var parts []string
	for p, b := range in.Files {
		parts = append(parts, p, path.Base(p), string(b))
	}
	parts = append(parts, in.Request.Consigne)
	all := strings.Join(parts, "\n")
	return sources{text: normText(all), numbers: numberSet(all), idents: identSet(all)}
}

// inlineCode matches a `code span`.
var inlineCode = regexp.MustCompile("`([^`\n]+)`")

// quotedText matches "…", “…” and «…» quotes.
var quotedText = regexp.MustCompile(`"([^"\n]{2,200})"|“([^”\n]{2,200})”|«\s*([^»\n]{2,200}?)\s*»`)

// listMarker matches a line's list number or heading number ("1.", "2)").
var listMarker = regexp.MustCompile(`(?m)^\s*(?:#+\s*)?\d+[.)]\s`)

// checkProse lists what a text answer cites that the sources lack.
func (s sources) checkProse(text string) []string {
	var missing []string
	add := func(m string) {
		if !slices.Contains(missing, m) {
			missing = append(missing, m)
		}
	}
	text = dropFences(text)
	text = listMarker.ReplaceAllStringFunc(text, func(m string) string { return strings.Repeat(" ", len(m)) })
	for _, m := range quotedText.FindAllStringSubmatch(text, -1) {
		q := strings.TrimSpace(m[1] + m[2] + m[3])
		if q != "" && !strings.Contains(s.text, normText(q)) && !s.wordsCited(q) {
			add(`"` + short(q) + `"`)
		}
	}
	for _, m := range inlineCode.FindAllStringSubmatch(text, -1) {
		if strings.Contains(s.text, normText(m[1])) {
			continue
		}
		for _, w := range words(m[1]) {
			if len(w) > 1 && !isNumeric(w) && !s.idents[identKey(w)] {
				add("`" + w + "`")
			}
		}
	}
	rest := inlineCode.ReplaceAllString(text, " ")
	for _, f := range strings.Fields(rest) {
		for _, part := range strings.Split(strings.Trim(f, ".,;:!?()[]{}\"'«»“”"), ".") {
			for _, w := range words(part) {
				if codeShaped(w) && !s.idents[identKey(w)] {
					add("`" + w + "`")
				}
			}
		}
	}
	for _, n := range scanNumbers(rest, true) {
		if !s.hasNumber(n.text) {
			add(n.text)
		}
	}
	return missing
}

// wordsCited reports whether every word of q is in the sources: a quote
// that reorders the sources' words is a loose quote, not an invention.
func (s sources) wordsCited(q string) bool {
	ws := words(q)
	for _, w := range ws {
		if !s.idents[identKey(w)] {
			return false
		}
	}
	return len(ws) > 0 && len(ws) <= 3
}

func isNumeric(w string) bool {
	return strings.IndexFunc(w, func(r rune) bool { return !isDigit(r) }) < 0
}

// hasNumber reports whether a number of the answer is in the sources.
func (s sources) hasNumber(tok string) bool {
	for _, v := range numberValues(tok) {
		if s.numbers[v] {
			return true
		}
	}
	return false
}

// checkJSON lists what a JSON answer's values cite that the sources lack.
func (s sources) checkJSON(v any, missing []string) []string {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			missing = s.checkJSON(v[k], missing)
		}
	case []any:
		for _, x := range v {
			missing = s.checkJSON(x, missing)
		}
	case string:
		if strings.Contains(s.text, normText(v)) {
			return missing
		}
		for _, m := range s.checkProse(v) {
			if !slices.Contains(missing, m) {
				missing = append(missing, m)
			}
		}
	case float64:
		tok := strconv.FormatFloat(v, 'f', -1, 64)
		if !s.hasNumber(strings.TrimPrefix(tok, "-")) && !slices.Contains(missing, tok) {
			missing = append(missing, tok)
		}
	}
	return missing
}

// dropFences removes fenced code blocks from a text.
func dropFences(text string) string {
	lines := strings.Split(text, "\n")
	var out []string
	in := false
	var char byte
	var n int
	for _, ln := range lines {
		if in {
			if closesFence(ln, char, n) {
				in = false
			}
			continue
		}
		if _, c, k, _, ok := openFence(ln); ok {
			in, char, n = true, c, k
			continue
		}
		out = append(out, ln)
	}
	return strings.Join(out, "\n")
}
