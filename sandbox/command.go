package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Spec is everything Command needs to build the launcher; it reads nothing
// from the machine.
type Spec struct {
	// Backend is BackendBwrap, BackendNative, BackendLandlock or
	// BackendNone.
	Backend string
	// Bwrap is the bwrap binary (BwrapPath).
	Bwrap string
	// Prlimit, when set, wraps the launcher so that it and the command
	// inherit the rlimits.
	Prlimit string
	// Rlimits says how the bubblewrap backend applies the rlimits:
	// rlimitsPtrace ("", the default) or rlimitsPrlimit (Probe.Rlimits).
	Rlimits string
	// Policy is the run's policy; an empty Clone binds no clone (probes).
	Policy Policy
	// Argv is the command, argv[0] an absolute host path inside a
	// read-only mount.
	Argv []string
	// Env is the command's environment (Environ).
	Env []string
	// Root is set when miam runs as root: the launcher then runs as
	// Policy's unprivileged uid and gid.
	Root bool
	// SeccompFD, when above 2, is the launcher's descriptor from which
	// bwrap reads the seccomp filter (Run passes it in ExtraFiles).
	SeccompFD int
	// BlockFD, when above 2, is the launcher's descriptor on which bwrap
	// waits for a byte before it execs the command (Runner.Prepare).
	BlockFD int
}

// launcherEnv is the whole environment of the launcher process itself:
// with --unshare-pid it becomes /proc/1/environ inside (SANDBOX.md E2).
var launcherEnv = []string{"PATH=/usr/bin:/bin"}

// Command builds the launcher of s: bwrap with the hardened arguments of
// SANDBOX.md §3.4, miam's own helper for the native and Landlock backends
// (this program, which calls Init; its job, on descriptor 3, is
// Spec.job), or for BackendNone the bare
// command. It is pure; Run starts it.
func Command(s Spec) *exec.Cmd {
	switch s.Backend {
	case BackendNative, BackendLandlock:
		return helperCommand(s)
	}
	var argv []string
	if s.Prlimit != "" {
		argv = append(argv, s.Prlimit)
		argv = append(argv, rlimitArgs(s.Policy)...)
		argv = append(argv, "--")
	}
	dir := "/"
	env := launcherEnv
	switch s.Backend {
	case BackendNone:
		argv = append(argv, s.Argv...)
		env = s.Env
		if s.Policy.Clone != "" {
			dir = s.Policy.Clone
		}
	default:
		argv = append(argv, s.Bwrap)
		argv = append(argv, bwrapArgs(s)...)
	}
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Env: env, Dir: dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.Root {
		uid, gid := s.Policy.ids()
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	}
	return cmd
}

// rlimitArgs are prlimit's options for p.
func rlimitArgs(p Policy) []string {
	l := p.Limits.withDefaults(p.timeout())
	args := []string{
		"--core=0",
		"--nofile=" + strconv.FormatInt(l.NoFile, 10),
		"--fsize=" + strconv.FormatInt(l.FileSize, 10),
		"--cpu=" + strconv.FormatInt(int64(l.CPU.Seconds()+0.999), 10),
		"--nproc=" + strconv.FormatInt(l.Procs, 10),
	}
	if l.AddressSpace > 0 {
		args = append(args, "--as="+strconv.FormatInt(l.AddressSpace, 10))
	}
	return args
}

// bwrapArgs are the hardened bwrap arguments: every namespace new (an empty
// network namespace), no capabilities, no nested user namespaces, an
// allow-listed read-only root, a read-only /dev (bwrap's --dev is a tmpfs
// without a size cap, which --size cannot take), a private size-capped
// /tmp and /dev/shm, the clone read-write with its .git read-only, and the
// environment built from nothing.
func bwrapArgs(s Spec) []string {
	p := s.Policy
	size := strconv.FormatInt(p.Limits.withDefaults(p.timeout()).TmpSize, 10)
	a := []string{
		"--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
		"--disable-userns", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv",
	}
	for _, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		a = append(a, "--setenv", k, v)
	}
	a = append(a,
		"--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
		"--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
		"--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
		"--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
		"--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", "/dev/shm",
		"--dir", "/tmp/home",
	)
	for _, ro := range p.ReadOnly {
		a = append(a, "--ro-bind", ro, ro)
	}
	chdir := "/"
	if p.Clone != "" {
		a = append(a, "--bind", p.Clone, p.Clone, "--ro-bind", filepath.Join(p.Clone, ".git"), filepath.Join(p.Clone, ".git"))
		chdir = p.Clone
	}
	a = append(a, "--remount-ro", "/", "--chdir", chdir)
	if s.SeccompFD > 2 {
		a = append(a, "--seccomp", strconv.Itoa(s.SeccompFD))
	}
	if s.BlockFD > 2 {
		a = append(a, "--block-fd", strconv.Itoa(s.BlockFD))
	}
	a = append(a, "--")
	return append(a, s.Argv...)
}

// helperCommand is the launcher of the native and Landlock backends: this
// program re-executed as a helper, with an empty environment (it is
// /proc/1/environ of a native sandbox, E2). The native helper gets the new
// namespaces; the Landlock one is never root (its probe refuses root) and
// gets SIGTERM, not SIGKILL, when miam's thread dies, so that it kills
// the command's tree first.
func helperCommand(s Spec) *exec.Cmd {
	cmd := &exec.Cmd{Path: selfExe, Args: []string{helperLandlock}, Env: []string{}, Dir: "/"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if s.Backend == BackendNative {
		uid, gid := os.Getuid(), os.Getgid()
		if s.Root {
			uid, gid = s.Policy.ids()
		}
		cmd.Args[0] = helperNative
		cmd.SysProcAttr = nativeAttr(uid, gid)
	}
	return cmd
}

// job is what the helper of s is told (Run adds Tmp and LandlockABI).
func (s Spec) job() job {
	p := s.Policy
	dir := "/"
	if p.Clone != "" {
		dir = p.Clone
	}
	return job{
		Backend:  s.Backend,
		Argv:     s.Argv,
		Env:      s.Env,
		Dir:      dir,
		Clone:    p.Clone,
		ReadOnly: p.ReadOnly,
		TmpSize:  p.Limits.withDefaults(p.timeout()).TmpSize,
		Rlimits:  rlimitsOf(p),
	}
}
