package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Runner runs commands in the sandbox. The zero Runner probes the machine
// once (Detect) on first use; it is safe for concurrent use.
type Runner struct {
	// Detect finds the backends; nil means Detect. Tests inject probes that
	// fail to check ErrNoIsolation.
	Detect func(ctx context.Context) Capabilities
	// Warn receives the warning of every unsandboxed run (it is also in
	// Result.Warnings); nil drops it.
	Warn func(msg string)

	once sync.Once
	caps Capabilities
}

// Capabilities returns the probes, computed once.
func (r *Runner) Capabilities(ctx context.Context) Capabilities {
	r.once.Do(func() {
		detect := r.Detect
		if detect == nil {
			detect = Detect
		}
		r.caps = detect(ctx)
	})
	return r.caps
}

// pick chooses the backend for p.
func (r *Runner) pick(ctx context.Context, p Policy, argv []string) (Probe, error) {
	caps := r.Capabilities(ctx)
	if p.Backend != BackendAuto && p.Backend != BackendNone {
		pr, ok := caps.Lookup(p.Backend)
		if !ok {
			return Probe{}, fmt.Errorf("%w: unknown backend %q", ErrPolicy, p.Backend)
		}
		if !pr.OK {
			return Probe{}, &NoIsolationError{Command: strings.Join(argv, " "), Probes: []Probe{pr}}
		}
		return pr, nil
	}
	if pr, ok := caps.Best(); ok && p.Backend == BackendAuto {
		return pr, nil
	}
	if p.AllowUnsandboxed {
		return Probe{Backend: BackendNone, OK: true, Rlimits: rlimitsPrlimit}, nil // ptrace was never probed
	}
	return Probe{}, &NoIsolationError{Command: strings.Join(argv, " "), Probes: caps.Probes}
}

// Run runs argv (argv[0] an absolute path under /usr or Policy.ReadOnly,
// as Parse returns it) in the sandbox with p, and returns what it did. It
// returns an error, spawning nothing, when the policy is unusable or no
// backend isolates (ErrNoIsolation); a command that fails or times out is
// a Result, not an error.
func (r *Runner) Run(ctx context.Context, p Policy, argv []string) (Result, error) {
	pr, err := r.prepare(ctx, p, argv, false)
	if err != nil {
		return Result{}, err
	}
	defer pr.Close()
	return pr.Run(ctx)
}

// Prepare is Run in two steps: it checks p and argv as Run does and, with
// bubblewrap, starts the sandbox at once (namespaces, mounts, rlimits;
// bwrap then waits on --block-fd before it execs argv), so that its
// set-up overlaps the caller's own work, such as filling the clone, which
// is bound as it is then and seen as it is when Prepared.Run lets the
// command start. Other backends start in Prepared.Run. ctx bounds the
// sandbox's whole life; the caller must Close the Prepared, which kills a
// sandbox never run.
func (r *Runner) Prepare(ctx context.Context, p Policy, argv []string) (*Prepared, error) {
	return r.prepare(ctx, p, argv, true)
}

// prepare checks and builds the run of argv; with ahead, a bwrap sandbox
// is started, blocked before the exec.
func (r *Runner) prepare(ctx context.Context, p Policy, argv []string, ahead bool) (*Prepared, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: empty argv", ErrNotAllowed)
	}
	if err := checkTrusted(argv[0], p.ReadOnly); err != nil {
		return nil, err
	}
	if err := checkPolicy(p); err != nil {
		return nil, err
	}
	env, err := Environ(p.Env)
	if err != nil {
		return nil, err
	}
	pr, err := r.pick(ctx, p, argv)
	if err != nil {
		return nil, err
	}
	spec := Spec{Backend: pr.Backend, Bwrap: pr.Path, Policy: p, Argv: argv, Env: env, Root: os.Geteuid() == 0, Rlimits: pr.Rlimits}
	res := Result{Backend: pr.Backend}
	if !spec.Root {
		res.Warnings = append(res.Warnings, "no process limit: RLIMIT_NPROC counts every process of your uid")
	}
	res.Warnings = append(res.Warnings, "no memory or pids cgroup: not delegated on this machine")
	if pr.Backend == BackendNone {
		w := fmt.Sprintf("WARNING: running %q WITHOUT isolation (sandbox.allow_unsandboxed is on in your config): it can read your files and reach the network", strings.Join(argv, " "))
		res.Warnings = append(res.Warnings, w)
		if r.Warn != nil {
			r.Warn(w)
		}
	}
	prep := &Prepared{ctx: ctx, spec: spec, res: res}
	if ahead && spec.Backend == BackendBwrap {
		if err := prep.launch(true); err != nil {
			return nil, err
		}
		prep.x.start()
		prep.stopWatch = context.AfterFunc(ctx, prep.x.abort)
	}
	return prep, nil
}

