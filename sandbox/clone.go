package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// maxOverlay caps the bytes of uncommitted files NewClone copies.
const maxOverlay = 256 << 20

// Clone is a throwaway clone of a project: made with `git clone
// --no-hardlinks` (never a worktree, never hard links, so nothing done in
// it reaches the user's repository), with the project's uncommitted
// changes copied over. Close removes it.
type Clone struct {
	// Dir is the clone's absolute, symlink-free path (Policy.Clone).
	Dir string
	// tmp is the private 0700 directory holding Dir.
	tmp string
	// uid and gid own the clone when the command runs as another user.
	uid, gid int
}

// NewClone clones the git repository at src into a private temporary
// directory and copies src's modified and untracked (not ignored) files
// over it; deleted files are deleted. When miam runs as root the clone is
// made for p's unprivileged uid (Seal chowns it).
func NewClone(ctx context.Context, src string, p Policy) (*Clone, error) {
	c, _, err := newClone(ctx, src, p, nil, nil)
	return c, err
}

// PrepareClone is NewClone that also prepares argv's run in the clone
// with p (Runner.Prepare) as soon as git has made the clone's .git, so
// that bubblewrap sets up its namespaces and mounts while git checks the
// files out and the uncommitted ones are copied. The command sees the
// clone as it is when Prepared.Run lets it start: run it after the last
// WriteFile and Seal. Close the Prepared before the Clone.
func (r *Runner) PrepareClone(ctx context.Context, src string, p Policy, argv []string) (*Clone, *Prepared, error) {
	return newClone(ctx, src, p, r, argv)
}

// newClone makes the clone and, with r, prepares argv's run in it.
func newClone(ctx context.Context, src string, p Policy, r *Runner, argv []string) (*Clone, *Prepared, error) {
	src, err := filepath.Abs(src)
	if err != nil {
		return nil, nil, err
	}
	// src's uncommitted files are listed while git clones (both only
	// read src).
	listed := make(chan uncommitted, 1)
	go func() { listed <- listUncommitted(ctx, src) }()
	c, err := cloneGit(ctx, src, p)
	if err != nil {
		return nil, nil, err
	}
	var pr *Prepared
	if r != nil {
		// The sandbox's ids must reach the clone to bind it. Its group
		// gets search access only: root still owns, and alone may rename
		// in, the directory it fills the clone through until Seal.
		// The clone and its .git, which git made as the umask says (0700
		// under umask 077), must be searchable too: bubblewrap resolves
		// the binds as the sandbox's uid.
		if c.uid >= 0 {
			if err := os.Chown(c.tmp, -1, c.gid); err != nil {
				c.Close()
				return nil, nil, fmt.Errorf("sandbox: let gid %d reach the clone: %w", c.gid, err)
			}
			for _, step := range []struct {
				dir  string
				mode os.FileMode
			}{{c.tmp, 0o710}, {c.Dir, 0o755}, {filepath.Join(c.Dir, ".git"), 0o755}} {
				if err := os.Chmod(step.dir, step.mode); err != nil {
					c.Close()
					return nil, nil, fmt.Errorf("sandbox: let gid %d reach the clone: %w", c.gid, err)
				}
			}
		}
		if pr, err = r.Prepare(ctx, c.Policy(p), argv); err != nil {
			c.Close()
			return nil, nil, err
		}
	}
	fail := func(err error) (*Clone, *Prepared, error) {
		if pr != nil {
			pr.Close()
		}
		c.Close()
		return nil, nil, err
	}
	if _, err := Git(ctx, c.Dir, "checkout", "--quiet", "HEAD"); err != nil && !strings.Contains(err.Error(), "HEAD") {
		return fail(err)
	}
	if err := c.overlay(src, <-listed); err != nil {
		return fail(err)
	}
	return c, pr, nil
}

