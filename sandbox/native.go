package sandbox

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The native backend: miam starts its own helper (Init) with new user,
// mount, network, pid, ipc, uts and cgroup namespaces through
// syscall.SysProcAttr, mapping only the sandbox's uid. The helper is pid 1
// there: it builds the same allow-listed root as the bubblewrap backend
// (SANDBOX.md §3.4: a tmpfs root remounted read-only, /usr and /etc bound
// read-only, fresh /proc, a minimal /dev, private size-capped /tmp and
// /dev/shm, the clone read-write with its .git read-only, never the host's
// /), brings lo up, drops every capability and starts the command under
// no_new_privs, a Landlock ruleset where the kernel has Landlock (defence
// in depth over the mounts) and the seccomp filter. Killing pid 1 kills
// the whole namespace.

// nativeCloneFlags are the namespaces of a native sandbox.
const nativeCloneFlags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET |
	syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP

// nativeCaps are the capabilities (inside the new user namespace only) the
// helper keeps across its exec to build the sandbox; it drops them all
// before starting the command.
var nativeCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}

// nativeAttr is the helper's SysProcAttr: new namespaces, only uid and gid
// mapped (itself, or the unprivileged ids when miam is root), the
// capabilities it needs as ambient ones.
func nativeAttr(uid, gid int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags:  nativeCloneFlags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		Credential:  &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true},
		AmbientCaps: nativeCaps,
		Setpgid:     true,
		Pdeathsig:   syscall.SIGKILL,
	}
}

// devNodes are the host devices bound into the minimal /dev.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// nativeInit is pid 1 of a native sandbox.
func nativeInit(j job) (int, error) {
	// The command runs as the same uid: it must not read this process's
	// memory or descriptors through /proc/1.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("dumpable: %w", err)
	}
	if err := buildRoot(j); err != nil {
		return 0, err
	}
	if err := unix.Sethostname([]byte("sandbox")); err != nil {
		return 0, fmt.Errorf("sethostname: %w", err)
	}
	if err := loopbackUp(); err != nil {
		return 0, err
	}
	if err := dropCaps(); err != nil {
		return 0, err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		s := <-sigs
		_ = syscall.Kill(-1, syscall.SIGKILL) // every process of this pid namespace
		os.Exit(128 + int(s.(syscall.Signal)))
	}()
	pid, err := startNativeCommand(j)
	if err != nil {
		return 0, err
	}
	// As pid 1, reap every orphan until the command itself ends; exiting
	// then kills whatever it left behind.
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("wait: %w", err)
		}
		if got == pid {
			return exitCode(ws), nil
		}
	}
}

// startNativeCommand starts the command. With prlimit (util-linux, a
// small C program, ~1 ms cheaper than a second start of this Go program):
// no_new_privs, Landlock and the seccomp filter go on this locked thread,
// which the
// command is forked from, and prlimit sets the rlimits on itself before it
// execs the command; pid 1 stays unlimited. Without it, helperExec does
// all three.
func startNativeCommand(j job) (int, error) {
	if j.Prlimit == "" {
		return startExec(j, &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL})
	}
	return confineAndStart(j, j.LandlockABI > 0, false)
}

// confineAndStart confines the calling thread (no_new_privs, Landlock when
// landlock, the seccomp filter, with sockets denied when noSockets) and
// forks the command through prlimit from it, so the command inherits the
// confinement and prlimit sets the rlimits on itself before it execs.
func confineAndStart(j job, landlock, noSockets bool) (int, error) {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("no_new_privs: %w", err)
	}
	if landlock {
		if err := landlockRestrict(j); err != nil {
			return 0, err
		}
	}
	prog, err := seccompProgram(noSockets)
	if err != nil {
		return 0, err
	}
	if err := installSeccomp(prog); err != nil {
		return 0, err
	}
	argv := append([]string{j.Prlimit}, prlimitFlags(j.Rlimits)...)
	argv = append(append(argv, "--"), j.Argv...)
	pid, err := syscall.ForkExec(j.Prlimit, argv, &syscall.ProcAttr{
		Dir:   j.Dir,
		Env:   j.Env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", j.Argv[0], err)
	}
	return pid, nil
}

// prlimitFlags are prlimit's options for rls (soft and hard alike).
func prlimitFlags(rls []rlimit) []string {
	names := map[int]string{unix.RLIMIT_CORE: "core", unix.RLIMIT_NOFILE: "nofile", unix.RLIMIT_FSIZE: "fsize",
		unix.RLIMIT_CPU: "cpu", unix.RLIMIT_NPROC: "nproc", unix.RLIMIT_AS: "as"}
	var flags []string
	for _, rl := range rls {
		flags = append(flags, "--"+names[rl.Resource]+"="+strconv.FormatUint(rl.Value, 10))
	}
	return flags
}