// Prepared is a run made by Runner.Prepare: with bubblewrap, a sandbox
// already set up and waiting for Run to let the command start.
type Prepared struct {
	ctx       context.Context // Prepare's: bounds the whole life
	spec      Spec
	res       Result // backend and warnings so far
	l         *launched
	x         *proc
	stopWatch func() bool // stops the kill at ctx's end

	mu          sync.Mutex
	ran, closed bool
	afterDone   bool
}

// launch builds the launcher; block makes bwrap wait on a pipe before it
// execs the command.
func (pr *Prepared) launch(block bool) error {
	l, err := launch(pr.spec, block)
	if err != nil {
		return err
	}
	pr.l = l
	pr.res.Warnings = append(pr.res.Warnings, l.warnings...)
	pr.x = newProc(l, pr.spec.Policy)
	return nil
}

// Run lets the command start (starting the sandbox first unless Prepare
// did) and returns what it did, as Runner.Run does; Result.Duration and
// the timeout count from the moment the command is let go. It may be
// called once.
func (pr *Prepared) Run(ctx context.Context) (Result, error) {
	pr.mu.Lock()
	if pr.ran || pr.closed {
		pr.mu.Unlock()
		return Result{}, errors.New("sandbox: Prepared.Run called twice or after Close")
	}
	pr.ran = true
	pr.mu.Unlock()
	t0 := time.Now()
	if pr.l == nil {
		if err := pr.launch(false); err != nil {
			return Result{}, err
		}
		pr.x.start()
	}
	x := pr.x
	<-x.started
	if x.startErr != nil {
		return pr.res, fmt.Errorf("sandbox: start %s: %w", x.l.cmd.Path, x.startErr)
	}
	prepared := pr.l.release >= 0
	if prepared {
		fd := pr.l.release
		if err := pr.ctx.Err(); err != nil {
			x.abort() // ahead of the watcher, which may not have run yet
			<-x.finished
			return pr.res, err
		}
		// The filter, then one byte, let bwrap go on to exec the command.
		// (Should bwrap have exited already, miam's copies of the read ends
		// still take both: the result says so below.)
		t0 = time.Now()
		n, werr := unix.Write(pr.l.filterW, pr.l.filter)
		if werr == nil && n != len(pr.l.filter) {
			werr = fmt.Errorf("seccomp filter: %d of %d bytes written", n, len(pr.l.filter))
		}
		unix.Close(pr.l.filterW)
		pr.l.filterW = -1
		if werr == nil {
			_, werr = unix.Write(fd, []byte{1})
		}
		unix.Close(fd)
		pr.l.release = -1
		if werr != nil {
			x.abort()
			<-x.finished
			return pr.res, fmt.Errorf("sandbox: let the prepared sandbox start: %w", werr)
		}
	}
	res, err := x.finish(ctx, pr.res, t0)
	if err == nil && pr.ctx.Err() != nil && !res.TimedOut {
		err = pr.ctx.Err()
	}
	if err == nil && prepared && bwrapSetupFailed(res) {
		// bwrap gave up while it set the sandbox up (a bind it could not
		// make): not the command's failure, which a test would read.
		return res, fmt.Errorf("sandbox: bubblewrap exited while it prepared the sandbox: %s", bytes.TrimSpace(res.Stderr))
	}
	pr.afterDone = true
	if pr.l.after != nil {
		if aerr := pr.l.after(); aerr != nil && err == nil {
			err = aerr
		}
	}
	return res, err
}

