package hooks

import "strings"

// git apply writes the patch's files; other git commands write none that
// count (checkout and stash restore lines already counted).
func (e *shellEval) git(args []string, c *shellCtx, stdin shellText) shellText {
	root := e.env.Project
	for len(args) > 1 && (args[0] == "-C" || args[0] == "-c") {
		if args[0] == "-C" {
			root = e.abs(c, args[1])
		}
		args = args[2:]
	}
	if len(args) == 0 || args[0] != "apply" {
		return unknown
	}
	reverse := false
	var patches []string
	for _, a := range args[1:] {
		switch {
		case a == "--check" || a == "--stat" || a == "--numstat" || a == "--summary" || a == "--cached":
			return unknown
		case a == "-R" || a == "--reverse":
			reverse = true
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			patches = append(patches, a)
		}
	}
	rc := *c
	if root != "" {
		rc.dir = root
	}
	if len(patches) == 0 || contains(patches, "-") {
		e.applyPatch(stdin, &rc, 1, reverse, "git apply")
	}
	for _, p := range patches {
		if p != "-" {
			e.applyPatch(e.read(c, p), &rc, 1, reverse, "git apply")
		}
	}
	return unknown
}

// patch -p N < file, or patch -i file.
func (e *shellEval) patch(args []string, c *shellCtx, stdin shellText) {
	strip, reverse := 0, false
	in := stdin
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "-p"):
			v := strings.TrimPrefix(a, "-p")
			if v == "" && i+1 < len(args) {
				i++
				v = args[i]
			}
			strip = atoi(v)
		case a == "-R" || a == "--reverse":
			reverse = true
		case a == "-i" || a == "--input":
			if i+1 < len(args) {
				i++
				in = e.read(c, args[i])
			}
		}
	}
	e.applyPatch(in, c, strip, reverse, "patch")
}

func atoi(s string) int {
	n := 0
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			return n
		}
		n = n*10 + int(ch-'0')
	}
	return n
}

// applyPatch applies a unified diff to the files it names, hunk by hunk as
// text replacements; a hunk that does not apply adds its + lines.
func (e *shellEval) applyPatch(p shellText, c *shellCtx, strip int, reverse bool, how string) {
	if !p.ok {
		return
	}
	for _, fp := range parsePatch(p.s, reverse) {
		name := stripPath(fp.name, strip)
		if name == "" {
			continue
		}
		f := e.file(e.abs(c, name))
		if !f.known {
			continue
		}
		for _, h := range fp.hunks {
			if h.old == "" && f.content == "" {
				f.content = h.new
				continue
			}
			next, ok := applyHunk(f.content, h.old, h.new)
			if !ok {
				f.ref += h.old
				next = f.content + h.new
			}
			f.content = next
		}
		if c.loop {
			f.known = false
		}
		if !contains(f.how, how) {
			f.how = append(f.how, how)
		}
	}
}

func applyHunk(content, old, new string) (string, bool) {
	if old == "" || !strings.Contains(content, old) {
		return content, false
	}
	return strings.Replace(content, old, new, 1), true
}

func stripPath(p string, n int) string {
	p = strings.TrimSpace(p)
	if i := strings.IndexByte(p, '\t'); i >= 0 {
		p = p[:i]
	}
	if p == "/dev/null" {
		return ""
	}
	for ; n > 0; n-- {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return ""
		}
		p = p[i+1:]
	}
	return p
}

type patchFile struct {
	name  string
	hunks []patchHunk
}

type patchHunk struct{ old, new string }

// parsePatch reads the files and hunks of a unified diff.
func parsePatch(s string, reverse bool) []patchFile {
	var files []patchFile
	var cur *patchFile
	var h *patchHunk
	oldName := ""
	for _, line := range strings.SplitAfter(s, "\n") {
		switch {
		case strings.HasPrefix(line, "--- "):
			oldName = strings.TrimSpace(line[4:])
			h = nil
		case strings.HasPrefix(line, "+++ "):
			name := strings.TrimSpace(line[4:])
			if reverse || name == "/dev/null" {
				name = oldName
			}
			files = append(files, patchFile{name: name})
			cur, h = &files[len(files)-1], nil
		case strings.HasPrefix(line, "@@") && cur != nil:
			cur.hunks = append(cur.hunks, patchHunk{})
			h = &cur.hunks[len(cur.hunks)-1]
		case h == nil:
		case strings.HasPrefix(line, "+"):
			if reverse {
				h.old += line[1:]
			} else {
				h.new += line[1:]
			}
		case strings.HasPrefix(line, "-"):
			if reverse {
				h.new += line[1:]
			} else {
				h.old += line[1:]
			}
		case strings.HasPrefix(line, " "):
			h.old += line[1:]
			h.new += line[1:]
		case strings.TrimRight(line, "\r\n") == "":
			h.old += "\n"
			h.new += "\n"
		}
	}
	return files
}
