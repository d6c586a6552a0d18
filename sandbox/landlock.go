package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Landlock backend, for machines without user namespaces, never as
// root (Landlock does not confine root's capabilities, E5). There is no
// namespace: the command sees the host's file tree through a Landlock
// ruleset (read and execute on /usr, /etc, the read-only roots and /proc;
// read-write on the clone and a private TMPDIR; nothing else), the
// network through Landlock's TCP rules and a seccomp filter denying
// socket(), other processes through Landlock's scopes (no signal, no
// abstract unix socket, no ptrace out of the domain). The helper stays
// outside the domain as a child subreaper and kills every descendant when
// the command ends or the runner asks it to (SIGTERM). The clone's .git is
// withheld during the run (a Landlock rule cannot make a subdirectory of a
// writable one read-only).

// minLandlockABI is the oldest ABI this backend accepts: 6 brings the
// signal and abstract-socket scopes, without which the command could kill
// the runner or reach a host abstract socket.
const minLandlockABI = 6

// Landlock's access rights, by the ABI that introduced them.
const (
	llExecute    = 1 << 0
	llWriteFile  = 1 << 1
	llReadFile   = 1 << 2
	llReadDir    = 1 << 3
	llRemoveDir  = 1 << 4
	llRemoveFile = 1 << 5
	llMakeChar   = 1 << 6
	llMakeDir    = 1 << 7
	llMakeReg    = 1 << 8
	llMakeSock   = 1 << 9
	llMakeFifo   = 1 << 10
	llMakeBlock  = 1 << 11
	llMakeSym    = 1 << 12
	llRefer      = 1 << 13 // ABI 2
	llTruncate   = 1 << 14 // ABI 3
	llIoctlDev   = 1 << 15 // ABI 5

	llNetBindTCP    = 1 << 0 // ABI 4
	llNetConnectTCP = 1 << 1

	llScopeAbstractUnix = 1 << 0 // ABI 6
	llScopeSignal       = 1 << 1

	llRulePathBeneath = 1
	llCreateVersion   = 1
)

// landlockRuleset is struct landlock_ruleset_attr up to ABI 6.
type landlockRuleset struct {
	fs, net, scoped uint64
}

// landlockABI returns the kernel's Landlock ABI, or the error saying why
// there is none.
func landlockABI() (int, error) {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, llCreateVersion)
	if errno != 0 {
		return 0, errno
	}
	return int(abi), nil
}

// llRule grants access beneath path.
type llRule struct {
	path     string
	access   uint64
	optional bool // skip when path does not exist
}

// llHandled are the filesystem rights an ABI knows.
func llHandled(abi int) uint64 {
	fs := uint64(llExecute | llWriteFile | llReadFile | llReadDir | llRemoveDir | llRemoveFile | llMakeChar |
		llMakeDir | llMakeReg | llMakeSock | llMakeFifo | llMakeBlock | llMakeSym)
	if abi >= 2 {
		fs |= llRefer
	}
	if abi >= 3 {
		fs |= llTruncate
	}
	if abi >= 5 {
		fs |= llIoctlDev
	}
	return fs
}

// landlockRules are the ruleset of j's backend, for rights all. The
// Landlock backend sees the host's tree: reads on the system roots and
// /proc, a few devices, everything on the clone and the private TMPDIR.
// In the native backend Landlock is defence in depth over the mounts
// (SANDBOX.md §3.4): reads on the read-only roots, everything on the
// clone, /tmp and /dev/shm.
func landlockRules(j job, all uint64) []llRule {
	const read = llReadFile | llReadDir | llExecute
	rules := []llRule{
		{"/usr", read, false}, {"/etc", read, false},
		{"/bin", read, true}, {"/sbin", read, true}, {"/lib", read, true}, {"/lib64", read, true},
		// Other processes' environ, memory and descriptors stay out of
		// reach: Landlock denies ptrace access out of the domain.
		{"/proc", llReadFile | llReadDir, false},
	}
	for _, ro := range j.ReadOnly {
		rules = append(rules, llRule{ro, read, false})
	}
	if j.Clone != "" {
		rules = append(rules, llRule{j.Clone, all, false})
	}
	if j.Backend == BackendNative {
		return append(rules,
			llRule{"/dev", llReadFile | llWriteFile | llReadDir | llTruncate | llIoctlDev, false},
			llRule{"/dev/shm", all, false},
			llRule{"/tmp", all, false})
	}
	return append(rules,
		llRule{"/dev/null", llReadFile | llWriteFile | llTruncate, false},
		llRule{"/dev/zero", llReadFile | llWriteFile | llTruncate, false},
		llRule{"/dev/full", llReadFile | llWriteFile | llTruncate, false},
		llRule{"/dev/random", llReadFile, false},
		llRule{"/dev/urandom", llReadFile, false},
		llRule{j.Tmp, all, false})
}

