package controls

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"miam/budgets"
	"miam/delegate/wire"
)

// Perimetre is the `perimetre` control (SPEC §4): the files the answer
// would change — `sortie`, plus every other file the answer claims to
// write (AnswerFiles) — must lie within `perimetre` (paths, globs or
// directories ending in /); without a perimetre, within `sortie` alone.
// A claimed bare file name matches an allowed path of that name. With
// neither perimetre nor sortie there is nothing to compare: skipped.
type Perimetre struct{}

// Name returns "perimetre".
func (Perimetre) Name() string { return NamePerimetre }

// Cost returns CostPure.
func (Perimetre) Cost() Cost { return CostPure }

// Check runs the control.
func (Perimetre) Check(_ context.Context, in Input) wire.Control {
	sortie := cleanPath(stripRange(in.Request.Sortie))
	allowed := slices.Clone(in.Request.Perimetre)
	if len(allowed) == 0 {
		if sortie == "" {
			return wire.Control{Nom: NamePerimetre, OK: true, Message: "no perimetre nor sortie to compare with: skipped"}
		}
		allowed = []string{sortie}
	}
	changed := AnswerFiles(in.Raw)
	if sortie != "" && !slices.Contains(changed, sortie) {
		changed = append([]string{sortie}, changed...)
	}
	var outside []string
	for _, f := range changed {
		if !inPerimetre(f, allowed) && !slices.Contains(outside, f) {
			outside = append(outside, f)
		}
	}
	if len(outside) == 0 {
		return wire.Control{Nom: NamePerimetre, OK: true}
	}
	return result(NamePerimetre, []string{fmt.Sprintf("the answer writes %s, outside the perimetre (%s): change only those files, in one artefact",
		strings.Join(outside, ", "), strings.Join(allowed, ", "))})
}

// inPerimetre reports whether file f is allowed by one of the entries.
func inPerimetre(f string, allowed []string) bool {
	for _, a := range allowed {
		a = cleanPath(a)
		switch {
		case a == f, budgets.Match(a, f):
			return true
		case strings.HasSuffix(a, "/") && strings.HasPrefix(f, a):
			return true
		case !strings.Contains(f, "/") && path.Base(a) == f:
			return true // a bare name the answer gave for an allowed file
		}
	}
	return false
}

// cleanPath normalises a path as a request or an answer spells it.
func cleanPath(p string) string {
	p = strings.TrimSpace(strings.Trim(strings.TrimSpace(p), "`*\"'"))
	dir := strings.HasSuffix(p, "/")
	p = strings.TrimPrefix(p, "./")
	if p == "" {
		return ""
	}
	p = path.Clean(p)
	if dir {
		p += "/"
	}
	return p
}

// fileExts are the extensions a claimed file name may have.
var fileExts = map[string]bool{
	"py": true, "pyi": true, "go": true, "js": true, "mjs": true, "cjs": true, "jsx": true, "ts": true, "tsx": true,
	"rs": true, "java": true, "kt": true, "c": true, "h": true, "cc": true, "cpp": true, "hpp": true, "cs": true,
	"rb": true, "sh": true, "bash": true, "json": true, "yaml": true, "yml": true, "toml": true, "md": true,
	"txt": true, "cfg": true, "ini": true, "html": true, "css": true, "sql": true, "mod": true, "xml": true,
	"swift": true, "php": true, "lua": true, "vue": true, "svelte": true, "scss": true, "env": true, "lock": true,
}

// pathToken is a relative file path with an extension.
var pathToken = regexp.MustCompile(`^(?:\./)?[A-Za-z0-9_@.+-][A-Za-z0-9_@.+/-]*\.([A-Za-z0-9]{1,6})$`)

// asPath returns s as a file path when it looks like one.
func asPath(s string) string {
	s = strings.Trim(strings.TrimSpace(s), "`*_\"'():,;")
	m := pathToken.FindStringSubmatch(s)
	if m == nil || !fileExts[strings.ToLower(m[1])] || strings.Contains(s, "://") || strings.Contains(s, "..") {
		return ""
	}
	return cleanPath(s)
}