// cloneGit makes the clone's directory and .git (git clone --no-checkout)
// from the absolute src.
func cloneGit(ctx context.Context, src string, p Policy) (*Clone, error) {
	tmp, err := os.MkdirTemp("", "miam-sandbox-")
	if err != nil {
		return nil, err
	}
	if tmp, err = filepath.EvalSymlinks(tmp); err != nil {
		return nil, err
	}
	c := &Clone{Dir: filepath.Join(tmp, "clone"), tmp: tmp, uid: -1, gid: -1}
	if os.Geteuid() == 0 {
		c.uid, c.gid = p.ids()
	}
	// --template= copies no sample hooks (nothing runs them): ~2 ms less.
	if _, err := Git(ctx, "", "clone", "--quiet", "--no-hardlinks", "--no-checkout", "--template=", "--", src, c.Dir); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// uncommitted is what git ls-files said of src: NUL-separated paths.
type uncommitted struct {
	changed, deleted []byte
	err              error
}

// listUncommitted lists src's modified and untracked (not ignored) files,
// and its deleted ones.
func listUncommitted(ctx context.Context, src string) uncommitted {
	var u uncommitted
	if u.changed, u.err = runGit(ctx, src, "ls-files", "-z", "--modified", "--others", "--exclude-standard"); u.err != nil {
		return u
	}
	u.deleted, u.err = runGit(ctx, src, "ls-files", "-z", "--deleted")
	return u
}

// overlay copies src's uncommitted state, as listed, into the clone.
func (c *Clone) overlay(src string, u uncommitted) error {
	if u.err != nil {
		return u.err
	}
	changed, deleted := u.changed, u.deleted
	from, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := os.OpenRoot(c.Dir)
	if err != nil {
		return err
	}
	defer to.Close()
	gone := map[string]bool{}
	for _, rel := range splitZ(deleted) {
		gone[rel] = true
		if err := to.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	var total int64
	for _, rel := range splitZ(changed) {
		if gone[rel] || isGitPath(rel) {
			continue
		}
		fi, err := from.Lstat(rel)
		if err != nil || !fi.Mode().IsRegular() {
			continue // symlinks and special files are not carried over
		}
		if total += fi.Size(); total > maxOverlay {
			return fmt.Errorf("sandbox: the project's uncommitted files exceed %d MiB", maxOverlay>>20)
		}
		data, err := from.ReadFile(rel)
		if err != nil {
			return err
		}
		if err := writeIn(to, rel, data, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func splitZ(b []byte) []string {
	var out []string
	for _, s := range bytes.Split(b, []byte{0}) {
		if len(s) > 0 {
			out = append(out, string(s))
		}
	}
	return out
}

func isGitPath(rel string) bool {
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first == ".git"
}

// writeIn writes data at rel inside root, creating parent directories.
func writeIn(root *os.Root, rel string, data []byte, perm os.FileMode) error {
	if d := filepath.Dir(rel); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return root.WriteFile(rel, data, perm)
}

// WriteFile writes data at rel (a path relative to the clone, which it
// cannot leave) : how the staged answer is applied.
func (c *Clone) WriteFile(rel string, data []byte) error {
	if filepath.IsAbs(rel) || isGitPath(filepath.Clean(rel)) {
		return fmt.Errorf("%w: cannot write %q in the clone", ErrPolicy, rel)
	}
	root, err := os.OpenRoot(c.Dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return writeIn(root, rel, data, 0o644)
}

// Seal hands the clone to the sandbox's unprivileged uid when miam runs as
// root; call it after the last WriteFile and before Run.
func (c *Clone) Seal() error {
	if c.uid < 0 {
		return nil
	}
	// c.tmp keeps PrepareClone's group search until the uid owns it (a
	// prepared bwrap may still be making its binds, as that uid), then
	// loses it. Everything goes through a Root opened while root owned
	// c.tmp: a process of the uid on the host may swap what it owns for
	// symlinks while the walk goes on, and a Root never follows one out.
	r, err := os.OpenRoot(c.tmp)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := sealTree(r, ".", c.uid, c.gid); err != nil {
		return err
	}
	return r.Chmod(".", 0o700)
}

// sealTree gives the tree at name in r to uid:gid, children before their
// parent, so that root mostly walks directories it still owns.
func sealTree(r *os.Root, name string, uid, gid int) error {
	entries, err := fs.ReadDir(r.FS(), name)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := path.Join(name, e.Name())
		if e.IsDir() {
			if err := sealTree(r, p, uid, gid); err != nil {
				return err
			}
			continue
		}
		if err := r.Lchown(p, uid, gid); err != nil {
			return err
		}
	}
	return r.Lchown(name, uid, gid)
}

// Policy returns p with Clone set to the clone.
func (c *Clone) Policy(p Policy) Policy {
	p.Clone = c.Dir
	return p
}

// ReadFile reads an artefact the command left in the clone (a report, a
// log) through os.Root: a symlink planted to leave the clone fails, and a
// file larger than max is refused.
func (c *Clone) ReadFile(rel string, max int64) ([]byte, error) {
	root, err := os.OpenRoot(c.Dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("sandbox: %s is not a regular file", rel)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("sandbox: %s is %d bytes, more than %d", rel, fi.Size(), max)
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// Git runs a host-side git command in the clone (Git(ctx, c.Dir, …)).
func (c *Clone) Git(ctx context.Context, args ...string) ([]byte, error) {
	return Git(ctx, c.Dir, args...)
}

// Close removes the clone (os.RemoveAll follows no symlink).
func (c *Clone) Close() error {
	return os.RemoveAll(c.tmp)
}

// Git runs git on the host in dir ("" for none) with every way a planted
// repository config could run code disabled: no system or global config,
// hooks, fsmonitor, pager, external diff and textconv off, no
// terminal prompt, a minimal environment; and it refuses to run at all
// when dir's effective config defines a driver or program those fixed
// overrides cannot reach (checkRepoConfig). It returns stdout.
func Git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	if dir != "" {
		if err := checkRepoConfig(ctx, dir); err != nil {
			return nil, err
		}
	}
	return runGit(ctx, dir, args...)
}

// checkRepoConfig refuses a repository whose config could make host-side
// git run a command. Drivers are keyed by a name the worktree's
// .gitattributes picks (filter.<name>.clean/smudge/process,
// diff.<name>.command/textconv, merge.<name>.driver), so no fixed -c
// override covers them, and git 2.39 has no GIT_ATTR_SOURCE to ignore the
// worktree's attributes. Overriding each name found in the attributes
// would mean parsing every .gitattributes (worktree, index, info/,
// core.attributesFile, macros) exactly as git does; this instead reads
// the one thing a driver cannot run without, its definition, from the
// effective config as git itself sees it (git config --list, includes
// and worktree config followed, system and global config off as in
// runGit; listing runs nothing) and refuses any definition. Includes are
// refused too (they may name a file the command wrote). Keys the fixed
// overrides in runGit already neutralise (core.fsmonitor, core.hooksPath,
// core.pager, diff.external, core.sshCommand) stay allowed: the command
// line beats the repository's config. A worktree config is refused as
// well, though listed: a clone has none. A clone's config is git clone's
// own, so a refusal means something planted one.
func checkRepoConfig(ctx context.Context, dir string) error {
	out, err := runGit(ctx, dir, "config", "--list", "--null", "--includes")
	if err != nil {
		return fmt.Errorf("sandbox: read %s's git config: %w", dir, err)
	}
	for _, entry := range strings.Split(string(out), "\x00") {
		key, _, _ := strings.Cut(entry, "\n")
		if key != "" && unsafeGitKey(key) {
			return fmt.Errorf("sandbox: refusing host-side git in %s: its config sets %s, which can run a command", dir, key)
		}
	}
	return nil
}

// unsafeGitKey reports a config key that names a command git may run, or
// pulls in more config.
func unsafeGitKey(key string) bool {
	key = strings.ToLower(key) // section and variable names are case-insensitive
	for _, prefix := range []string{"filter.", "include.", "includeif.", "gpg.", "credential.", "difftool.", "mergetool."} {
		if strings.HasPrefix(key, prefix) {
			return true
		}
	}
	section, rest, _ := strings.Cut(key, ".")
	variable := rest[strings.LastIndexByte(rest, '.')+1:]
	switch {
	case section == "diff" && (variable == "command" || variable == "textconv"):
		return true
	case section == "merge" && variable == "driver":
		return true
	}
	switch key {
	case "core.worktree", "core.editor", "sequence.editor", "core.askpass", "core.gitproxy",
		"core.alternaterefscommand", "uploadpack.packobjectshook", "log.showsignature",
		"extensions.worktreeconfig":
		return true
	}
	return false
}

// runGit is Git without the config check, for the user's own repository
// (whose config is theirs to trust) and for the check itself.
func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	full := []string{
		"--no-pager",
		"-c", "core.fsmonitor=false",
		"-c", "core.hooksPath=/dev/null",
		"-c", "core.pager=cat",
		"-c", "core.sshCommand=false",
		"-c", "diff.external=",
		"-c", "protocol.allow=never",
		"-c", "protocol.file.allow=always",
		"-c", "safe.directory=*",
	}
	if dir != "" {
		full = append(full, "-C", dir)
	}
	full = append(full, args...)
	if len(args) > 0 && (args[0] == "diff" || args[0] == "log" || args[0] == "show") {
		full = append(full[:len(full)-len(args)+1], append([]string{"--no-ext-diff", "--no-textconv"}, args[1:]...)...)
	}
	cmd := exec.CommandContext(ctx, "/usr/bin/git", full...)
	cmd.Env = []string{
		"PATH=/usr/bin:/bin", "HOME=/nonexistent", "LANG=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_ATTR_NOSYSTEM=1",
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