// landlockRestrict confines the calling thread (and what it forks or
// execs) with landlockRules; no_new_privs must be set. The Landlock backend
// needs minLandlockABI (its TCP rules and scopes are its only network and
// process barriers besides seccomp); the native backend takes what the
// kernel has.
func landlockRestrict(j job) error {
	if j.Backend == BackendLandlock && j.LandlockABI < minLandlockABI {
		return fmt.Errorf("landlock ABI %d < %d", j.LandlockABI, minLandlockABI)
	}
	all := llHandled(j.LandlockABI)
	attr := landlockRuleset{fs: all}
	if j.Backend == BackendLandlock {
		attr.net = llNetBindTCP | llNetConnectTCP
	}
	if j.LandlockABI >= 6 {
		attr.scoped = llScopeAbstractUnix | llScopeSignal
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	for _, r := range landlockRules(j, all) {
		pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if r.optional {
				continue
			}
			return fmt.Errorf("landlock rule %s: %w", r.path, err)
		}
		access := r.access & all
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			access &= llExecute | llWriteFile | llReadFile | llTruncate | llIoctlDev // file rights only
		}
		rule := struct {
			access uint64
			fd     int32
		}{access, int32(pfd)}
		_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, llRulePathBeneath, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
		unix.Close(pfd)
		if errno != 0 {
			return fmt.Errorf("landlock rule %s: %w", r.path, errno)
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// landlockInit is the Landlock backend's helper: a subreaper that starts
// the confined command and, when it ends or on SIGTERM, kills every
// descendant before exiting with the command's status.
func landlockInit(j job) (int, error) {
	// Descriptor 4 tells the runner the tree is dead (it then gives .git
	// back); the command must not inherit it.
	syscall.CloseOnExec(4)
	status := os.NewFile(4, "status")
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("subreaper: %w", err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	pid, err := startLandlocked(j)
	if errors.Is(err, errLeader) || err == nil && pid == 0 {
		pid, err = startExec(j, &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL})
	}
	if err != nil {
		return 0, err
	}
	// Whoever ends the run (the command's exit or a signal) holds finish
	// and never lets go: one kill, one "clean", and a Wait4 that finds no
	// child because the signal path reaped it waits for that path's exit.
	var finish sync.Mutex
	go func() {
		s := <-sigs
		finish.Lock()
		if err := killDescendants(os.Getpid()); err != nil {
			fmt.Fprintf(os.Stderr, "miam-sandbox: %v\n", err)
			os.Exit(helperFailed)
		}
		status.WriteString("clean")
		os.Exit(128 + int(s.(syscall.Signal)))
	}()
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			finish.Lock() // ECHILD: the signal path reaped the command
			return 0, fmt.Errorf("wait: %w", err)
		}
		if got == pid {
			finish.Lock()
			signal.Stop(sigs)
			if err := killDescendants(os.Getpid()); err != nil {
				return 0, err
			}
			status.WriteString("clean")
			return exitCode(ws), nil
		}
	}
}

// errLeader: the confining thread would have been the thread-group leader.
var errLeader = errors.New("the confining thread is the thread-group leader")

// startLandlocked starts the command through prlimit (a small C program,
// cheaper than a second start of this Go program) from a dedicated thread
// that takes no_new_privs, the Landlock ruleset and the seccomp filter,
// which the command inherits. That thread is never the thread-group
// leader, so the helper itself stays outside the domain (the command
// cannot signal it); if Go put the goroutine there, errLeader says to use
// helperExec instead. The thread then stays parked, locked, for the
// helper's life: the command's Pdeathsig follows the thread that forked
// it. It returns pid 0 without prlimit.
func startLandlocked(j job) (int, error) {
	if j.Prlimit == "" {
		return 0, nil
	}
	type started struct {
		pid int
		err error
	}
	ch := make(chan started, 1)
	go func() {
		runtime.LockOSThread() // never unlocked once confined: the thread dies with the helper
		if unix.Gettid() == os.Getpid() {
			runtime.UnlockOSThread()
			ch <- started{err: errLeader}
			return
		}
		pid, err := confineAndStart(j, true, true)
		ch <- started{pid, err}
		select {}
	}()
	r := <-ch
	return r.pid, r.err
}

