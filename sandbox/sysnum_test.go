package sandbox

import "golang.org/x/sys/unix"

// Syscall numbers the seccomp attack test calls, for this architecture.
const (
	sysPtrace       = unix.SYS_PTRACE
	sysUnshare      = unix.SYS_UNSHARE
	sysClone        = unix.SYS_CLONE
	sysClone3       = unix.SYS_CLONE3
	sysIOUringSetup = unix.SYS_IO_URING_SETUP
	sysKeyctl       = unix.SYS_KEYCTL
	sysBPF          = unix.SYS_BPF
	sysIoctl        = unix.SYS_IOCTL
	sysExit         = unix.SYS_EXIT
)