// Close kills a sandbox that was started and not run, waits for it, and
// releases what it held. Call it once Run has returned, or instead of Run.
func (pr *Prepared) Close() error {
	pr.mu.Lock()
	if pr.closed {
		pr.mu.Unlock()
		return nil
	}
	pr.closed = true
	pr.mu.Unlock()
	if pr.stopWatch != nil {
		pr.stopWatch()
	}
	if pr.l == nil {
		return nil
	}
	// Kill before closing the pipe: bwrap takes end of file on it as the
	// go-ahead. (Should miam die, its descriptors close before any signal,
	// and bwrap's --die-with-parent is not yet armed: bwrap goes on, but
	// the seccomp pipe it reads next is empty, since only Run fills it,
	// and bwrap refuses to run anything without a filter.)
	pr.x.abort()
	<-pr.x.finished
	var err error
	if !pr.afterDone && pr.l.after != nil {
		err = pr.l.after()
	}
	pr.l.close()
	return err
}

// launched is a launcher ready to start, with what to do afterwards.
type launched struct {
	cmd      *exec.Cmd
	files    []*os.File // the parent's copies of ExtraFiles, closed by close
	warnings []string
	// limits, when set, are put on the launcher by startLimited.
	limits []rlimit
	// graceful: stop the launcher with SIGTERM (it kills the tree
	// itself), SIGKILL only past a delay.
	graceful bool
	// after runs once the launcher is gone (Landlock: give .git back).
	after func() error
	// cleanup removes what launch made (Landlock's private TMPDIR).
	cleanup []func()
	// release is the write end of bwrap's --block-fd pipe, -1 without one.
	release int
	// filterW is the write end of the seccomp pipe, filled only by Run
	// (-1 when filled at launch): bwrap reads it to EOF after the block,
	// so should miam die first, bwrap reads no filter and fails closed.
	filterW int
	filter  []byte
}

func (l *launched) close() {
	if l.release >= 0 {
		unix.Close(l.release)
		l.release = -1
	}
	if l.filterW >= 0 {
		unix.Close(l.filterW)
		l.filterW = -1
	}
	for _, f := range l.files {
		f.Close()
	}
	for _, c := range l.cleanup {
		c()
	}
}

// launch builds the launcher of s with the descriptors and host-side
// set-up its backend needs; Run and the probes share it. With block, bwrap
// waits on a pipe (launched.release) before it execs the command.
func launch(s Spec, block bool) (*launched, error) {
	closeInherited()
	l := &launched{release: -1, filterW: -1}
	fail := func(err error) (*launched, error) {
		l.close()
		return nil, err
	}
	if (s.Backend == BackendNative || s.Backend == BackendLandlock) && !initCalled.Load() {
		return nil, fmt.Errorf("%w: the %s backend needs sandbox.Init() first thing in main", ErrNoIsolation, s.Backend)
	}
	switch s.Backend {
	case BackendBwrap, BackendNone:
		switch _, err := os.Stat(prlimitPath); {
		case s.Rlimits != rlimitsPrlimit:
			l.limits = rlimitsOf(s.Policy)
		case err == nil:
			s.Prlimit = prlimitPath
		default:
			l.warnings = append(l.warnings, "no rlimits: ptrace is refused and "+prlimitPath+" (util-linux) is missing")
		}
		if s.Backend == BackendNone {
			l.warnings = append(l.warnings, "no seccomp filter")
			break
		}
		var filter *os.File
		var err error
		if block {
			if l.filter, err = seccompFilter(); err != nil {
				return fail(err)
			}
			// Run writes it before bwrap reads it: a pipe always holds a
			// page, but may hold no more (pipe-user-pages-soft).
			if len(l.filter) > pipeAtLeast {
				return fail(fmt.Errorf("sandbox: a seccomp filter of %d bytes is more than a pipe surely holds (%d)", len(l.filter), pipeAtLeast))
			}
			filter, l.filterW, err = gatePipe()
		} else {
			filter, err = seccompPipe()
		}
		if err != nil {
			return fail(err)
		}
		l.files = append(l.files, filter)
		s.SeccompFD = 3
		if block {
			r, w, err := gatePipe()
			if err != nil {
				return fail(err)
			}
			l.files = append(l.files, r)
			l.release = w
			s.BlockFD = 4
		}
	case BackendNative:
		j := s.job()
		if _, err := os.Stat(prlimitPath); err == nil && s.Rlimits != rlimitsHelper {
			j.Prlimit = prlimitPath
		}
		if abi, err := landlockABI(); err == nil {
			j.LandlockABI = abi
		} else {
			l.warnings = append(l.warnings, "native backend: no Landlock defence in depth (the kernel has none)")
		}
		pipe, err := jobPipe(j)
		if err != nil {
			return fail(err)
		}
		l.files = append(l.files, pipe)
	case BackendLandlock:
		if err := landlockHost(s, l); err != nil {
			return fail(err)
		}
	default:
		return fail(fmt.Errorf("%w: unknown backend %q", ErrPolicy, s.Backend))
	}
	l.cmd = Command(s)
	l.cmd.ExtraFiles = l.files
	return l, nil
}

