package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// BwrapPath is where the bubblewrap backend looks for bwrap: an absolute
// path, never a PATH lookup that could reach the clone.
const BwrapPath = "/usr/bin/bwrap"

// prlimitPath is util-linux's prlimit, which sets the rlimits bwrap and the
// command inherit.
const prlimitPath = "/usr/bin/prlimit"

// Probe is the outcome of probing one backend.
type Probe struct {
	// Backend is the backend's name (BackendBwrap, …).
	Backend string `json:"backend"`
	// OK is set when the backend works on this machine.
	OK bool `json:"ok"`
	// Reason says why it does not work ("" when OK).
	Reason string `json:"reason,omitempty"`
	// Fix says what would make it work, when something would.
	Fix string `json:"fix,omitempty"`
	// Path is the launcher binary, for backends that have one (bwrap; the
	// native and Landlock helpers are miam itself).
	Path string `json:"path,omitempty"`
	// Rlimits is how the bubblewrap backend sets rlimits on bwrap:
	// "ptrace" (stopped at exec, no extra process) or "prlimit" (the
	// util-linux wrapper, where ptrace is refused).
	Rlimits string `json:"rlimits,omitempty"`
}

// Capabilities are the probes of every backend, in preference order.
type Capabilities struct {
	Probes []Probe `json:"probes"`
	// Root is set when miam runs as root: commands then run as an
	// unprivileged uid.
	Root bool `json:"root"`
}

// Best returns the first probe that works.
func (c Capabilities) Best() (Probe, bool) {
	for _, p := range c.Probes {
		if p.OK {
			return p, true
		}
	}
	return Probe{}, false
}

// Lookup returns the probe of backend name.
func (c Capabilities) Lookup(name string) (Probe, bool) {
	for _, p := range c.Probes {
		if p.Backend == name {
			return p, true
		}
	}
	return Probe{}, false
}

// NoIsolationError is the ErrNoIsolation error: it names every failed probe
// and the fix.
type NoIsolationError struct {
	// Command is the refused command, for the message.
	Command string
	// Probes are the failed probes.
	Probes []Probe
}

// Error renders the multi-line diagnostic.
func (e *NoIsolationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sandbox: no isolation backend is available; refusing to run %q.", e.Command)
	for _, p := range e.Probes {
		fmt.Fprintf(&b, "\n  %-9s %s", p.Backend+":", p.Reason)
		if p.Fix != "" {
			fmt.Fprintf(&b, "\n            (%s)", p.Fix)
		}
	}
	b.WriteString("\nSet sandbox.allow_unsandboxed: true in your own miam config (never the project's) to run WITHOUT isolation (not recommended).")
	return b.String()
}

// Is makes errors.Is(err, ErrNoIsolation) true.
func (e *NoIsolationError) Is(target error) bool { return target == ErrNoIsolation }

// Detect probes every backend on this machine, in order: bubblewrap, native
// namespaces, Landlock + seccomp. Each probe runs a confined `true`
// through the backend's real launch path (a few ms each); Runner caches
// the result. The native and Landlock probes need Init in main: without
// it they say so.
func Detect(ctx context.Context) Capabilities {
	root := os.Geteuid() == 0
	return Capabilities{
		Root:   root,
		Probes: []Probe{probeBwrap(ctx, BwrapPath, root), probeNative(ctx, root), probeLandlock(ctx, root)},
	}
}

// probeBwrap checks bwrap at path: present, neither setuid nor setcap,
// version ≥ 0.8, and a confined `true` exits 0 (as the unprivileged uid
// when root).
func probeBwrap(ctx context.Context, path string, root bool) Probe {
	p := Probe{Backend: BackendBwrap, Path: path}
	fi, err := os.Stat(path)
	if err != nil {
		p.Reason = fmt.Sprintf("not found at %s", path)
		p.Fix = "install the 'bubblewrap' package"
		return p
	}
	if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
		p.Reason = fmt.Sprintf("%s is setuid/setgid: that mode is refused (upstream dropped it)", path)
		p.Fix = "chmod u-s,g-s " + path + " (user namespaces make it unnecessary)"
		return p
	}
	if n, _ := syscall.Getxattr(path, "security.capability", nil); n > 0 {
		p.Reason = fmt.Sprintf("%s has file capabilities: refused", path)
		p.Fix = "setcap -r " + path
		return p
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		p.Reason = fmt.Sprintf("%s --version: %v", path, err)
		return p
	}
	if v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap")); !versionAtLeast(v, 0, 8) {
		p.Reason = fmt.Sprintf("bubblewrap %s is older than 0.8 (needs --disable-userns and --size)", v)
		p.Fix = "upgrade the 'bubblewrap' package"
		return p
	}
	var failures []string
	for _, via := range []string{rlimitsPtrace, rlimitsPrlimit} {
		spec := Spec{
			Backend: BackendBwrap,
			Bwrap:   path,
			Policy:  Policy{Timeout: 5 * time.Second},
			Argv:    []string{"/usr/bin/true"},
			Root:    root,
			Rlimits: via,
		}
		if err := probeRun(ctx, spec); err != nil {
			failures = append(failures, fmt.Sprintf("with rlimits by %s: %v", via, err))
			continue
		}
		p.OK, p.Rlimits = true, via
		return p
	}
	p.Reason = "confined probe failed: " + strings.Join(failures, "; ")
	p.Fix = userNSFix()
	return p
}

