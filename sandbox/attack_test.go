package sandbox

import (
	"golang.org/x/sys/unix"

	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The attack tests of SANDBOX.md §4. Each runs through Runner.Run on every
// backend that works on this machine, and through Runner.Prepare for
// bubblewrap (bwrap-prepared: the sandbox started ahead, blocked before the
// exec), and asserts on host-side effects (a file not created, a
// connection not accepted, a canary not leaked). When no backend works,
// sandboxTest checks that Run refuses with ErrNoIsolation instead.

// shared probes the machine once for the whole test binary.
var (
	sharedOnce sync.Once
	sharedCaps Capabilities
)

func machineCaps() Capabilities {
	sharedOnce.Do(func() { sharedCaps = Detect(context.Background()) })
	return sharedCaps
}

// box is one sandbox under test: a runner forced to one backend and a
// clone of a small repository.
type box struct {
	t       *testing.T
	r       *Runner
	backend string
	// prepared runs through Runner.Prepare and Prepared.Run.
	prepared bool
	clone    *Clone
	src      string
	outside  string // a world-readable directory outside the clone
}

// forEachBackend runs f for every available backend; without any, it checks
// that Run refuses with ErrNoIsolation.
func forEachBackend(t *testing.T, f func(t *testing.T, b *box)) {
	caps := machineCaps()
	ran := false
	for _, p := range caps.Probes {
		if !p.OK {
			t.Logf("backend %s not tested here: %s", p.Backend, p.Reason)
			continue
		}
		ran = true
		t.Run(p.Backend, func(t *testing.T) { f(t, newBox(t, p.Backend)) })
		if p.Backend == BackendBwrap {
			t.Run(p.Backend+"-prepared", func(t *testing.T) {
				b := newBox(t, p.Backend)
				b.prepared = true
				f(t, b)
			})
		}
	}
	if !ran {
		b := newBox(t, BackendAuto)
		_, err := b.r.Run(t.Context(), b.clone.Policy(Policy{}), []string{"/usr/bin/true"})
		if !errors.Is(err, ErrNoIsolation) {
			t.Fatalf("no backend works here, yet Run returned %v instead of ErrNoIsolation", err)
		}
	}
}

func newBox(t *testing.T, backend string) *box {
	t.Helper()
	caps := machineCaps()
	src := gitRepo(t, map[string]string{"a.txt": "a\n"})
	c, err := NewClone(t.Context(), src, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Outside the clone and reachable by the sandbox's uid on the host
	// (unlike t.TempDir, whose parent is 0700): only the sandbox hides it.
	outside, err := os.MkdirTemp("", "miam-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	if err := os.Chmod(outside, 0o777); err != nil {
		t.Fatal(err)
	}
	return &box{
		t: t, backend: backend, clone: c, src: src, outside: outside,
		r: &Runner{Detect: func(context.Context) Capabilities { return caps }},
	}
}

// sh runs script with /usr/bin/sh in the sandbox, p's Clone and Backend set.
func (b *box) sh(p Policy, script string) Result {
	b.t.Helper()
	return b.run(p, "/usr/bin/sh", "-c", script)
}

// py runs a Python program in the sandbox.
func (b *box) py(p Policy, prog string) Result {
	b.t.Helper()
	return b.run(p, "/usr/bin/python3", "-c", prog)
}

func (b *box) run(p Policy, argv ...string) Result {
	b.t.Helper()
	if err := b.clone.Seal(); err != nil {
		b.t.Fatal(err)
	}
	p = b.clone.Policy(p)
	p.Backend = b.backend
	if p.Timeout == 0 {
		p.Timeout = 20 * time.Second
	}
	res, err := b.runErr(p, argv)
	if err != nil {
		b.t.Fatalf("Run: %v", err)
	}
	return res
}

// runErr runs argv with p as it is, through Prepare when b.prepared.
func (b *box) runErr(p Policy, argv []string) (Result, error) {
	if !b.prepared {
		return b.r.Run(b.t.Context(), p, argv)
	}
	pr, err := b.r.Prepare(b.t.Context(), p, argv)
	if err != nil {
		return Result{}, err
	}
	defer pr.Close()
	return pr.Run(b.t.Context())
}

// gitRepo makes a committed repository holding files.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		if _, err := Git(t.Context(), dir, args...); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func canary() string { return fmt.Sprintf("canary-%016x", rand.Uint64()) }

func mustNotExist(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			os.RemoveAll(p)
			t.Errorf("the sandbox created %s on the host", p)
		}
	}
}

func mustNotLeak(t *testing.T, res Result, secret string) {
	t.Helper()
	if bytes.Contains(res.Stdout, []byte(secret)) || bytes.Contains(res.Stderr, []byte(secret)) {
		t.Errorf("the canary leaked into the output:\n%s\n%s", res.Stdout, res.Stderr)
	}
}