// bwrapSetupFailed reports a run that bubblewrap ended before the
// command's exec: exit 1, nothing on stdout, its own message on stderr. (A
// command imitating it only turns its failure into a sandbox error, never
// into a pass.)
func bwrapSetupFailed(res Result) bool {
	return res.Backend == BackendBwrap && res.ExitCode == 1 && len(res.Stdout) == 0 && bytes.HasPrefix(res.Stderr, []byte("bwrap: "))
}

// pipeAtLeast is what a pipe holds whatever its owner's limits: a page.
const pipeAtLeast = 4096

// closeInherited marks close-on-exec every descriptor open without it (a
// pipe of the program that started miam, a socket it inherited): Go opens
// its own with it, but exec passes the others on, through the launcher and
// bwrap, to the sandboxed command. One system call, before each launch.
func closeInherited() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Before Linux 5.11: one by one.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// seccompPipe returns the read end of a pipe holding the seccomp filter.
func seccompPipe() (*os.File, error) {
	prog, err := seccompFilter()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if _, err := w.Write(prog); err != nil { // a few hundred bytes: the pipe holds them
		r.Close()
		return nil, err
	}
	return r, nil
}

// gatePipe returns a pipe a prepared bwrap waits on (the --block-fd one,
// and the seccomp one it reads next): the read end for bwrap, the write end
// as a bare descriptor (no finalizer may close it, which would let the
// command start) that no child inherits.
func gatePipe() (*os.File, int, error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, -1, fmt.Errorf("sandbox: pipe: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "gate"), fds[1], nil
}

// checkPolicy refuses a clone that is relative, not a directory, not
// symlink-free, or without .git, and read-only paths that are relative.
func checkPolicy(p Policy) error {
	if !filepath.IsAbs(p.Clone) {
		return fmt.Errorf("%w: clone %q is not absolute", ErrPolicy, p.Clone)
	}
	real, err := filepath.EvalSymlinks(p.Clone)
	if err != nil {
		return fmt.Errorf("%w: clone: %v", ErrPolicy, err)
	}
	if real != filepath.Clean(p.Clone) || real == "/" {
		return fmt.Errorf("%w: clone %q must be a symlink-free directory below /", ErrPolicy, p.Clone)
	}
	if fi, err := os.Lstat(filepath.Join(real, ".git")); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: clone %q has no .git directory", ErrPolicy, p.Clone)
	}
	for _, ro := range p.ReadOnly {
		ro = filepath.Clean(ro)
		switch {
		case !filepath.IsAbs(ro):
			return fmt.Errorf("%w: read-only path %q is not absolute", ErrPolicy, ro)
		case ro == "/" || within(real, ro) || within(ro, real):
			return fmt.Errorf("%w: read-only path %q overlaps / or the clone", ErrPolicy, ro)
		}
	}
	return nil
}

// run starts the launcher of l, caps its output, and kills its whole tree
// at the timeout, at ctx's end or past HardOutput (the probes).
func run(ctx context.Context, l *launched, p Policy, res Result) (Result, error) {
	t0 := time.Now()
	x := newProc(l, p)
	x.start()
	<-x.started
	if x.startErr != nil {
		return res, fmt.Errorf("sandbox: start %s: %w", l.cmd.Path, x.startErr)
	}
	return x.finish(ctx, res, t0)
}

// proc is one launcher's life: start forks it, finish waits for it.
type proc struct {
	l              *launched
	p              Policy
	stdout, stderr *capped
	kill           chan struct{} // closed once a stream passed HardOutput
	started        chan struct{} // closed once startErr is set
	startErr       error
	finished       chan struct{} // closed once waitErr is set
	waitErr        error
}

