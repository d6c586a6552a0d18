package delegate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"miam/delegate/wire"
)

// ErrOutsideProject is returned for an output path that would land outside
// the project: absolute, with "..", or through a symlink leaving it.
var ErrOutsideProject = errors.New("output path outside the project")

// cleanRel checks that p is a clean project-relative path.
func cleanRel(p string) (string, error) {
	if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("%w: %q is not relative", ErrOutsideProject, p)
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == ".." || strings.HasPrefix(c, "../") || c == "." {
		return "", fmt.Errorf("%w: %q", ErrOutsideProject, p)
	}
	return c, nil
}

// WriteOutput writes data at rel inside project, atomically (a temporary
// file beside it, then rename), through os.Root so that neither ".." nor a
// symlinked directory can carry the write outside the project. It returns
// the line diff against what was there.
func WriteOutput(project, rel string, data []byte) (wire.Diff, error) {
	rel, err := cleanRel(rel)
	if err != nil {
		return wire.Diff{}, err
	}
	root, err := os.OpenRoot(project)
	if err != nil {
		return wire.Diff{}, fmt.Errorf("open project %s: %w", project, err)
	}
	defer root.Close()
	old, err := root.ReadFile(rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wire.Diff{}, fmt.Errorf("%w: %s: %v", ErrOutsideProject, rel, err)
	}
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return wire.Diff{}, fmt.Errorf("%w: %s: %v", ErrOutsideProject, rel, err)
		}
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := path.Join(path.Dir(rel), "."+path.Base(rel)+".miam-"+hex.EncodeToString(suffix[:])+".tmp")
	if err := root.WriteFile(tmp, data, 0o644); err != nil {
		return wire.Diff{}, fmt.Errorf("%w: %s: %v", ErrOutsideProject, rel, err)
	}
	if err := root.Rename(tmp, rel); err != nil {
		_ = root.Remove(tmp)
		return wire.Diff{}, fmt.Errorf("write %s: %w", rel, err)
	}
	added, removed := lineDiff(old, data)
	return wire.Diff{Files: []string{rel}, Added: added, Removed: removed}, nil
}

// lineDiff counts lines added and removed, as multisets of lines: enough
// for a summary, and linear.
func lineDiff(before, after []byte) (added, removed int) {
	count := map[string]int{}
	for _, l := range splitLines(before) {
		count[l]++
	}
	for _, l := range splitLines(after) {
		if count[l] > 0 {
			count[l]--
		} else {
			added++
		}
	}
	for _, n := range count {
		removed += n
	}
	return added, removed
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// readRange reads a joined file, "path" or "path:10-40", inside the project.
func readRange(root *os.Root, spec string) (name string, text string, err error) {
	name, lines, _ := strings.Cut(spec, ":")
	rel, err := cleanRel(name)
	if err != nil {
		return name, "", err
	}
	data, err := root.ReadFile(rel)
	if err != nil {
		return name, "", fmt.Errorf("read %s: %w", rel, err)
	}
	if lines == "" {
		return rel, string(data), nil
	}
	var from, to int
	if _, err := fmt.Sscanf(lines, "%d-%d", &from, &to); err != nil || from < 1 || to < from {
		return rel, "", fmt.Errorf("bad line range %q in %q", lines, spec)
	}
	all := bytes.SplitAfter(data, []byte("\n"))
	if from > len(all) {
		return rel, "", nil
	}
	to = min(to, len(all))
	return rel, string(bytes.Join(all[from-1:to], nil)), nil
}

// LoadFiles reads joined files ("path" or "path:10-40") inside the project,
// for the controls; the key is the spec as given.
func LoadFiles(_ context.Context, project string, specs []string) (map[string][]byte, error) {
	root, err := os.OpenRoot(project)
	if err != nil {
		return nil, fmt.Errorf("open project: %w", err)
	}
	defer root.Close()
	out := make(map[string][]byte, len(specs))
	for _, s := range specs {
		_, text, err := readRange(root, s)
		if err != nil {
			return nil, err
		}
		out[s] = []byte(text)
	}
	return out, nil
}