// listener accepts connections on the host and counts them.
type listener struct {
	net.Listener
	mu  sync.Mutex
	got int
}

func listen(t *testing.T, network, addr string) *listener {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	ln := &listener{Listener: l}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			ln.mu.Lock()
			ln.got++
			ln.mu.Unlock()
			c.Close()
		}
	}()
	return ln
}

func (l *listener) accepted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.got
}

// 1. Host loopback unreachable; a listener inside the sandbox works, except
// with Landlock, which has no network namespace and so denies socket()
// itself.
func TestAttackHostLoopback(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		ln := listen(t, "tcp", "127.0.0.1:0")
		port := ln.Addr().(*net.TCPAddr).Port
		res := b.py(Policy{}, fmt.Sprintf(`
import socket
try:
    s = socket.socket(); s.settimeout(1)
except OSError as e:
    print("no socket", e); raise SystemExit
try:
    s.connect(("127.0.0.1", %d)); print("HOST CONNECTED")
except OSError as e:
    print("host refused", e)
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
c = socket.create_connection(srv.getsockname(), timeout=1); print("INSIDE OK")
`, port))
		if n := ln.accepted(); n != 0 || bytes.Contains(res.Stdout, []byte("HOST CONNECTED")) {
			t.Errorf("the host listener accepted %d connections: %s", n, res.Stdout)
		}
		want := "INSIDE OK"
		if b.backend == BackendLandlock {
			want = "no socket [Errno 1]"
		}
		if !bytes.Contains(res.Stdout, []byte(want)) {
			t.Errorf("control: want %q: %s %s", want, res.Stdout, res.Stderr)
		}
	})
}

// 2. No outside network: TCP, UDP, DNS and bash /dev/tcp fail fast.
func TestAttackNoNetwork(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		ln := listen(t, "tcp", "0.0.0.0:0")
		port := ln.Addr().(*net.TCPAddr).Port
		hostIP := "127.0.0.2"
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
					hostIP = ipn.IP.String()
					break
				}
			}
		}
		start := time.Now()
		res := b.py(Policy{}, fmt.Sprintf(`
import socket
for host, port in (("1.1.1.1", 80), (%q, %d)):
    s = socket.socket(); s.settimeout(1)
    try:
        s.connect((host, port)); print("CONNECTED", host)
    except OSError as e:
        print("tcp fail", host, e)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b"x", ("1.1.1.1", 53)); print("SENT udp")
except OSError as e:
    print("udp fail", e)
try:
    socket.getaddrinfo("example.com", 80); print("RESOLVED")
except OSError as e:
    print("dns fail", e)
`, hostIP, port))
		bashRes := b.run(Policy{}, "/usr/bin/bash", "-c", "exec 3<>/dev/tcp/1.1.1.1/80 && echo CONNECTED bash")
		for _, bad := range []string{"CONNECTED", "SENT", "RESOLVED"} {
			if bytes.Contains(res.Stdout, []byte(bad)) || bytes.Contains(bashRes.Stdout, []byte(bad)) {
				t.Errorf("network reached (%s):\n%s%s", bad, res.Stdout, bashRes.Stdout)
			}
		}
		if n := ln.accepted(); n != 0 {
			t.Errorf("the host listener on %s accepted %d connections", hostIP, n)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("network failures took %v: they should fail at once, not hang", d)
		}
	})
}

// 3. Host unix sockets (pathname and abstract) unreachable.
func TestAttackHostUnixSockets(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		path := filepath.Join(b.outside, "agent.sock")
		pl := listen(t, "unix", path)
		os.Chmod(path, 0o777)
		abstract := fmt.Sprintf("@sbx-%x", rand.Uint64())
		al := listen(t, "unix", abstract)
		res := b.py(Policy{}, fmt.Sprintf(`
import socket
for addr in (%q, "\0" + %q):
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(addr); print("CONNECTED", repr(addr))
    except OSError as e:
        print("fail", e)
`, path, abstract[1:]))
		if pl.accepted()+al.accepted() != 0 || bytes.Contains(res.Stdout, []byte("CONNECTED")) {
			t.Errorf("a host unix socket was reached: %s", res.Stdout)
		}
		if bytes.Count(res.Stdout, []byte("fail")) != 2 {
			t.Errorf("want two failures: %s %s", res.Stdout, res.Stderr)
		}
	})
}

