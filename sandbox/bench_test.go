package sandbox

import (
	"os"
	"os/exec"
	"testing"
)

// The start overhead of each way of running /usr/bin/true, side by side
// (issue 5 target: bwrap at most 3 ms above a plain exec); Runner.Run adds
// the seccomp pipe, the environment and the output capture:
//
//	go test -run '^$' -bench Start -benchtime 200x ./sandbox/
func BenchmarkStart(b *testing.B) {
	dir, err := os.MkdirTemp("", "miam-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Mkdir(dir+"/.git", 0o755)
	os.Chmod(dir, 0o755)
	root := os.Geteuid() == 0
	if root {
		os.Chown(dir, 65534, 65534)
	}
	p := Policy{Clone: dir}
	cases := []struct {
		name string
		cmd  func() *exec.Cmd
	}{
		{"plain", func() *exec.Cmd { return exec.Command("/usr/bin/true") }},
		{"prlimit", func() *exec.Cmd {
			return Command(Spec{Backend: BackendNone, Prlimit: prlimitPath, Policy: p, Argv: []string{"/usr/bin/true"}, Root: root})
		}},
		{"bwrap", func() *exec.Cmd {
			return Command(Spec{Backend: BackendBwrap, Bwrap: BwrapPath, Policy: p, Argv: []string{"/usr/bin/true"}, Root: root})
		}},
		{"prlimit+bwrap", func() *exec.Cmd {
			return Command(Spec{Backend: BackendBwrap, Bwrap: BwrapPath, Prlimit: prlimitPath, Policy: p, Argv: []string{"/usr/bin/true"}, Root: root})
		}},
	}
	r := new(Runner)
	r.Capabilities(b.Context())
	cases = append(cases, struct {
		name string
		cmd  func() *exec.Cmd
	}{"Runner.Run", nil})
	for _, c := range cases {
		if c.cmd == nil {
			b.Run(c.name, func(b *testing.B) {
				for b.Loop() {
					if res, err := r.Run(b.Context(), p, []string{"/usr/bin/true"}); err != nil || res.ExitCode != 0 {
						b.Fatalf("%v: %s", err, res.Stderr)
					}
				}
			})
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if out, err := c.cmd().CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
		})
	}
}