// headerLine matches a line that only names a file: "**src/x.py**",
// "### `x.py`", "File: x.py", "Update `src/x.py`:".
var headerLine = regexp.MustCompile("(?i)^(?:#{1,6}\\s*)?(?:[*_]{1,2})?(?:(?:file(?:name)?|fichier|path|chemin|in|dans|update|updated|create|new file|modify|modified|edit|add)\\s*:?\\s+)?(?:[*_]{1,2})?`?([^`*\\s]+)`?(?:[*_]{1,2})?\\s*:?\\s*(?:\\((?:new|updated|modified)\\))?\\s*:?$")

// firstLineComment matches a fence body's first line naming its file:
// "# src/x.py", "// file: x.go", "/* x.c */", "<!-- x.html -->".
var firstLineComment = regexp.MustCompile(`(?i)^(?:#|//|--|/\*|<!--)\s*(?:file(?:name)?|fichier|path)?\s*:?\s*(\S+?)\s*(?:\*/|-->)?$`)

// diffHeader matches the lines of a diff or patch that name the file.
var diffHeader = regexp.MustCompile(`^(?:\+\+\+ (?:b/)?(\S+)|diff --git a/\S+ b/(\S+)|\*\*\* (?:Update|Add) File: (\S+))`)

// AnswerFiles lists the files a raw answer claims to write, in order, once
// each: fences whose info string names a file ("```python title=x.py",
// "```src/x.py"), a line naming a file right above a fence, a fence whose
// first line is a comment naming a file, and diff headers.
func AnswerFiles(raw string) []string {
	text := strings.ReplaceAll(raw, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	var out []string
	add := func(p string) {
		if p != "" && p != "/dev/null" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	inFence := false
	var char byte
	var n int
	for i := 0; i < len(lines); i++ {
		ln := lines[i]
		if m := diffHeader.FindStringSubmatch(ln); m != nil && !strings.HasPrefix(ln, "+++ /dev/null") {
			add(asPath(m[1] + m[2] + m[3]))
			continue
		}
		if inFence {
			if closesFence(ln, char, n) {
				inFence = false
			}
			continue
		}
		_, c, k, info, ok := openFence(ln)
		if !ok {
			continue
		}
		inFence, char, n = true, c, k
		if p := fenceInfoPath(info); p != "" {
			add(p)
		} else if p := lineAbove(lines, i); p != "" {
			add(p)
		} else if i+1 < len(lines) {
			if m := firstLineComment.FindStringSubmatch(strings.TrimSpace(lines[i+1])); m != nil {
				add(asPath(m[1]))
			}
		}
	}
	return out
}

// fenceInfoPath reads a file name from a fence's info string.
func fenceInfoPath(info string) string {
	for _, f := range strings.Fields(info) {
		if k, v, ok := strings.Cut(f, "="); ok {
			switch strings.ToLower(k) {
			case "title", "file", "filename", "path", "name":
				if p := asPath(strings.Trim(v, `"'`)); p != "" {
					return p
				}
			}
			continue
		}
		if _, v, ok := strings.Cut(f, ":"); ok { // ```python:src/x.py
			if p := asPath(v); p != "" {
				return p
			}
		}
		if p := asPath(strings.Trim(f, "{}")); p != "" {
			return p
		}
	}
	return ""
}

// lineAbove reads a file name from the last non-blank line above a fence,
// when that line only names a file.
func lineAbove(lines []string, i int) string {
	for j := i - 1; j >= 0 && j >= i-2; j-- {
		t := strings.TrimSpace(lines[j])
		if t == "" {
			continue
		}
		if m := headerLine.FindStringSubmatch(t); m != nil {
			return asPath(m[1])
		}
		return ""
	}
	return ""
}