// 4. Secrets outside the clone unreadable.
func TestAttackSecretsUnreadable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		secret := canary()
		home := filepath.Join(b.outside, "home")
		os.MkdirAll(filepath.Join(home, ".ssh"), 0o755)
		key := filepath.Join(home, ".ssh", "id_rsa")
		os.WriteFile(key, []byte(secret), 0o644)
		next := filepath.Join(filepath.Dir(b.clone.Dir), "secret")
		os.WriteFile(next, []byte(secret), 0o644)
		res := b.sh(Policy{}, fmt.Sprintf("cat %s; cat %s; cat /root/.ssh/* 2>&1 | head -c 100; ls -la %s 2>&1", key, next, filepath.Dir(b.clone.Dir)))
		mustNotLeak(t, res, secret)
		// The namespaces mount nothing there; Landlock sees the host's
		// tree but denies reading it.
		want := "No such file"
		if b.backend == BackendLandlock {
			want = "Permission denied"
		}
		if bytes.Count(res.Stderr, []byte(want)) < 2 {
			t.Errorf("want %q for both paths outside the clone: %s", want, res.Stderr)
		}
	})
}

// 5. Writes confined to the clone and /tmp.
func TestAttackWritesConfined(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		m := "marker-" + canary()
		targets := []string{
			filepath.Join(filepath.Dir(b.clone.Dir), m),
			filepath.Join(b.outside, m),
			filepath.Join("/var/tmp", m),
			filepath.Join("/usr", m),
			filepath.Join("/etc", m),
			filepath.Join("/tmp", m),
		}
		var script strings.Builder
		for _, p := range targets {
			fmt.Fprintf(&script, "echo x > %s;", p)
		}
		// $TMPDIR is /tmp, but a private host directory with Landlock.
		fmt.Fprintf(&script, "echo x > %s && echo clone-ok; echo y > \"$TMPDIR/in\" && cat \"$TMPDIR/in\"", m)
		res := b.sh(Policy{}, script.String())
		mustNotExist(t, targets...)
		if _, err := os.Stat(filepath.Join(b.clone.Dir, m)); err != nil {
			t.Errorf("control: writing in the clone should work: %v %s %s", err, res.Stdout, res.Stderr)
		}
		if !bytes.Contains(res.Stdout, []byte("y")) {
			t.Errorf("control: $TMPDIR should be writable: %s", res.Stderr)
		}
	})
}

// 6. Symlink escapes, in the sandbox and through the artefact reader.
func TestAttackSymlinkEscape(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		secret := canary()
		os.WriteFile(filepath.Join(b.outside, "secret"), []byte(secret), 0o644)
		res := b.sh(Policy{}, fmt.Sprintf("ln -s %s l; echo x > l/f; cat l/secret; ln -s %s/secret report.xml", b.outside, b.outside))
		mustNotExist(t, filepath.Join(b.outside, "f"))
		mustNotLeak(t, res, secret)
		got, err := b.clone.ReadFile("report.xml", 1<<20)
		if err == nil || bytes.Contains(got, []byte(secret)) {
			t.Errorf("the artefact reader followed a symlink out of the clone: %q, %v", got, err)
		}
		os.WriteFile(filepath.Join(b.clone.Dir, "ok.xml"), []byte("fine"), 0o644)
		if got, err := b.clone.ReadFile("ok.xml", 1<<20); err != nil || string(got) != "fine" {
			t.Errorf("control: ReadFile(ok.xml) = %q, %v", got, err)
		}
	})
}

// 7. No hard links out; the clone shares no object with the source (E8) and
// is no worktree of it (E9).
func TestAttackHardLinks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		target := filepath.Join(b.outside, "victim")
		os.WriteFile(target, []byte("v"), 0o666)
		b.sh(Policy{}, fmt.Sprintf("ln %s hl", target))
		mustNotExist(t, filepath.Join(b.clone.Dir, "hl"))
		var objects []string
		filepath.WalkDir(filepath.Join(b.clone.Dir, ".git", "objects"), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				objects = append(objects, p)
				if n := linkCount(t, p); n != 1 {
					t.Errorf("%s has %d links: the clone shares objects with the source", p, n)
				}
			}
			return nil
		})
		if len(objects) == 0 {
			t.Fatal("no object in the clone")
		}
		for _, o := range objects {
			os.Chmod(o, 0o644)
			os.WriteFile(o, []byte("corrupt"), 0o644)
		}
		// E9: never a worktree, whose .git file points into the user's repo.
		if fi, err := os.Lstat(filepath.Join(b.clone.Dir, ".git")); err != nil || !fi.IsDir() {
			t.Errorf("the clone's .git is not a directory of its own: %v", err)
		}
		if common, err := b.clone.Git(t.Context(), "rev-parse", "--path-format=absolute", "--git-common-dir"); err != nil || !strings.HasPrefix(string(common), b.clone.Dir+"/") {
			t.Errorf("the clone's git dir is %q (%v), not inside the clone", common, err)
		}
		if out, err := Git(t.Context(), b.src, "fsck", "--strict"); err != nil {
			t.Errorf("corrupting the clone's objects broke the source: %v %s", err, out)
		}
	})
}

