package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
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
	if len(argv) == 0 {
		return Result{}, fmt.Errorf("%w: empty argv", ErrNotAllowed)
	}
	if err := checkTrusted(argv[0], p.ReadOnly); err != nil {
		return Result{}, err
	}
	if err := checkPolicy(p); err != nil {
		return Result{}, err
	}
	env, err := Environ(p.Env)
	if err != nil {
		return Result{}, err
	}
	pr, err := r.pick(ctx, p, argv)
	if err != nil {
		return Result{}, err
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
	l, err := launch(spec)
	if err != nil {
		return Result{}, err
	}
	defer l.close()
	res.Warnings = append(res.Warnings, l.warnings...)
	res, err = run(ctx, l, p, res)
	if l.after != nil {
		if aerr := l.after(); aerr != nil && err == nil {
			err = aerr
		}
	}
	return res, err
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
}

func (l *launched) close() {
	for _, f := range l.files {
		f.Close()
	}
	for _, c := range l.cleanup {
		c()
	}
}

// launch builds the launcher of s with the descriptors and host-side
// set-up its backend needs; Run and the probes share it.
func launch(s Spec) (*launched, error) {
	l := &launched{}
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
		filter, err := seccompPipe()
		if err != nil {
			return fail(err)
		}
		l.files = append(l.files, filter)
		s.SeccompFD = 3
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

// run starts cmd, caps its output, and kills its whole tree at the timeout,
// at ctx's end or past HardOutput.
func run(ctx context.Context, l *launched, p Policy, res Result) (Result, error) {
	cmd, graceful := l.cmd, l.graceful
	kill := make(chan struct{})
	var killOnce sync.Once
	stop := func() { killOnce.Do(func() { close(kill) }) }
	stdout := &capped{keep: p.maxOutput(), hard: p.hardOutput(), over: stop}
	stderr := &capped{keep: p.maxOutput(), hard: p.hardOutput(), over: stop}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	// Pdeathsig fires when the thread that forked exits, not the process
	// (golang/go#27505): fork from a thread held until Wait returns.
	started, done := make(chan error, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		tainted := false
		defer func() {
			if !tainted { // else the goroutine ends locked and Go drops the thread
				runtime.UnlockOSThread()
			}
		}()
		var err error
		if l.limits != nil {
			tainted, err = startLimited(cmd, l.limits)
		} else {
			err = cmd.Start()
		}
		if err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return res, fmt.Errorf("sandbox: start %s: %w", cmd.Path, err)
	}
	timer := time.NewTimer(p.timeout())
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		res.TimedOut = true
		err = killTree(cmd, done, graceful)
	case <-ctx.Done():
		err = killTree(cmd, done, graceful)
	case <-kill:
		err = killTree(cmd, done, graceful)
	}
	res.Duration = time.Since(start)
	res.Stdout, res.StdoutTotal = stdout.bytes()
	res.Stderr, res.StderrTotal = stderr.bytes()
	res.OutputLimited = stdout.limited() || stderr.limited()
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
func killTree(cmd *exec.Cmd, done <-chan error, graceful bool) error {
	if graceful {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			return err
		case <-time.After(3 * time.Second):
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
	return <-done
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
