package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// prepareBwrap is a runner forced to bubblewrap, or skips.
func prepareBwrap(t *testing.T) *Runner {
	t.Helper()
	caps := machineCaps()
	if p, ok := caps.Lookup(BackendBwrap); !ok || !p.OK {
		t.Skip("bubblewrap does not work here: nothing is started ahead")
	}
	return &Runner{Detect: func(context.Context) Capabilities { return caps }}
}

// waitProcess waits until a host process's command line holds marker:
// the prepared sandbox is started in the background.
func waitProcess(t *testing.T, marker string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(processesWith(marker)) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no process with %q: the sandbox was not started ahead", marker)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The clone is bound when the sandbox starts, before its files are
// checked out and the answer written; the command sees them all, with
// .git still read-only.
func TestPrepareClone(t *testing.T) {
	r := prepareBwrap(t)
	src := gitRepo(t, map[string]string{"a.txt": "committed\n"})
	if err := os.WriteFile(filepath.Join(src, "b.txt"), []byte("uncommitted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := canary()
	p := Policy{Backend: BackendBwrap, Timeout: 20 * time.Second}
	argv := []string{"/usr/bin/sh", "-c", "cat a.txt b.txt answer.txt; touch .git/" + m + " || echo git-ro; : " + m}
	c, pr, err := r.PrepareClone(t.Context(), src, p, argv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer pr.Close()
	waitProcess(t, m)
	if err := c.WriteFile("answer.txt", []byte("answer\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Seal(); err != nil {
		t.Fatal(err)
	}
	res, err := pr.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := "committed\nuncommitted\nanswer\ngit-ro\n"; string(res.Stdout) != want || res.ExitCode != 0 {
		t.Errorf("exit %d, stdout %q, want %q; stderr %s", res.ExitCode, res.Stdout, want, res.Stderr)
	}
	mustNotExist(t, filepath.Join(c.Dir, ".git", m))
	if res.Backend != BackendBwrap {
		t.Errorf("backend %q", res.Backend)
	}
	if _, err := pr.Run(t.Context()); err == nil {
		t.Error("a second Run ran")
	}
}

// A prepared sandbox never run is killed by Close, or at the end of
// Prepare's context, and its command never runs.
func TestPrepareUnused(t *testing.T) {
	r := prepareBwrap(t)
	for _, how := range []string{"close", "context"} {
		t.Run(how, func(t *testing.T) {
			b := newBox(t, BackendBwrap)
			if err := b.clone.Seal(); err != nil {
				t.Fatal(err)
			}
			m := canary()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			pr, err := r.Prepare(ctx, b.clone.Policy(Policy{Backend: BackendBwrap}), []string{"/usr/bin/sh", "-c", "echo ran > " + m})
			if err != nil {
				t.Fatal(err)
			}
			waitProcess(t, m)
			if how == "close" {
				if err := pr.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				cancel()
				assertNoProcess(t, m)
				res, err := pr.Run(t.Context())
				if err == nil {
					t.Errorf("Run after the context's end = %+v, want its error", res)
				}
				pr.Close()
			}
			assertNoProcess(t, m)
			mustNotExist(t, filepath.Join(b.clone.Dir, m))
		})
	}
}

// Prepare with another backend starts nothing until Run.
func TestPrepareOtherBackends(t *testing.T) {
	caps := machineCaps()
	r := &Runner{Detect: func(context.Context) Capabilities { return caps }}
	for _, p := range caps.Probes {
		if !p.OK || p.Backend == BackendBwrap {
			continue
		}
		t.Run(p.Backend, func(t *testing.T) {
			b := newBox(t, p.Backend)
			if err := b.clone.Seal(); err != nil {
				t.Fatal(err)
			}
			m := canary()
			pr, err := r.Prepare(t.Context(), b.clone.Policy(Policy{Backend: p.Backend}), []string{"/usr/bin/sh", "-c", fmt.Sprintf("echo ran %s", m)})
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			if left := processesWith(m); len(left) > 0 {
				t.Errorf("Prepare started %v", left)
			}
			res, err := pr.Run(t.Context())
			if err != nil || !bytes.Contains(res.Stdout, []byte("ran "+m)) {
				t.Errorf("Run: %v %s %s", err, res.Stdout, res.Stderr)
			}
		})
	}
}

// Should miam die while a sandbox waits, the kernel closes its ends of
// the pipes before anything else: bwrap then takes the block pipe's end
// of file as the go-ahead, but finds no seccomp filter (only Run writes
// it) and runs nothing.
func TestPreparedOwnerDies(t *testing.T) {
	r := prepareBwrap(t)
	b := newBox(t, BackendBwrap)
	if err := b.clone.Seal(); err != nil {
		t.Fatal(err)
	}
	m := canary()
	pr, err := r.Prepare(t.Context(), b.clone.Policy(Policy{Backend: BackendBwrap}), []string{"/usr/bin/sh", "-c", "echo ran > " + m})
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	waitProcess(t, m)
	// What miam's death does to its descriptors, and nothing else.
	pr.mu.Lock()
	for _, fd := range []*int{&pr.l.release, &pr.l.filterW} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
	pr.mu.Unlock()
	assertNoProcess(t, m)
	mustNotExist(t, filepath.Join(b.clone.Dir, m))
}

// Under umask 077 git makes the clone and its .git 0700, which the
// sandbox's uid could not search to bind them when it is prepared before
// Seal.
func TestPrepareCloneUmask077(t *testing.T) {
	r := prepareBwrap(t)
	src := gitRepo(t, map[string]string{"a.txt": "committed\n"})
	old := unix.Umask(0o077)
	defer unix.Umask(old)
	c, pr, err := r.PrepareClone(t.Context(), src, Policy{Backend: BackendBwrap, Timeout: 20 * time.Second}, []string{"/usr/bin/cat", "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer pr.Close()
	if err := c.Seal(); err != nil {
		t.Fatal(err)
	}
	res, err := pr.Run(t.Context())
	if err != nil || res.ExitCode != 0 || string(res.Stdout) != "committed\n" {
		t.Errorf("under umask 077: exit %d, stdout %q, stderr %s, err %v", res.ExitCode, res.Stdout, res.Stderr, err)
	}
}

func TestBwrapSetupFailed(t *testing.T) {
	for _, tc := range []struct {
		res  Result
		want bool
	}{
		{Result{Backend: BackendBwrap, ExitCode: 1, Stderr: []byte("bwrap: Can't find source path /x: Permission denied\n")}, true},
		{Result{Backend: BackendBwrap, ExitCode: 1, Stdout: []byte("F\n"), Stderr: []byte("bwrap: x")}, false}, // the command ran
		{Result{Backend: BackendBwrap, ExitCode: 1, Stderr: []byte("FAIL: test_add\n")}, false},
		{Result{Backend: BackendBwrap, ExitCode: 2, Stderr: []byte("bwrap: x")}, false},
		{Result{Backend: BackendNative, ExitCode: 1, Stderr: []byte("bwrap: x")}, false},
	} {
		if got := bwrapSetupFailed(tc.res); got != tc.want {
			t.Errorf("bwrapSetupFailed(%+v) = %v, want %v", tc.res, got, tc.want)
		}
	}
}