// 8. .git read-only inside; planted fsmonitor and pager never run host-side.
func TestAttackGitProtected(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		before, _ := os.ReadFile(filepath.Join(b.clone.Dir, ".git", "config"))
		// Landlock withholds .git during the run: a .git planted then must
		// not survive either.
		b.sh(Policy{}, "echo '[core] fsmonitor = touch /tmp/pwn' >> .git/config; mkdir -p .git/hooks; echo 'touch /tmp/pwn' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout")
		after, _ := os.ReadFile(filepath.Join(b.clone.Dir, ".git", "config"))
		if !bytes.Equal(before, after) {
			t.Errorf(".git/config changed from inside the sandbox:\n%s", after)
		}
		mustNotExist(t, filepath.Join(b.clone.Dir, ".git", "hooks", "post-checkout"))
		// Suppose it were planted anyway: host-side git must not run it.
		marker := filepath.Join(b.outside, "ran")
		cfg := fmt.Sprintf("[core]\n\tfsmonitor = touch %s\n\tpager = touch %s\n[diff]\n\texternal = touch %s\n", marker, marker, marker)
		f, _ := os.OpenFile(filepath.Join(b.clone.Dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString(cfg)
		f.Close()
		os.WriteFile(filepath.Join(b.clone.Dir, "a.txt"), []byte("changed\n"), 0o644)
		hook := filepath.Join(b.clone.Dir, ".git", "hooks", "post-checkout")
		os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
		for _, args := range [][]string{{"status"}, {"diff"}, {"log", "-p"}, {"checkout", "-q", "-b", "x"}} {
			if _, err := b.clone.Git(t.Context(), args...); err != nil {
				t.Errorf("git %v: %v", args, err)
			}
		}
		mustNotExist(t, marker)
	})
}

// 9. Environment and argv scrubbed, including /proc/1/environ (E2).
func TestAttackEnvScrubbed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		secret := canary()
		t.Setenv("SECRET_TOKEN", secret)
		t.Setenv("PLAIN_VAR", secret)
		res := b.sh(Policy{}, "env; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done")
		mustNotLeak(t, res, secret)
		want := "HOME=/tmp/home\n"
		if b.backend == BackendLandlock { // a private host TMPDIR, HOME below it
			tmp := envValue(res.Stdout, "TMPDIR")
			if !strings.HasPrefix(tmp, os.TempDir()+"/miam-sandbox-tmp-") {
				t.Errorf("TMPDIR=%q, want a private directory", tmp)
			}
			want = "HOME=" + tmp + "/home\n"
		}
		if !bytes.Contains(res.Stdout, []byte(want)) {
			t.Errorf("control: the env should hold %s: %s", want, res.Stdout)
		}
		if _, err := b.runErr(b.clone.Policy(Policy{Backend: b.backend, Env: map[string]string{"SECRET_TOKEN": secret}}), []string{"/usr/bin/env"}); !errors.Is(err, ErrSecretEnv) {
			t.Errorf("an allow-listed secret name was not refused: %v", err)
		}
	})
}

// 10. Process isolation: the host's processes are invisible and unreachable
// (kill, ptrace attach by pid, their environ); ptrace inside the sandbox is
// denied by seccomp (TestAttackSeccomp). Landlock has no pid namespace: the
// host's pids stay visible (a documented weakness), unreachable all the
// same through its signal scope and ptrace rules.
func TestAttackProcessIsolation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		pid := os.Getpid()
		self, _ := os.Executable()
		res := b.py(Policy{}, fmt.Sprintf(`
import os, ctypes
print("visible" if os.path.exists("/proc/%d") else "hidden")
try:
    os.kill(%d, 0); print("KILLED-OK")
except OSError as e:
    print("kill fail", e)
try:
    open("/proc/%d/environ", "rb").read(); print("ENVIRON READ")
except OSError as e:
    print("environ fail", e)
for p in ("/proc/1/exe", %q):
    try:
        open(p, "r+b"); print("WRITABLE", p)
    except OSError as e:
        print("open fail", e)
libc = ctypes.CDLL(None, use_errno=True)
print("ptrace", libc.ptrace(16, %d, 0, 0), ctypes.get_errno())
`, pid, pid, pid, self, pid))
		out := string(res.Stdout)
		if b.backend != BackendLandlock && !strings.Contains(out, "hidden") {
			t.Errorf("the host's processes are visible:\n%s%s", out, res.Stderr)
		}
		for _, want := range []string{"kill fail", "environ fail", "ptrace -1 "} {
			if !strings.Contains(out, want) {
				t.Errorf("want %q:\n%s%s", want, out, res.Stderr)
			}
		}
		if strings.Contains(out, "WRITABLE") {
			t.Errorf("an executable outside is writable:\n%s%s", out, res.Stderr)
		}
	})
}

