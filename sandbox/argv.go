package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/shlex"
)

// shellMeta are the characters refused in a declared command: there is no
// shell, so they could only be a mistake or an attack.
const shellMeta = ";|&$`><()\n\r\\*?{}~#!\x00"

// Parse turns a declared command line into argv, spawning nothing: it
// refuses shell metacharacters, splits with google/shlex, requires argv[0]
// to be a bare name in allowed (the project's sandbox.commandes) and
// resolves it on the trusted PATH; argv[0] of the result is that absolute
// host path, which lies under /usr. Every refusal wraps ErrNotAllowed.
func Parse(line string, allowed []string) ([]string, error) {
	if i := strings.IndexAny(line, shellMeta); i >= 0 {
		return nil, fmt.Errorf("%w: %q contains the shell character %q; commands run without a shell", ErrNotAllowed, line, line[i])
	}
	argv, err := shlex.Split(line)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrNotAllowed, line, err)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: empty command", ErrNotAllowed)
	}
	name := argv[0]
	if strings.ContainsRune(name, '/') || name == "." || name == ".." {
		return nil, fmt.Errorf("%w: %q is a path; declare a command name found on the system PATH", ErrNotAllowed, name)
	}
	if !slices.Contains(allowed, name) {
		list := strings.Join(allowed, ", ")
		if list == "" {
			list = "none yet"
		}
		return nil, fmt.Errorf("%w: %q is not in sandbox.commandes of .miam/config.yaml (allowed: %s)", ErrNotAllowed, name, list)
	}
	path, err := resolve(name)
	if err != nil {
		return nil, err
	}
	argv[0] = path
	return argv, nil
}

// resolve finds name on the trusted PATH: an executable regular file whose
// real path lies under a read-only system root.
func resolve(name string) (string, error) {
	for _, dir := range trustedPath {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		if err := checkTrusted(p, nil); err != nil {
			return "", err
		}
		return p, nil
	}
	return "", fmt.Errorf("%w: %q is not found on the trusted PATH %s", ErrNotAllowed, name, strings.Join(trustedPath, ":"))
}

// checkTrusted requires path (and its real path) to be absolute and under
// /usr or one of the read-only roots extra.
func checkTrusted(path string, extra []string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%w: %q is not an absolute path", ErrNotAllowed, path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrNotAllowed, path, err)
	}
	roots := append([]string{"/usr"}, extra...)
	for _, p := range []string{filepath.Clean(path), real} {
		if strings.HasPrefix(p, "/bin/") || strings.HasPrefix(p, "/sbin/") {
			p = "/usr" + p // merged /usr: the sandbox links /bin to usr/bin
		}
		if !slices.ContainsFunc(roots, func(r string) bool { return within(p, r) }) {
			return fmt.Errorf("%w: %q is outside the read-only system directories", ErrNotAllowed, path)
		}
	}
	return nil
}

// within tells whether p is root or below it.
func within(p, root string) bool {
	root = filepath.Clean(root)
	return p == root || strings.HasPrefix(p, root+"/")
}