func newProc(l *launched, p Policy) *proc {
	x := &proc{l: l, p: p, kill: make(chan struct{}), started: make(chan struct{}), finished: make(chan struct{})}
	var killOnce sync.Once
	stop := func() { killOnce.Do(func() { close(x.kill) }) }
	x.stdout = &capped{keep: p.maxOutput(), hard: p.hardOutput(), over: stop}
	x.stderr = &capped{keep: p.maxOutput(), hard: p.hardOutput(), over: stop}
	l.cmd.Stdout, l.cmd.Stderr = x.stdout, x.stderr
	l.cmd.WaitDelay = 2 * time.Second
	return x
}

// start forks the launcher and waits for it, in a goroutine.
func (x *proc) start() {
	cmd := x.l.cmd
	// Pdeathsig fires when the thread that forked exits, not the process
	// (golang/go#27505): fork from a thread held until Wait returns.
	go func() {
		runtime.LockOSThread()
		tainted := false
		defer func() {
			if !tainted { // else the goroutine ends locked and Go drops the thread
				runtime.UnlockOSThread()
			}
		}()
		var err error
		if x.l.limits != nil {
			tainted, err = startLimited(cmd, x.l.limits)
		} else {
			err = cmd.Start()
		}
		x.startErr = err
		close(x.started)
		if err != nil {
			x.waitErr = err
			close(x.finished)
			return
		}
		x.waitErr = cmd.Wait()
		close(x.finished)
	}()
}

// abort kills the launcher's tree at once, if it started and still runs.
func (x *proc) abort() {
	<-x.started
	if x.startErr != nil {
		return
	}
	select {
	case <-x.finished:
		return
	default:
	}
	_ = syscall.Kill(-x.l.cmd.Process.Pid, syscall.SIGKILL)
	_ = x.l.cmd.Process.Kill()
}

// finish waits for the started launcher, killing its tree at the timeout
// (counted from t0), at ctx's end or past HardOutput, and fills res.
func (x *proc) finish(ctx context.Context, res Result, t0 time.Time) (Result, error) {
	cmd, graceful, p := x.l.cmd, x.l.graceful, x.p
	timer := time.NewTimer(p.timeout() - time.Since(t0))
	defer timer.Stop()
	select {
	case <-x.finished:
	case <-timer.C:
		res.TimedOut = true
		killTree(cmd, x.finished, graceful)
	case <-ctx.Done():
		killTree(cmd, x.finished, graceful)
	case <-x.kill:
		killTree(cmd, x.finished, graceful)
	}
	err := x.waitErr
	res.Duration = time.Since(t0)
	res.Stdout, res.StdoutTotal = x.stdout.bytes()
	res.Stderr, res.StderrTotal = x.stderr.bytes()
	res.OutputLimited = x.stdout.limited() || x.stderr.limited()
	res.ExitCode = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) && !errors.Is(err, exec.ErrWaitDelay) {
		return res, fmt.Errorf("sandbox: wait: %w", err)
	}
	if ctx.Err() != nil && !res.TimedOut {
		return res, ctx.Err()
	}
	return res, nil
}

// killTree stops the launcher and waits. With bwrap the launcher is pid
// 1's parent and --die-with-parent takes the whole pid namespace down; the
// native helper is pid 1 itself. The Landlock helper has no pid namespace:
// it gets SIGTERM and kills the tree (graceful), and SIGKILL only if it has
// not exited within 3 s. Without a backend the group is all we reach.
func killTree(cmd *exec.Cmd, finished <-chan struct{}, graceful bool) {
	if graceful {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-finished:
			return
		case <-time.After(3 * time.Second):
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
	<-finished
}

// capped keeps the first keep bytes written, counts all of them, and calls
// over once the count passes hard.
type capped struct {
	mu    sync.Mutex
	keep  int64
	hard  int64
	buf   []byte
	total int64
	over  func()
}

func (c *capped) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.keep - int64(len(c.buf)); room > 0 {
		c.buf = append(c.buf, b[:min(int64(len(b)), room)]...)
	}
	c.total += int64(len(b))
	if c.total > c.hard {
		c.over()
	}
	return len(b), nil
}

func (c *capped) bytes() ([]byte, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf, c.total
}

func (c *capped) limited() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > c.keep
}