// probeRun runs s (a confined `true`) as Run would, and says why it did
// not exit 0.
func probeRun(ctx context.Context, s Spec) error {
	l, err := launch(s, false)
	if err != nil {
		return err
	}
	defer l.close()
	res, err := run(ctx, l, s.Policy, Result{})
	if l.after != nil {
		if aerr := l.after(); err == nil {
			err = aerr
		}
	}
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit status %d", res.ExitCode)
	}
	if err != nil {
		if msg := strings.TrimSpace(string(res.Stderr)); msg != "" {
			return fmt.Errorf("%w: %s", err, msg)
		}
		return err
	}
	return nil
}

// versionAtLeast compares a "X.Y.Z" version.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// userNSFix explains the sysctls that block user namespaces, as read now.
func userNSFix() string {
	var fixes []string
	if readSysctl("user/max_user_namespaces") == "0" {
		fixes = append(fixes, "user.max_user_namespaces=0: set it above 0")
	}
	if readSysctl("kernel/unprivileged_userns_clone") == "0" {
		fixes = append(fixes, "kernel.unprivileged_userns_clone=0: set it to 1")
	}
	if readSysctl("kernel/apparmor_restrict_unprivileged_userns") == "1" {
		fixes = append(fixes, "kernel.apparmor_restrict_unprivileged_userns=1: add an AppArmor profile granting 'userns,' to bwrap, or set the sysctl to 0")
	}
	if len(fixes) == 0 {
		return "user namespaces seem allowed; run the probe by hand: bwrap --unshare-all --unshare-user --ro-bind /usr /usr /usr/bin/true"
	}
	return strings.Join(fixes, "; ")
}

func readSysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// probeNative checks the native backend: the kernel allows user
// namespaces, and this program's own helper (Init) builds a sandbox in
// which `true` exits 0.
func probeNative(ctx context.Context, root bool) Probe {
	p := Probe{Backend: BackendNative}
	if f := userNSFix(); strings.Contains(f, "=") {
		p.Reason = "user namespaces are disabled"
		p.Fix = f
		return p
	}
	return probeHelper(ctx, p, root)
}

// probeLandlock checks the Landlock + seccomp backend: never as root, a
// Landlock ABI with the signal and abstract-socket scopes, and a confined
// `true` that exits 0.
func probeLandlock(ctx context.Context, root bool) Probe {
	p := Probe{Backend: BackendLandlock}
	if root {
		p.Reason = "never used as root (Landlock does not confine root's capabilities)"
		p.Fix = "run miam as an unprivileged user"
		return p
	}
	abi, err := landlockABI()
	if err != nil {
		p.Reason = fmt.Sprintf("kernel reports no Landlock support (%v)", err)
		p.Fix = "need Linux >= 6.12 with landlock in the LSM list (lsm= boot parameter)"
		return p
	}
	if abi < minLandlockABI {
		p.Reason = fmt.Sprintf("kernel Landlock ABI %d is older than %d (no signal and abstract-socket scopes)", abi, minLandlockABI)
		p.Fix = "need Linux >= 6.12"
		return p
	}
	return probeHelper(ctx, p, root)
}

// probeHelper runs `true` through the helper of p.Backend.
func probeHelper(ctx context.Context, p Probe, root bool) Probe {
	if !initCalled.Load() {
		p.Reason = "this program does not run the sandbox helper"
		p.Fix = "call sandbox.Init() first thing in main"
		return p
	}
	err := probeRun(ctx, Spec{Backend: p.Backend, Policy: Policy{Timeout: 5 * time.Second}, Argv: []string{"/usr/bin/true"}, Env: launcherEnv, Root: root})
	switch {
	case err == nil:
		p.OK = true
	default:
		p.Reason = fmt.Sprintf("confined probe failed: %v", err)
	}
	return p
}