// The seccomp filter (SANDBOX.md §3.4) is installed: the denied syscalls
// fail with EPERM, clone3 with ENOSYS, and ordinary fork and socketpair
// still work.
func TestAttackSeccomp(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		res := b.py(Policy{}, fmt.Sprintf(`
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def sc(name, nr, *args):
    r = libc.syscall(nr, *[ctypes.c_long(a) for a in args])
    print(name, r, os.strerror(ctypes.get_errno()) if r < 0 else "ALLOWED")
sc("ptrace", %d, 16, 1, 0, 0)
sc("unshare", %d, 0x10000000)
sc("clone-newnet", %d, 0x40000000|17, 0, 0, 0, 0)
sc("clone3", %d, 0, 0)
sc("io_uring_setup", %d, 1, 0)
sc("keyctl", %d, 0, 0)
sc("bpf", %d, 0, 0, 0)
sc("tiocsti", %d, 0, 0x5412, 0)
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
socket.socketpair()
print("fork and socketpair ok")
`, sysPtrace, sysUnshare, sysClone, sysClone3, sysIOUringSetup, sysKeyctl, sysBPF, sysIoctl))
		out := string(res.Stdout)
		for _, want := range []string{"ptrace -1 Operation not permitted", "unshare -1 Operation not permitted", "clone-newnet -1 Operation not permitted",
			"clone3 -1 Function not implemented", "io_uring_setup -1 Operation not permitted", "keyctl -1 Operation not permitted",
			"bpf -1 Operation not permitted", "tiocsti -1 Operation not permitted", "fork and socketpair ok"} {
			if !strings.Contains(out, want) {
				t.Errorf("want %q:\n%s%s", want, out, res.Stderr)
			}
		}
	})
}

// 11. No privilege, even when miam runs as root (E1).
func TestAttackNoPrivilege(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		m := "/usr/escape-" + canary()
		res := b.sh(Policy{}, fmt.Sprintf("grep -E '^(NoNewPrivs|CapEff|CapPrm|Uid)' /proc/self/status; unshare -r true && echo UNSHARED; mount -o remount,rw / && echo REMOUNTED; mount -o remount,rw /usr && touch %s && echo WROTE", m))
		out := string(res.Stdout)
		if !strings.Contains(out, "NoNewPrivs:\t1") || !strings.Contains(out, "CapEff:\t0000000000000000") {
			t.Errorf("privileges left:\n%s", out)
		}
		for _, bad := range []string{"UNSHARED", "REMOUNTED", "WROTE"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s:\n%s%s", bad, out, res.Stderr)
			}
		}
		mustNotExist(t, m)
		if os.Geteuid() == 0 && !strings.Contains(out, "Uid:\t65534") {
			t.Errorf("as root the command must run as an unprivileged uid:\n%s", out)
		}
	})
}

// 12. Fork bomb bounded; nothing left behind.
func TestAttackForkBomb(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		m := "forkmark" + canary()[7:]
		start := time.Now()
		res := b.py(Policy{Timeout: 5 * time.Second, Limits: Limits{Procs: 64}}, fmt.Sprintf(`
import os, time, sys
n = 0
for i in range(5000):
    try:
        if os.fork() == 0:
            sys.argv[0] = %q
            time.sleep(60); os._exit(0)
        n += 1
    except OSError:
        break
print("forked", n, flush=True)
os.execv("/usr/bin/sleep", ["sleep", "60", %q])
`, m, m))
		if !bytes.Contains(res.Stdout, []byte("forked")) || bytes.Contains(res.Stdout, []byte("forked 5000")) {
			t.Errorf("fork loop not bounded: %s %s", res.Stdout, res.Stderr)
		}
		if d := time.Since(start); d > 7*time.Second {
			t.Errorf("Run took %v, want at most timeout + 2s", d)
		}
		assertNoProcess(t, m)
	})
}