// buildRoot makes the allow-listed root and pivots into it. Sources are
// opened first (O_PATH), then bound through /proc/self/fd, so that mounting
// the new root over /tmp hides nothing they need.
func buildRoot(j job) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	type bind struct {
		src, dst string
		ro       bool
		file     bool
		fd       int
	}
	var binds []bind
	add := func(src, dst string, ro bool) error {
		fd, err := unix.Open(src, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", src, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("stat %s: %w", src, err)
		}
		binds = append(binds, bind{src: src, dst: dst, ro: ro, file: st.Mode&unix.S_IFMT != unix.S_IFDIR, fd: fd})
		return nil
	}
	for _, d := range []string{"/usr", "/etc"} {
		if err := add(d, d, true); err != nil {
			return err
		}
	}
	var links [][2]string
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"} {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			to, err := os.Readlink(d)
			if err != nil {
				return err
			}
			links = append(links, [2]string{to, d})
		case fi.IsDir():
			if err := add(d, d, true); err != nil {
				return err
			}
		}
	}
	for _, ro := range j.ReadOnly {
		if err := add(ro, ro, true); err != nil {
			return err
		}
	}
	if j.Clone != "" {
		if err := add(j.Clone, j.Clone, false); err != nil {
			return err
		}
		if err := add(filepath.Join(j.Clone, ".git"), filepath.Join(j.Clone, ".git"), true); err != nil {
			return err
		}
	}
	var devs []bind
	for _, n := range devNodes {
		fd, err := unix.Open("/dev/"+n, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // a host without /dev/tty, say
		}
		devs = append(devs, bind{src: "/dev/" + n, dst: "/dev/" + n, file: true, fd: fd})
	}

	const root = "/tmp" // any directory: the sources are held open
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mount root tmpfs: %w", err)
	}
	in := func(p string) string { return filepath.Join(root, p) }
	for _, l := range links {
		if err := os.Symlink(l[0], in(l[1])); err != nil {
			return err
		}
	}
	mountBind := func(b bind, attrs uint64) error {
		dst := in(b.dst)
		if err := mkTarget(dst, b.file); err != nil {
			return err
		}
		if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(b.fd), dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", b.src, err)
		}
		unix.Close(b.fd)
		if attrs != 0 {
			// Recursive, and only adding flags: a lock the host put on
			// the mount (nosuid, noexec…) stays.
			if err := unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: attrs}); err != nil {
				return fmt.Errorf("mount_setattr %s: %w", b.dst, err)
			}
		}
		return nil
	}
	size := strconv.FormatInt(j.TmpSize, 10)
	if err := os.Mkdir(in("/proc"), 0o555); err != nil {
		return err
	}
	if err := unix.Mount("proc", in("/proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := mkTmpfs(in("/dev"), "mode=0755,size=64k", 0); err != nil {
		return err
	}
	for _, d := range devs {
		if err := mountBind(d, 0); err != nil {
			return err
		}
	}
	for _, l := range [][2]string{{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"}, {"pts/ptmx", "ptmx"}} {
		if err := os.Symlink(l[0], in("/dev/"+l[1])); err != nil {
			return err
		}
	}
	if err := os.Mkdir(in("/dev/pts"), 0o755); err != nil {
		return err
	}
	// A private devpts, as bwrap --dev gives; not fatal where the kernel
	// refuses it (no command of ours needs a pty).
	_ = unix.Mount("devpts", in("/dev/pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
	if err := mkTmpfs(in("/dev/shm"), "mode=1777,size="+size, unix.MS_NOEXEC); err != nil {
		return err
	}
	if err := mkTmpfs(in("/tmp"), "mode=1777,size="+size, 0); err != nil {
		return err
	}
	if err := os.Mkdir(in("/tmp/home"), 0o700); err != nil {
		return err
	}

	// The binds last: the clone may lie below /tmp, which is a tmpfs by now.
	for _, b := range binds {
		attrs := uint64(unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
		if b.ro {
			attrs |= unix.MOUNT_ATTR_RDONLY
		}
		if err := mountBind(b, attrs); err != nil {
			return err
		}
	}

	if err := os.Chdir(root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host root: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("remount / read-only: %w", err)
	}
	return nil
}

// mkTarget creates a mount point: a directory, or an empty file for a file
// bind, with its parents.
func mkTarget(p string, file bool) error {
	if !file {
		return os.MkdirAll(p, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

func mkTmpfs(p, opts string, flags uintptr) error {
	if err := os.MkdirAll(p, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|flags, opts); err != nil {
		return fmt.Errorf("mount tmpfs %s: %w", p, err)
	}
	return nil
}

// loopbackUp brings lo up in the new, otherwise empty, network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("lo: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	return nil
}

// dropCaps empties the calling thread's bounding, ambient, effective,
// permitted and inheritable sets; the command, forked from this thread,
// starts with none.
func dropCaps() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	// The helper's other threads too, where Go can (not with cgo): pid 1
	// needs no capability to reap and kill.
	_, _, _ = syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	return nil
}
