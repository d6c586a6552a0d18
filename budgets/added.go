package budgets

import (
	"bytes"
	"strings"
)

// Added counts the lines of after that are not in before, each classified
// in the context of the whole of after (so a line inside a new docstring is
// doc, not code). Lines are compared as a multiset of whitespace-trimmed
// texts: moving or re-indenting a line adds nothing, and a text found k more
// times in after than in before contributes its last k occurrences. A nil
// before (a new file) adds all of after.
//
// This is not a diff: it is linear, never worse than a diff for a budget
// (a diff can only find fewer common lines), and cannot be fooled by
// reordering into counting less than was written.
func Added(lang Lang, before, after []byte) Counts {
	var c Counts
	if len(after) == 0 {
		return c
	}
	seen := make(map[string]int)
	forEachLine(before, func(_ int, line []byte) {
		seen[string(bytes.TrimSpace(line))]++
	})
	// A line is new once its text has been met more often in after than
	// the before count allows: the first before[t] occurrences are old.
	var rows []int
	forEachLine(after, func(row int, line []byte) {
		t := bytes.TrimSpace(line)
		if n := seen[string(t)]; n > 0 {
			seen[string(t)] = n - 1
			return
		}
		rows = append(rows, row)
	})
	if len(rows) == 0 {
		return c
	}
	kinds := Classify(lang, after)
	for _, r := range rows {
		if r < len(kinds) {
			c.add(kinds[r])
		}
	}
	return c
}

// forEachLine calls f with each physical line of src and its 0-based row,
// without the newline.
func forEachLine(src []byte, f func(row int, line []byte)) {
	for row := 0; len(src) > 0; row++ {
		i := bytes.IndexByte(src, '\n')
		if i < 0 {
			f(row, src)
			return
		}
		f(row, src[:i])
		src = src[i+1:]
	}
}

// Edit is one string replacement of Claude Code's Edit or MultiEdit tool.
type Edit struct {
	Old, New   string
	ReplaceAll bool
}

// ApplyEdit applies one edit to content the way Claude Code's Edit tool
// does, as far as counting needs: with replaceAll every occurrence of old is
// replaced, otherwise the first one (Claude Code refuses an ambiguous edit;
// a refused edit writes nothing, so guessing the first costs nothing). An
// empty old creates a file and so applies only to empty content. ok is false
// when the edit would fail: old not found, or old empty on a non-empty file.
func ApplyEdit(content, old, new string, replaceAll bool) (string, bool) {
	if old == "" {
		if content != "" {
			return content, false
		}
		return new, true
	}
	if !strings.Contains(content, old) {
		return content, false
	}
	if replaceAll {
		return strings.ReplaceAll(content, old, new), true
	}
	return strings.Replace(content, old, new, 1), true
}

// EditAdded counts the lines an Edit or MultiEdit adds to the file whose
// current bytes are onDisk: the edits are applied in order and the result
// compared with the file as it is, so a replace_all adds its new lines once
// per occurrence. When the file does not exist or an edit does not apply
// (the tool will fail or the file changed under us), it falls back to the
// edits alone: the Old strings against the New strings.
func EditAdded(lang Lang, onDisk []byte, exists bool, edits []Edit) Counts {
	if exists {
		content := string(onDisk)
		ok := true
		for _, e := range edits {
			if content, ok = ApplyEdit(content, e.Old, e.New, e.ReplaceAll); !ok {
				break
			}
		}
		if ok {
			return Added(lang, onDisk, []byte(content))
		}
	}
	var olds, news strings.Builder
	for _, e := range edits {
		appendLines(&olds, e.Old)
		appendLines(&news, e.New)
	}
	return Added(lang, []byte(olds.String()), []byte(news.String()))
}

// appendLines adds s to b as whole lines, so that edits never share a line.
func appendLines(b *strings.Builder, s string) {
	if s == "" {
		return
	}
	b.WriteString(s)
	if !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
}
