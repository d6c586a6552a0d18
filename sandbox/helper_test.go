package sandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// The native and Landlock launchers are this program re-executed with an
// empty environment (E2), the job on descriptor 3 rather than in argv, and,
// for native, every namespace new with only the sandbox's ids mapped.
func TestHelperCommand(t *testing.T) {
	p := Policy{Clone: "/w/c", ReadOnly: []string{"/opt/go"}, Timeout: 30 * time.Second}
	argv := []string{"/usr/bin/python3", "-m", "pytest"}
	tests := []struct {
		name      string
		spec      Spec
		wantArg0  string
		wantID    int // the mapped uid and gid; -1: no user namespace
		wantDeath syscall.Signal
	}{
		{"native as root maps only nobody", Spec{Backend: BackendNative, Policy: p, Argv: argv, Root: true}, helperNative, 65534, syscall.SIGKILL},
		{"native as a user maps only the user", Spec{Backend: BackendNative, Policy: p, Argv: argv}, helperNative, os.Getuid(), syscall.SIGKILL},
		{"native as root with a configured uid", Spec{Backend: BackendNative, Policy: Policy{Clone: "/w/c", Uid: 1234, Gid: 1234}, Argv: argv, Root: true}, helperNative, 1234, syscall.SIGKILL},
		// SIGTERM: the Landlock helper kills the tree before it goes.
		{"landlock has no namespace", Spec{Backend: BackendLandlock, Policy: p, Argv: argv}, helperLandlock, -1, syscall.SIGTERM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := Command(tt.spec)
			if diff := cmp.Diff([]string{tt.wantArg0}, cmd.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if cmd.Path != selfExe || cmd.Env == nil || len(cmd.Env) != 0 || cmd.Dir != "/" {
				t.Errorf("Path %q Env %q Dir %q: want this program, an empty environment, /", cmd.Path, cmd.Env, cmd.Dir)
			}
			a := cmd.SysProcAttr
			if !a.Setpgid || a.Pdeathsig != tt.wantDeath {
				t.Errorf("Setpgid %v Pdeathsig %v, want own group and %v", a.Setpgid, a.Pdeathsig, tt.wantDeath)
			}
			if tt.wantID < 0 {
				if a.Cloneflags != 0 || a.Credential != nil || len(a.AmbientCaps) != 0 {
					t.Errorf("Landlock launcher with namespaces, credential or capabilities: %+v", a)
				}
				return
			}
			if a.Cloneflags != nativeCloneFlags || nativeCloneFlags&^cloneNewMask != 0 ||
				nativeCloneFlags&(syscall.CLONE_NEWUSER|syscall.CLONE_NEWNET|syscall.CLONE_NEWPID|syscall.CLONE_NEWNS) == 0 {
				t.Errorf("Cloneflags %#x", a.Cloneflags)
			}
			wantMap := []syscall.SysProcIDMap{{ContainerID: tt.wantID, HostID: tt.wantID, Size: 1}}
			if diff := cmp.Diff(wantMap, a.UidMappings); diff != "" {
				t.Errorf("uid map (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantMap, a.GidMappings); diff != "" {
				t.Errorf("gid map (-want +got):\n%s", diff)
			}
			if a.GidMappingsEnableSetgroups || a.Credential == nil || int(a.Credential.Uid) != tt.wantID || !a.Credential.NoSetGroups {
				t.Errorf("credential %+v setgroups %v", a.Credential, a.GidMappingsEnableSetgroups)
			}
			if diff := cmp.Diff(nativeCaps, a.AmbientCaps); diff != "" {
				t.Errorf("ambient capabilities (-want +got):\n%s", diff)
			}
			j := tt.spec.job()
			if j.Dir != "/w/c" || j.Clone != "/w/c" || !slices.Equal(j.ReadOnly, tt.spec.Policy.ReadOnly) || !slices.Equal(j.Argv, argv) || len(j.Rlimits) < 5 {
				t.Errorf("job %+v", j)
			}
		})
	}
}

// Every backend applies the policy's rlimits to the command, each by both
// of its methods, along with no_new_privs and the seccomp filter.
func TestRlimitsApplied(t *testing.T) {
	lim := Limits{NoFile: 123, FileSize: 7 << 20, CPU: 9 * time.Second, Procs: 77, AddressSpace: 3 << 30}
	want := map[string]string{
		"Max cpu time":       "9",
		"Max file size":      "7340032",
		"Max processes":      "77",
		"Max open files":     "123",
		"Max address space":  "3221225472",
		"Max core file size": "0",
	}
	forEachBackend(t, func(t *testing.T, b *box) {
		methods := []string{"", rlimitsHelper} // through prlimit, or this program again
		if b.backend == BackendBwrap {
			methods = []string{rlimitsPtrace, rlimitsPrlimit}
		}
		for _, via := range methods {
			caps := machineCaps()
			c := Capabilities{Root: caps.Root, Probes: slices.Clone(caps.Probes)}
			for i := range c.Probes {
				if c.Probes[i].Backend == b.backend {
					c.Probes[i].Rlimits = via
				}
			}
			b.r = &Runner{Detect: func(context.Context) Capabilities { return c }}
			res := b.run(Policy{Limits: lim}, "/usr/bin/cat", "/proc/self/limits", "/proc/self/status")
			// The filters come with the limits, whichever way.
			for _, want := range []string{"NoNewPrivs:\t1\n", "Seccomp:\t2\n", "CapEff:\t0000000000000000\n"} {
				if !strings.Contains(string(res.Stdout), want) {
					t.Errorf("by %q: status lacks %q", via, want)
				}
			}
			got := map[string]string{}
			for _, line := range strings.Split(string(res.Stdout), "\n") {
				for name := range want {
					if rest, ok := strings.CutPrefix(line, name); ok {
						f := strings.Fields(rest)
						if len(f) >= 2 && f[0] == f[1] { // soft == hard: the command cannot raise it
							got[name] = f[0]
						} else {
							got[name] = "soft/hard differ: " + rest
						}
					}
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rlimits by %q (-want +got):\n%s\n%s", via, diff, res.Stderr)
			}
		}
	})
}

// The Landlock variant of the filter denies socket() and nothing else
// more: the namespaced backends keep loopback.
func TestSeccompDenySocket(t *testing.T) {
	plain, err := seccompProgram(false)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := seccompProgram(true)
	if err != nil {
		t.Fatal(err)
	}
	if len(strict) != len(plain)+8 {
		t.Fatalf("strict filter is %d bytes, plain %d: want one more instruction", len(strict), len(plain))
	}
	has := func(prog []byte, nr uint32) bool {
		for i := 0; i+8 <= len(prog); i += 8 {
			if binary.LittleEndian.Uint16(prog[i:]) == bpfJeqK && binary.LittleEndian.Uint32(prog[i+4:]) == nr {
				return true
			}
		}
		return false
	}
	if has(plain, unix.SYS_SOCKET) || !has(strict, unix.SYS_SOCKET) {
		t.Errorf("socket() check: plain %v strict %v", has(plain, unix.SYS_SOCKET), has(strict, unix.SYS_SOCKET))
	}
}

// A program that does not call Init is never re-executed as a helper (a
// test binary would run all its tests again): the probes and Run say why.
func TestHelperNeedsInit(t *testing.T) {
	initCalled.Store(false)
	defer initCalled.Store(true)
	root := os.Geteuid() == 0
	var probes []Probe
	if !strings.Contains(userNSFix(), "=") { // else it stops before
		probes = append(probes, probeNative(t.Context(), root))
	}
	if abi, err := landlockABI(); err == nil && abi >= minLandlockABI { // else it stops before
		probes = append(probes, probeLandlock(t.Context(), false))
	}
	for _, p := range probes {
		if p.OK || !strings.Contains(p.Fix, "sandbox.Init()") {
			t.Errorf("%s probe without Init: %+v", p.Backend, p)
		}
	}
	for _, backend := range []string{BackendNative, BackendLandlock} {
		if _, err := launch(Spec{Backend: backend, Argv: []string{"/usr/bin/true"}}, false); !errors.Is(err, ErrNoIsolation) {
			t.Errorf("launch(%s) without Init = %v, want ErrNoIsolation", backend, err)
		}
	}
}

// In the native backend Landlock is defence in depth over the mounts: the
// private /dev tmpfs belongs to the sandbox's uid, so only Landlock stops a
// file being made there, while the clone and /tmp stay writable.
func TestNativeLandlock(t *testing.T) {
	if _, err := landlockABI(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	forEachBackend(t, func(t *testing.T, b *box) {
		if b.backend != BackendNative {
			return
		}
		res := b.sh(Policy{}, "stat -c %u /dev; touch /dev/planted && echo PLANTED; touch in-clone /tmp/in-tmp /dev/shm/in-shm && echo writable")
		out := string(res.Stdout)
		uid := os.Getuid()
		if uid == 0 {
			uid = 65534
		}
		if !strings.HasPrefix(out, strconv.Itoa(uid)+"\n") {
			t.Errorf("/dev is not the sandbox uid's: the check below would prove nothing:\n%s", out)
		}
		if strings.Contains(out, "PLANTED") || !strings.Contains(string(res.Stderr), "Permission denied") {
			t.Errorf("/dev accepted a new file:\n%s%s", out, res.Stderr)
		}
		if !strings.Contains(out, "writable") {
			t.Errorf("control: the clone, /tmp and /dev/shm should be writable:\n%s%s", out, res.Stderr)
		}
	})
}

// The Landlock helper, which kills the command's tree, stays outside the
// command's Landlock domain: the command cannot signal it (were it inside,
// a SIGKILL to it would orphan the tree out of reach).
func TestLandlockHelperOutOfReach(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		if b.backend != BackendLandlock {
			return
		}
		res := b.py(Policy{}, `
import os
ppid = os.getppid()
print(open("/proc/%d/cmdline" % ppid, "rb").read().split(b"\0")[0].decode())
try:
    os.kill(ppid, 0); print("SIGNALLED")
except OSError as e:
    print("kill fail", e.errno)
`)
		if want := helperLandlock + "\nkill fail 1\n"; string(res.Stdout) != want {
			t.Errorf("stdout %q, want %q; stderr %s", res.Stdout, want, res.Stderr)
		}
	})
}
