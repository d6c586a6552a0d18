package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// An unusable policy is refused before any probe or process.
func TestRunRefusesBadPolicy(t *testing.T) {
	src := gitRepo(t, map[string]string{"a": "a"})
	c, err := NewClone(t.Context(), src, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(c.Dir, link); err != nil {
		t.Fatal(err)
	}
	noGit := t.TempDir()
	tests := []struct {
		name string
		p    Policy
		argv []string
		want error
	}{
		{name: "relative clone", p: Policy{Clone: "clone"}, argv: []string{"/usr/bin/true"}, want: ErrPolicy},
		{name: "symlinked clone", p: Policy{Clone: link}, argv: []string{"/usr/bin/true"}, want: ErrPolicy},
		{name: "root as clone", p: Policy{Clone: "/"}, argv: []string{"/usr/bin/true"}, want: ErrPolicy},
		{name: "clone without .git", p: Policy{Clone: noGit}, argv: []string{"/usr/bin/true"}, want: ErrPolicy},
		{name: "read-only /", p: Policy{Clone: c.Dir, ReadOnly: []string{"/"}}, argv: []string{"/usr/bin/true"}, want: ErrPolicy},
		{name: "read-only parent of the clone", p: Policy{Clone: c.Dir, ReadOnly: []string{filepath.Dir(c.Dir)}}, argv: []string{"/usr/bin/true"}, want: ErrPolicy},
		{name: "read-only relative", p: Policy{Clone: c.Dir, ReadOnly: []string{"opt"}}, argv: []string{"/usr/bin/true"}, want: ErrPolicy},
		{name: "empty argv", p: Policy{Clone: c.Dir}, want: ErrNotAllowed},
		{name: "unknown backend", p: Policy{Clone: c.Dir, Backend: "gvisor"}, argv: []string{"/usr/bin/true"}, want: ErrPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probed := false
			r := &Runner{Detect: func(context.Context) Capabilities { probed = true; return machineCaps() }}
			_, err := r.Run(t.Context(), tt.p, tt.argv)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if probed && tt.name != "unknown backend" {
				t.Errorf("probed the machine for a refused run")
			}
		})
	}
}

// A toolchain bound read-only may hold argv[0]; it stays read-only.
func TestReadOnlyToolchain(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *box) {
		tool := filepath.Join(b.outside, "tool")
		os.WriteFile(tool, []byte("#!/bin/sh\necho tool-ran; echo x > \"$0.w\"\n"), 0o755)
		res := b.run(Policy{ReadOnly: []string{b.outside}}, tool)
		if string(res.Stdout) != "tool-ran\n" {
			t.Errorf("stdout %q stderr %q", res.Stdout, res.Stderr)
		}
		mustNotExist(t, tool+".w")
	})
}