// 13. Memory, disk and CPU bounded; the runner survives.
func TestAttackResourcesBounded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		res := b.py(Policy{Limits: Limits{AddressSpace: 1 << 30}}, `
try:
    x = bytearray(6 << 30); print("ALLOCATED")
except MemoryError:
    print("memory refused")
`)
		if !bytes.Contains(res.Stdout, []byte("memory refused")) {
			t.Errorf("6 GiB allocation: %s %s", res.Stdout, res.Stderr)
		}
		res = b.sh(Policy{Limits: Limits{FileSize: 8 << 20}}, "head -c 64M /dev/zero > big; head -c 64M /dev/zero > /tmp/big; ls -l /tmp/big")
		if fi, err := os.Stat(filepath.Join(b.clone.Dir, "big")); err != nil || fi.Size() > 8<<20 {
			t.Errorf("file size not bounded: %v %v", fi, err)
		}
		if bytes.Contains(res.Stdout, []byte("67108864")) {
			t.Errorf("/tmp file size not bounded: %s", res.Stdout)
		}
		// /dev is no uncapped tmpfs: bwrap's --dev was one, writable.
		res = b.sh(Policy{}, "head -c 1M /dev/zero > /dev/big; wc -c < /dev/big")
		mustNotExist(t, "/dev/big")
		if bytes.Contains(res.Stdout, []byte("1048576")) {
			t.Errorf("1 MiB stored in /dev: %s", res.Stdout)
		}
		start := time.Now()
		res = b.py(Policy{Timeout: 10 * time.Second, Limits: Limits{CPU: time.Second}}, "while True: pass")
		if d := time.Since(start); d > 5*time.Second || res.ExitCode == 0 {
			t.Errorf("busy loop ran %v, exit %d: want a kill at the 1 s CPU limit", d, res.ExitCode)
		}
	})
}

// 14. Output flood capped; the process killed quickly.
func TestAttackOutputFlood(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		start := time.Now()
		res := b.run(Policy{MaxOutput: 1024, HardOutput: 1 << 20}, "/usr/bin/yes")
		if !res.OutputLimited || len(res.Stdout) != 1024 || res.StdoutTotal <= 1<<20 {
			t.Errorf("OutputLimited=%v len=%d total=%d", res.OutputLimited, len(res.Stdout), res.StdoutTotal)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("the flood ran %v, want a kill within 1 s", d)
		}
	})
}

// 15. The timeout kills the whole tree, setsid and double forks too (E6).
func TestAttackTimeoutKillsTree(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		n := 1000 + rand.IntN(1000)
		script := fmt.Sprintf("sleep %d.1 & setsid sleep %d.2 & (sleep %d.3 &); sleep %d.4", n, n, n, n)
		start := time.Now()
		res := b.sh(Policy{Timeout: time.Second}, script)
		if !res.TimedOut {
			t.Errorf("TimedOut = false")
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Run returned after %v, want ~1 s", d)
		}
		assertNoProcess(t, fmt.Sprintf("sleep %d.", n))
	})
}

// assertNoProcess fails when a host process's command line holds marker,
// allowing the kernel a moment to reap.
func assertNoProcess(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := processesWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				if p, err := os.FindProcess(pid); err == nil {
					p.Kill()
				}
			}
			t.Errorf("processes left behind: %v", left)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func processesWith(marker string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(bytes.ReplaceAll(b, []byte{0}, []byte{' '}), []byte(marker)) {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && bytes.Contains(st, []byte(") Z ")) {
				continue // a zombie is dead
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

// 16. The allow-list runs before anything: Run refuses an argv[0] in the
// clone without even probing the machine (TestParse covers the lines).
func TestAttackAllowListBeforeExec(t *testing.T) {
	src := gitRepo(t, map[string]string{"bin/pytest": "#!/bin/sh\ntouch /tmp/pwned\n"})
	c, err := NewClone(t.Context(), src, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	probed := false
	r := &Runner{Detect: func(context.Context) Capabilities { probed = true; return machineCaps() }}
	for _, argv := range [][]string{
		{filepath.Join(c.Dir, "bin", "pytest")},
		{"bin/pytest"},
		{"/usr/../" + c.Dir + "/bin/pytest"},
		{"/tmp/x"},
	} {
		if _, err := r.Run(t.Context(), c.Policy(Policy{}), argv); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("Run(%q) = %v, want ErrNotAllowed", argv, err)
		}
		if _, err := r.Prepare(t.Context(), c.Policy(Policy{}), argv); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("Prepare(%q) = %v, want ErrNotAllowed", argv, err)
		}
	}
	if probed {
		t.Error("a refused command reached backend detection")
	}
}

// 17. No silent unsandboxed run: injected failing probes give
// ErrNoIsolation naming each; AllowUnsandboxed runs with a warning.
func TestAttackNoSilentUnsandboxedRun(t *testing.T) {
	failing := Capabilities{Probes: []Probe{
		{Backend: BackendBwrap, Reason: "not found at /usr/bin/bwrap", Fix: "install the 'bubblewrap' package"},
		{Backend: BackendNative, Reason: "clone(CLONE_NEWUSER): operation not permitted"},
		{Backend: BackendLandlock, Reason: "kernel reports no Landlock support"},
	}}
	src := gitRepo(t, map[string]string{"a": "a"})
	c, err := NewClone(t.Context(), src, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Seal(); err != nil {
		t.Fatal(err)
	}
	var warned []string
	r := &Runner{Detect: func(context.Context) Capabilities { return failing }, Warn: func(m string) { warned = append(warned, m) }}
	m := filepath.Join(c.Dir, "ran")
	_, err = r.Run(t.Context(), c.Policy(Policy{}), []string{"/usr/bin/touch", m})
	if !errors.Is(err, ErrNoIsolation) {
		t.Fatalf("err = %v, want ErrNoIsolation", err)
	}
	for _, want := range []string{"bwrap:", "not found at /usr/bin/bwrap", "install the 'bubblewrap' package", "native:", "CLONE_NEWUSER", "landlock:", "allow_unsandboxed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the diagnostic lacks %q:\n%v", want, err)
		}
	}
	mustNotExist(t, m)
	if _, err := r.Run(t.Context(), c.Policy(Policy{Backend: BackendBwrap, AllowUnsandboxed: true}), []string{"/usr/bin/touch", m}); !errors.Is(err, ErrNoIsolation) {
		t.Errorf("a forced backend fell back: %v", err)
	}
	res, err := r.Run(t.Context(), c.Policy(Policy{AllowUnsandboxed: true}), []string{"/usr/bin/touch", m})
	if err != nil {
		t.Fatal(err)
	}
	if res.Backend != BackendNone || len(warned) != 1 || !strings.Contains(strings.Join(res.Warnings, "\n"), "WITHOUT isolation") {
		t.Errorf("Backend=%q warned=%q warnings=%q", res.Backend, warned, res.Warnings)
	}
	if _, err := os.Stat(m); err != nil {
		t.Errorf("the opted-in unsandboxed run did not run: %v", err)
	}
}

// 18. TTY injection: no controlling terminal, TIOCSTI fails.
func TestAttackTTYInjection(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		res := b.py(Policy{}, `
import fcntl, termios, os
for fd in (0, 1, 2):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"x"); print("INJECTED", fd)
    except OSError as e:
        print("fail", e)
try:
    os.open("/dev/tty", os.O_RDWR); print("TTY OPENED")
except OSError as e:
    print("no tty", e)
`)
		if bytes.Contains(res.Stdout, []byte("INJECTED")) || bytes.Contains(res.Stdout, []byte("TTY OPENED")) || !bytes.Contains(res.Stdout, []byte("no tty")) {
			t.Errorf("tty reachable:\n%s%s", res.Stdout, res.Stderr)
		}
	})
}

