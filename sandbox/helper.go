package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The native and Landlock backends run no external launcher: miam re-execs
// itself (/proc/self/exe) as a small helper, recognised by its argv[0], which
// reads its job as JSON on descriptor 3 (never argv or the environment,
// which the sandbox could read in /proc). The helper stages:
//
//   - helperNative: pid 1 of the new namespaces; builds the allow-listed
//     root, brings lo up, drops its capabilities, starts the command and
//     reaps.
//   - helperLandlock: a child subreaper outside the Landlock domain; starts
//     the command and kills every descendant when it ends.
//
// Both start the command through /usr/bin/prlimit (which sets the rlimits
// on itself) from a thread that took no_new_privs, the Landlock ruleset
// and the seccomp filter. Without prlimit they start helperExec instead:
// this program again, which does all of it on its only locked thread and
// execs the command (a Go start-up more, ~2 ms).
//
// A program using these backends calls Init first thing in main (and in
// TestMain); without it the probes report why.
const (
	helperNative   = "miam-sandbox-native"
	helperLandlock = "miam-sandbox-landlock"
	helperExec     = "miam-sandbox-exec"
)

// selfExe is the helper binary: this very program.
const selfExe = "/proc/self/exe"

// helperFailed is the exit status of a helper that could not set the
// sandbox up (its reason is on stderr, prefixed with "miam-sandbox:").
const helperFailed = 125

// job is what a helper is told to do.
type job struct {
	Backend  string   `json:"backend"`
	Argv     []string `json:"argv"`
	Env      []string `json:"env"`
	Dir      string   `json:"dir"`       // the command's working directory
	Clone    string   `json:"clone"`     // bound read-write (its .git read-only), "" for none
	ReadOnly []string `json:"read_only"` // extra read-only roots
	Tmp      string   `json:"tmp"`       // Landlock: the private host directory used as TMPDIR
	TmpSize  int64    `json:"tmp_size"`  // native: size of /tmp and /dev/shm
	Rlimits  []rlimit `json:"rlimits"`
	// Prlimit, when set, is the prlimit binary the native helper starts
	// the command through (startNativeCommand).
	Prlimit string `json:"prlimit,omitempty"`
	// LandlockABI is the ABI the Landlock ruleset is built for; 0 (native
	// only) means no Landlock.
	LandlockABI int `json:"landlock_abi,omitempty"`
}

type rlimit struct {
	Resource int    `json:"resource"`
	Value    uint64 `json:"value"`
}

// rlimitsOf are the rlimits of p (the same as prlimit's for bwrap).
func rlimitsOf(p Policy) []rlimit {
	l := p.Limits.withDefaults(p.timeout())
	rl := []rlimit{
		{unix.RLIMIT_CORE, 0},
		{unix.RLIMIT_NOFILE, uint64(l.NoFile)},
		{unix.RLIMIT_FSIZE, uint64(l.FileSize)},
		{unix.RLIMIT_CPU, uint64(l.CPU.Seconds() + 0.999)},
		{unix.RLIMIT_NPROC, uint64(l.Procs)},
	}
	if l.AddressSpace > 0 {
		rl = append(rl, rlimit{unix.RLIMIT_AS, uint64(l.AddressSpace)})
	}
	return rl
}

// jobPipe returns the read end of a pipe holding j, for descriptor 3.
func jobPipe(j job) (*os.File, error) {
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: job pipe: %w", err)
	}
	go func() { // a long argv may not fit in the pipe buffer
		w.Write(b)
		w.Close()
	}()
	return r, nil
}

// initCalled records that this program called Init, so that it can serve
// as its own helper. It is the package's only mutable state, written once
// at start-up: without it a probe would have to re-execute a program that
// may not know the helper's argv[0], and a test binary that does not would
// run all its tests again inside the probe.
var initCalled atomic.Bool

// Init runs the sandbox helper and exits when this process is one (argv[0]
// names a helper stage); otherwise it returns at once. Call it first thing
// in main and in TestMain of packages whose tests run the native or
// Landlock backend; without it those backends report why they are off.
func Init() {
	if len(os.Args) == 0 {
		return
	}
	defer initCalled.Store(true)
	var stage func(job) (int, error)
	switch os.Args[0] {
	case helperNative:
		stage = nativeInit
	case helperLandlock:
		stage = landlockInit
	case helperExec:
		stage = execStage
	default:
		return
	}
	// Every stage acts on the calling thread's credentials, seccomp and
	// Landlock domain before a fork or exec: keep it on one thread.
	runtime.LockOSThread()
	f := os.NewFile(3, "job")
	var j job
	err := json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&j)
	f.Close()
	code := helperFailed
	if err == nil {
		code, err = stage(j)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "miam-sandbox: %s: %v\n", os.Args[0], err)
		os.Exit(helperFailed)
	}
	os.Exit(code)
}

// startExec starts the helperExec stage for j from the current (locked)
// thread, with stdio inherited and j on descriptor 3, in a new session (no
// controlling terminal).
func startExec(j job, attr *syscall.SysProcAttr) (int, error) {
	r, err := jobPipe(j)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	attr.Setsid = true
	pid, err := syscall.ForkExec(selfExe, []string{helperExec}, &syscall.ProcAttr{
		Dir:   "/",
		Env:   []string{},
		Files: []uintptr{0, 1, 2, r.Fd()},
		Sys:   attr,
	})
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", helperExec, err)
	}
	return pid, nil
}

// exitCode turns a wait status into the helper's own exit code: the
// command's, or 128+signal like a shell.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// execStage applies the limits and filters on this thread and execs the
// command; it returns only on failure.
func execStage(j job) (int, error) {
	for _, rl := range j.Rlimits {
		if err := setrlimit(rl); err != nil {
			return 0, err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("no_new_privs: %w", err)
	}
	if j.Backend == BackendLandlock || j.LandlockABI > 0 {
		if err := landlockRestrict(j); err != nil {
			return 0, err
		}
	}
	// Landlock alone does not stop UDP or connecting to a host unix socket
	// (SANDBOX.md): no socket() at all; socketpair still works.
	prog, err := seccompProgram(j.Backend == BackendLandlock)
	if err != nil {
		return 0, err
	}
	if err := installSeccomp(prog); err != nil {
		return 0, err
	}
	if err := os.Chdir(j.Dir); err != nil {
		return 0, fmt.Errorf("chdir: %w", err)
	}
	err = syscall.Exec(j.Argv[0], j.Argv, j.Env)
	return 0, fmt.Errorf("exec %s: %w", j.Argv[0], err)
}

// setrlimit lowers one limit, never above the current hard limit (raising
// it needs a privilege the sandbox does not have). syscall.Setrlimit, not
// unix's, so that Go forgets the RLIMIT_NOFILE it raised at start-up.
func setrlimit(rl rlimit) error {
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(rl.Resource, &cur); err != nil {
		return fmt.Errorf("getrlimit %d: %w", rl.Resource, err)
	}
	v := min(rl.Value, cur.Max)
	if err := syscall.Setrlimit(rl.Resource, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
		return fmt.Errorf("setrlimit %d=%d: %w", rl.Resource, v, err)
	}
	return nil
}

// installSeccomp installs prog on the calling thread (no_new_privs is set).
func installSeccomp(prog []byte) error {
	fprog := unix.SockFprog{Len: uint16(len(prog) / 8), Filter: (*unix.SockFilter)(unsafe.Pointer(&prog[0]))}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}