// killDescendants SIGKILLs every process below self and returns once all
// are reaped: orphans come back to self (a subreaper), so a setsid or a
// double fork does not escape, and only ECHILD from Wait4 proves the tree
// empty. A /proc scan alone cannot: a process whose main thread exited
// (SYS_exit) while its other threads run shows state Z there, yet still
// runs with the sandbox's rights; SIGKILL to its pid kills the whole thread
// group, and it cannot be reaped before then. It gives up after a few
// seconds (a fork bomb faster than the kills, which RLIMIT_NPROC bounds).
func killDescendants(self int) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		pids := descendants(self)
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL) // a true zombie ignores it
		}
		for {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err == syscall.ECHILD {
				return nil // nothing left below self
			}
			if err == syscall.EINTR || err == nil && got > 0 {
				continue
			}
			if err != nil {
				return fmt.Errorf("wait: %w", err)
			}
			break // children left, not yet dead
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes survived the kill: %v", descendants(self))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// descendants lists the processes below root, from /proc, zombies
// included: state Z may be a thread group whose leader exited while other
// threads run.
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, err := strconv.Atoi(string(f[1]))
		if err != nil {
			continue
		}
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// landlockHost prepares a Landlock run on the host: a private TMPDIR (and
// HOME below it), the clone's .git withheld until the helper reports the
// tree dead, and a status pipe on descriptor 4 for that report.
func landlockHost(s Spec, l *launched) error {
	abi, err := landlockABI()
	if err != nil {
		return fmt.Errorf("sandbox: landlock: %w", err)
	}
	tmp, err := os.MkdirTemp("", "miam-sandbox-tmp-")
	if err != nil {
		return fmt.Errorf("sandbox: private TMPDIR: %w", err)
	}
	l.cleanup = append(l.cleanup, func() { os.RemoveAll(tmp) })
	if err := os.Mkdir(filepath.Join(tmp, "home"), 0o700); err != nil {
		return fmt.Errorf("sandbox: private HOME: %w", err)
	}
	env := make([]string, 0, len(s.Env))
	for _, kv := range s.Env {
		switch {
		case strings.HasPrefix(kv, "TMPDIR="):
			kv = "TMPDIR=" + tmp
		case strings.HasPrefix(kv, "HOME="):
			kv = "HOME=" + filepath.Join(tmp, "home")
		}
		env = append(env, kv)
	}
	s.Env = env
	j := s.job()
	j.Tmp, j.LandlockABI = tmp, abi
	if _, err := os.Stat(prlimitPath); err == nil && s.Rlimits != rlimitsHelper {
		j.Prlimit = prlimitPath
	}
	pipe, err := jobPipe(j)
	if err != nil {
		return err
	}
	status, statusW, err := os.Pipe()
	if err != nil {
		pipe.Close()
		return fmt.Errorf("sandbox: status pipe: %w", err)
	}
	l.files = append(l.files, pipe, statusW)
	l.cleanup = append(l.cleanup, func() { status.Close() })
	if s.Policy.Clone != "" {
		held, err := withholdGit(s.Policy.Clone)
		if err != nil {
			return err
		}
		l.after = func() error {
			statusW.Close() // the helper has its own copy, closed at exit
			b := make([]byte, 16)
			n, _ := status.Read(b)
			if l.cmd.Process != nil && string(b[:n]) != "clean" {
				return fmt.Errorf("sandbox: the Landlock helper did not confirm the command's tree dead; the clone's .git stays at %s", held)
			}
			return restoreGit(s.Policy.Clone, held)
		}
	}
	l.graceful = true
	l.warnings = append(l.warnings,
		"landlock backend: no namespaces; host processes and their command lines are visible in /proc",
		"landlock backend: TMPDIR is a private host directory, not a size-capped tmpfs; /tmp and /dev/shm are not writable",
		"landlock backend: no socket() at all, not even on loopback",
		"landlock backend: the clone's .git is absent during the run")
	return nil
}

// withholdGit moves clone/.git next to the clone, out of the Landlock
// rules, and returns where.
func withholdGit(clone string) (string, error) {
	held := filepath.Join(filepath.Dir(clone), fmt.Sprintf(".git-withheld-%d", os.Getpid()))
	if err := os.Rename(filepath.Join(clone, ".git"), held); err != nil {
		return "", fmt.Errorf("sandbox: withhold .git: %w", err)
	}
	return held, nil
}

// restoreGit puts the withheld .git back, removing whatever the command
// planted at clone/.git (RemoveAll follows no symlink).
func restoreGit(clone, held string) error {
	dst := filepath.Join(clone, ".git")
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("sandbox: remove a planted .git: %w", err)
	}
	if err := os.Rename(held, dst); err != nil {
		return fmt.Errorf("sandbox: restore .git: %w", err)
	}
	return nil
}