// The detection on this machine names a reason for every failed probe.
func TestDetectExplainsFailures(t *testing.T) {
	caps := machineCaps()
	if len(caps.Probes) != 3 {
		t.Fatalf("probes = %+v", caps.Probes)
	}
	for _, p := range caps.Probes {
		if !p.OK && p.Reason == "" {
			t.Errorf("%s failed without a reason", p.Backend)
		}
		t.Logf("%s: ok=%v rlimits=%s %s", p.Backend, p.OK, p.Rlimits, p.Reason)
	}
	// Where bwrap is installed and user namespaces are allowed, a failing
	// probe is a bug of ours, not a machine without isolation.
	if _, err := os.Stat(BwrapPath); err == nil && !strings.Contains(userNSFix(), "=") {
		if p, _ := caps.Lookup(BackendBwrap); !p.OK {
			t.Errorf("bwrap is installed and user namespaces are allowed, yet the probe failed: %s", p.Reason)
		}
	}
	if p := probeBwrap(t.Context(), "/nonexistent/bwrap", false); p.OK || !strings.Contains(p.Fix, "bubblewrap") {
		t.Errorf("missing bwrap: %+v", p)
	}
}

func linkCount(t *testing.T, p string) uint64 {
	t.Helper()
	out, err := exec.Command("/usr/bin/stat", "-c", "%h", p).Output()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	fmt.Sscanf(string(out), "%d", &n)
	return n
}

// TestMain lets this test binary serve as the sandbox helper of the native
// and Landlock backends.
func TestMain(m *testing.M) {
	Init()
	os.Exit(m.Run())
}

// envValue returns the value of name in env's output.
func envValue(out []byte, name string) string {
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, name+"="); ok {
			return v
		}
	}
	return ""
}

