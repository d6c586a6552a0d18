package sandbox

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// The seccomp filter of SANDBOX.md §3.4, generated as a classic BPF program
// and handed to bwrap with --seccomp FD. Defence in depth over the
// namespaces: it denies the syscalls that widen the kernel surface or reach
// other processes (io_uring, bpf, perf, keyrings, userfaultfd, ptrace,
// process_vm_*, kexec, modules, unshare/setns, clone with CLONE_NEW*,
// mount and the new mount API), TIOCSTI/TIOCLINUX, and makes clone3 fail
// with ENOSYS so that libc falls back to clone, whose flags it can check.
// A syscall of a foreign architecture (i386 on amd64) kills the process;
// amd64's x32 numbers get ENOSYS.

const (
	bpfLdWAbs  = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK    = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK    = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfJsetK   = 0x45 // BPF_JMP | BPF_JSET | BPF_K
	bpfRetK    = 0x06 // BPF_RET | BPF_K
	retAllow   = 0x7fff0000
	retErrno   = 0x00050000
	retKillPrc = 0x80000000

	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits (little endian)
	offArg1 = 24

	auditArchAMD64 = 0xc000003e
	auditArchARM64 = 0xc00000b7
	x32Bit         = 0x40000000

	cloneNewMask = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME
)

// deniedSyscalls fail with EPERM.
var deniedSyscalls = []uint32{
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_USERFAULTFD, unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT, unix.SYS_ACCT,
}

// insn is one BPF instruction whose jumps may name a label.
type insn struct {
	code   uint16
	k      uint32
	jt, jf string // labels; "" is the next instruction
	label  string // this instruction's label
}

// seccompFilter returns the filter for the running architecture (amd64 or
// arm64: the syscall numbers are this build's) in the kernel's struct
// sock_filter layout.
func seccompFilter() ([]byte, error) { return seccompProgram(false) }

// seccompProgram is seccompFilter, denying also socket() when denySocket
// is set (the Landlock backend, which has no network namespace).
func seccompProgram(denySocket bool) ([]byte, error) {
	goarch := runtime.GOARCH
	var arch uint32
	switch goarch {
	case "amd64":
		arch = auditArchAMD64
	case "arm64":
		arch = auditArchARM64
	default:
		return nil, fmt.Errorf("sandbox: no seccomp filter for %s", goarch)
	}
	p := []insn{
		{code: bpfLdWAbs, k: offArch},
		{code: bpfJeqK, k: arch, jf: "kill"},
		{code: bpfLdWAbs, k: offNr},
	}
	if goarch == "amd64" {
		p = append(p, insn{code: bpfJgeK, k: x32Bit, jt: "enosys"})
	}
	p = append(p,
		insn{code: bpfJeqK, k: unix.SYS_CLONE3, jt: "enosys"},
		insn{code: bpfJeqK, k: unix.SYS_CLONE, jt: "clone"},
		insn{code: bpfJeqK, k: unix.SYS_IOCTL, jt: "ioctl"},
	)
	for _, nr := range deniedSyscalls {
		p = append(p, insn{code: bpfJeqK, k: nr, jt: "eperm"})
	}
	if denySocket {
		p = append(p, insn{code: bpfJeqK, k: unix.SYS_SOCKET, jt: "eperm"})
	}
	p = append(p,
		insn{code: bpfRetK, k: retAllow},
		insn{label: "clone", code: bpfLdWAbs, k: offArg0},
		insn{code: bpfJsetK, k: cloneNewMask, jt: "eperm"},
		insn{code: bpfRetK, k: retAllow},
		insn{label: "ioctl", code: bpfLdWAbs, k: offArg1},
		insn{code: bpfJeqK, k: unix.TIOCSTI, jt: "eperm"},
		insn{code: bpfJeqK, k: unix.TIOCLINUX, jt: "eperm"},
		insn{code: bpfRetK, k: retAllow},
		insn{label: "eperm", code: bpfRetK, k: retErrno | uint32(unix.EPERM)},
		insn{label: "enosys", code: bpfRetK, k: retErrno | uint32(unix.ENOSYS)},
		insn{label: "kill", code: bpfRetK, k: retKillPrc},
	)
	at := map[string]int{}
	for i, in := range p {
		if in.label != "" {
			at[in.label] = i
		}
	}
	jump := func(i int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		d := at[label] - i - 1
		if d < 0 || d > 255 {
			return 0, fmt.Errorf("sandbox: seccomp jump to %s out of range", label)
		}
		return uint8(d), nil
	}
	out := make([]byte, 0, 8*len(p))
	for i, in := range p {
		jt, err := jump(i, in.jt)
		if err != nil {
			return nil, err
		}
		jf, err := jump(i, in.jf)
		if err != nil {
			return nil, err
		}
		out = binary.LittleEndian.AppendUint16(out, in.code)
		out = append(out, jt, jf)
		out = binary.LittleEndian.AppendUint32(out, in.k)
	}
	return out, nil
}
