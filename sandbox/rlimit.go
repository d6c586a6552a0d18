package sandbox

import (
	"fmt"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// How the bubblewrap backend sets the rlimits that bwrap and the command
// inherit. Go has no rlimit field in SysProcAttr, and prlimit(2) on a
// running child races with it. The launcher is therefore started stopped at
// its execve (PTRACE_TRACEME), limited with prlimit(2) and released: no
// instruction of bwrap runs unlimited, and no wrapper process is exec'd
// (the /usr/bin/prlimit wrapper cost ~1 ms a run). Where ptrace is refused
// (Yama ptrace_scope 3, a container's seccomp), the probe falls back to
// the wrapper.
const (
	rlimitsPtrace  = "ptrace"  // startLimited
	rlimitsPrlimit = "prlimit" // the /usr/bin/prlimit wrapper
	rlimitsHelper  = "helper"  // native and Landlock: helperExec, not prlimit (benchmarks)
)

// startLimited starts cmd stopped at its execve, sets rls on it and lets
// it run. It must run on a locked OS thread that stays locked until Wait:
// that thread is the tracer. tainted reports that the thread's real ids
// could not be restored (see asTarget): the caller must then never unlock
// it, so that Go discards the thread.
func startLimited(cmd *exec.Cmd, rls []rlimit) (tainted bool, err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
	if err := cmd.Start(); err != nil {
		return false, err
	}
	pid := cmd.Process.Pid
	abort := func(err error) (bool, error) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return tainted, fmt.Errorf("sandbox: rlimits on the launcher: %w", err)
	}
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, unix.WALL, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return abort(err)
		}
		break
	}
	if !ws.Stopped() || ws.StopSignal() != syscall.SIGTRAP {
		return abort(fmt.Errorf("launcher not stopped at exec (status %#x)", ws))
	}
	set := func() error {
		for _, rl := range rls {
			lim := unix.Rlimit{Cur: rl.Value, Max: rl.Value}
			if err := unix.Prlimit(pid, rl.Resource, &lim, nil); err != nil {
				return fmt.Errorf("prlimit %d=%d: %w", rl.Resource, rl.Value, err)
			}
		}
		return nil
	}
	var serr error
	if c := cmd.SysProcAttr.Credential; c != nil && int(c.Uid) != syscall.Geteuid() {
		tainted, serr = asTarget(int(c.Uid), int(c.Gid), set)
	} else {
		serr = set()
	}
	if serr != nil {
		return abort(serr)
	}
	if err := syscall.PtraceDetach(pid); err != nil {
		return abort(err)
	}
	return false, nil
}

// asTarget runs f with this thread's real uid and gid set to uid and gid.
// Root here lacks CAP_SYS_RESOURCE, so prlimit(2) on a child that dropped
// to the sandbox's uid needs matching real ids; the effective and saved
// ids stay 0, so the thread keeps its capabilities and gets its ids back.
// Only this thread changes (raw syscalls, not Go's all-threads setuid).
func asTarget(uid, gid int, f func() error) (tainted bool, err error) {
	ruid, _, _ := unix.Getresuid()
	rgid, _, _ := unix.Getresgid()
	keep := ^uintptr(0) // -1: leave the id unchanged
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), keep, keep); e != 0 {
		return false, fmt.Errorf("setresgid: %w", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), keep, keep); e != 0 {
		_, _, e2 := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(rgid), keep, keep)
		return e2 != 0, fmt.Errorf("setresuid: %w", e)
	}
	err = f()
	_, _, e1 := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(ruid), keep, keep)
	_, _, e2 := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(rgid), keep, keep)
	return e1 != 0 || e2 != 0, err
}