// 15b. A process whose main thread exited (SYS_exit on the main thread)
// while another thread runs shows state Z in /proc: it is not dead. The
// Landlock helper used to skip it, report the tree dead and give .git back
// while that thread still held the sandbox's rights on the clone. Run must
// return only once it is gone, on every backend.
func TestAttackMainThreadExitSurvivor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		prog := fmt.Sprintf(`
import ctypes, os, threading, time
if os.fork() == 0:
    for fd in (0, 1, 2):
        os.close(fd)
    def late():
        time.sleep(2)
        open("escaped", "w").write("x")
        open(".git/PWNED", "w").write("x")
    threading.Thread(target=late).start()
    time.sleep(0.2)
    ctypes.CDLL(None).syscall(%d, 0)
time.sleep(0.5)
`, sysExit)
		start := time.Now()
		res := b.py(Policy{Timeout: 10 * time.Second}, prog)
		if res.ExitCode != 0 {
			t.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
		}
		time.Sleep(time.Until(start.Add(3 * time.Second)))
		mustNotExist(t, filepath.Join(b.clone.Dir, ".git", "PWNED"), filepath.Join(b.clone.Dir, "escaped"))
	})
}

// 8b. Filter and diff drivers named by a .gitattributes the command
// planted never run host-side, even if a definition reaches the clone's
// config: directly, or through an include of a file in the worktree.
func TestAttackGitFilterDrivers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		marker := filepath.Join(b.outside, "ran")
		run := "touch " + marker
		// What the command can plant: attributes (top level and below),
		// a config file in the worktree, and attempts at .git/config.
		b.sh(Policy{}, fmt.Sprintf(`
printf '* filter=evil diff=evil\n' > .gitattributes
mkdir -p sub && printf '* filter=evil diff=evil\n' > sub/.gitattributes && echo s > sub/s.txt
printf '[filter "evil"]\n\tclean = %[1]s\n\tsmudge = %[1]s\n\tprocess = %[1]s\n[diff "evil"]\n\ttextconv = %[1]s\n\tcommand = %[1]s\n' > evil.cfg
echo changed-in-sandbox > a.txt
git config filter.evil.clean '%[1]s' 2>/dev/null
git config include.path ../evil.cfg 2>/dev/null
true`, run))
		if _, err := os.Stat(filepath.Join(b.clone.Dir, "evil.cfg")); err != nil {
			t.Fatalf("control: the command could not write the clone: %v", err)
		}
		// Suppose a definition reached .git/config anyway: through an
		// include of the planted file, then spelled out.
		cfgPath := filepath.Join(b.clone.Dir, ".git", "config")
		orig, err := os.ReadFile(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		evil, _ := os.ReadFile(filepath.Join(b.clone.Dir, "evil.cfg"))
		for i, planted := range []string{"[include]\n\tpath = ../evil.cfg\n", string(evil) + "\trequired = true\n", "[includeIf \"gitdir:/\"]\n\tpath = ../evil.cfg\n"} {
			if err := os.WriteFile(cfgPath, append(append([]byte{}, orig...), planted...), 0o644); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(b.clone.Dir, "a.txt"), []byte(fmt.Sprintf("changed %d, a new size\n", i)), 0o644)
			for _, args := range [][]string{{"status"}, {"diff"}, {"diff", "HEAD"}, {"log", "-p"}, {"add", "-A"}, {"checkout", "-q", "-b", fmt.Sprintf("x%d", i)}, {"checkout", "-q", "-f", "HEAD", "--", "a.txt"}} {
				b.clone.Git(t.Context(), args...) // refusing is fine; running the driver is not
				if _, err := os.Stat(marker); err == nil {
					t.Fatalf("git %v ran a planted driver host-side (config %q)", args, planted)
				}
			}
			if _, err := b.clone.Git(t.Context(), "status"); err == nil {
				t.Errorf("git status ran with a driver definition in the config (%q) instead of refusing", planted)
			}
		}
		// Control: without a definition, host-side git still works on a
		// clone whose .gitattributes names drivers.
		if err := os.WriteFile(cfgPath, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := b.clone.Git(t.Context(), "diff", "HEAD"); err != nil || !bytes.Contains(out, []byte("a new size")) {
			t.Errorf("control: git diff HEAD = %q, %v", out, err)
		}
		mustNotExist(t, marker)
	})
}

// A descriptor miam inherited open without close-on-exec (a pipe of the
// program that started it, a socket) never reaches the command.
func TestAttackInheritedDescriptor(t *testing.T) {
	fd, err := unix.Open("/dev/null", unix.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	const high = 213
	if err := unix.Dup2(fd, high); err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	defer unix.Close(high)
	if flags, err := unix.FcntlInt(uintptr(high), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC != 0 {
		t.Fatalf("the planted descriptor is close-on-exec already (%d, %v)", flags, err)
	}
	forEachBackend(t, func(t *testing.T, b *box) {
		res := b.sh(Policy{}, fmt.Sprintf("if [ -e /proc/self/fd/%d ]; then echo LEAKED; else echo closed; fi", high))
		if !bytes.Contains(res.Stdout, []byte("closed")) || bytes.Contains(res.Stdout, []byte("LEAKED")) {
			t.Errorf("descriptor %d reached the command: %s %s", high, res.Stdout, res.Stderr)
		}
	})
}
