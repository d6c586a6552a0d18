package sandbox

import (
	"errors"
	"time"
)

// Errors callers branch on.
var (
	// ErrNoIsolation: no backend isolates on this machine and the user did
	// not opt out of isolation. The error is a *NoIsolationError naming
	// every failed probe.
	ErrNoIsolation = errors.New("sandbox: no isolation backend is available")
	// ErrNotAllowed: the command is refused before anything is spawned
	// (shell syntax, not in the allow-list, not on the trusted PATH).
	ErrNotAllowed = errors.New("sandbox: command not allowed")
	// ErrSecretEnv: an environment variable whose name looks like a secret
	// was asked for; it is refused even when allow-listed.
	ErrSecretEnv = errors.New("sandbox: secret-looking environment variable refused")
	// ErrPolicy: the policy itself is unusable (relative clone path, …).
	ErrPolicy = errors.New("sandbox: invalid policy")
)

// Backend names.
const (
	BackendAuto     = ""         // the first backend that works
	BackendBwrap    = "bwrap"    // bubblewrap
	BackendNative   = "native"   // Go namespaces: miam's own helper (Init)
	BackendLandlock = "landlock" // Landlock + seccomp, never as root
	BackendNone     = "none"     // no isolation: only with Policy.AllowUnsandboxed
)

// Limits bound the command's resources. Zero fields mean the defaults of
// DefaultLimits.
type Limits struct {
	// FileSize is RLIMIT_FSIZE in bytes.
	FileSize int64
	// NoFile is RLIMIT_NOFILE.
	NoFile int64
	// CPU is RLIMIT_CPU; zero means the timeout plus a margin.
	CPU time.Duration
	// AddressSpace is RLIMIT_AS in bytes; zero means unlimited (it breaks
	// JVMs, ASan and the Go race detector, so it is per language).
	AddressSpace int64
	// Procs is RLIMIT_NPROC, effective because the command runs as an
	// unprivileged uid when miam runs as root.
	Procs int64
	// TmpSize caps the private /tmp and /dev/shm (tmpfs) in bytes.
	TmpSize int64
}

// DefaultLimits are the limits a zero Limits stands for.
var defaultLimits = Limits{
	FileSize: 1 << 30,
	NoFile:   4096,
	Procs:    512,
	TmpSize:  512 << 20,
}

func (l Limits) withDefaults(timeout time.Duration) Limits {
	if l.FileSize <= 0 {
		l.FileSize = defaultLimits.FileSize
	}
	if l.NoFile <= 0 {
		l.NoFile = defaultLimits.NoFile
	}
	if l.Procs <= 0 {
		l.Procs = defaultLimits.Procs
	}
	if l.TmpSize <= 0 {
		l.TmpSize = defaultLimits.TmpSize
	}
	if l.CPU <= 0 {
		l.CPU = timeout + 10*time.Second
	}
	return l
}

// Policy is what one run may do. The zero values of Timeout, Limits,
// MaxOutput and HardOutput mean the documented defaults.
type Policy struct {
	// Clone is the absolute, symlink-free path of the throwaway clone, the
	// only place the command may write besides its private /tmp. A Clone
	// from NewClone gives it (Clone.Dir).
	Clone string
	// ReadOnly are extra host paths (toolchains, module caches) bound
	// read-only; absolute, never $HOME wholesale.
	ReadOnly []string
	// Env are the variables the command gets besides the fixed PATH, HOME,
	// TMPDIR, LANG, TERM and CI; secret-looking names are refused.
	Env map[string]string
	// Timeout is the wall-clock limit; 0 means 10 minutes.
	Timeout time.Duration
	// Limits bound resources.
	Limits Limits
	// MaxOutput is the number of bytes kept per stream; 0 means 1 MiB.
	MaxOutput int64
	// HardOutput kills the command once a stream passed it; 0 means 16 MiB.
	HardOutput int64
	// Backend forces a backend (it then fails rather than fall back);
	// BackendAuto picks the first that works.
	Backend string
	// AllowUnsandboxed runs without isolation when no backend works, with a
	// warning on every run. Set it only from the user's own configuration,
	// never from a file the model can write.
	AllowUnsandboxed bool
	// Uid and Gid are the unprivileged ids the command runs as when miam
	// runs as root; 0 means 65534 (nobody).
	Uid, Gid int
}

func (p Policy) timeout() time.Duration {
	if p.Timeout <= 0 {
		return 10 * time.Minute
	}
	return p.Timeout
}

func (p Policy) maxOutput() int64 {
	if p.MaxOutput <= 0 {
		return 1 << 20
	}
	return p.MaxOutput
}

func (p Policy) hardOutput() int64 {
	if p.HardOutput <= 0 {
		return 16 << 20
	}
	return max(p.HardOutput, p.maxOutput())
}

// ids are the uid and gid the command runs as when the caller is root.
func (p Policy) ids() (uid, gid int) {
	uid, gid = p.Uid, p.Gid
	if uid <= 0 {
		uid = 65534
	}
	if gid <= 0 {
		gid = 65534
	}
	return uid, gid
}

// Result is what a run produced.
type Result struct {
	// ExitCode is the command's exit status, -1 when it was killed.
	ExitCode int
	// Signal names the signal that killed the launcher, if any.
	Signal string
	// TimedOut is set when the wall-clock limit killed the tree.
	TimedOut bool
	// OutputLimited is set when a stream passed MaxOutput; past
	// HardOutput the tree was also killed.
	OutputLimited bool
	// Stdout and Stderr hold the first MaxOutput bytes of each stream, as
	// bytes (possibly invalid UTF-8).
	Stdout, Stderr []byte
	// StdoutTotal and StderrTotal count every byte written.
	StdoutTotal, StderrTotal int64
	// Backend is the backend that ran the command ("none" without one).
	Backend string
	// Duration is the wall-clock time of the run.
	Duration time.Duration
	// Warnings say what protection is missing on this run.
	Warnings []string
}
