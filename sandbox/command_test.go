package sandbox

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCommand(t *testing.T) {
	base := Policy{Clone: "/w/c", Timeout: 30 * time.Second}
	tests := []struct {
		name     string
		spec     Spec
		wantHead []string // the launcher's first arguments
		want     []string // arguments that must appear, in this order
		never    []string // arguments that must not appear
		wantUID  int      // -1: no credential
		wantEnv  []string
		wantDir  string
	}{
		{
			name:     "bwrap as root drops to nobody, new user namespace, rlimits",
			spec:     Spec{Backend: BackendBwrap, Bwrap: "/usr/bin/bwrap", Prlimit: "/usr/bin/prlimit", Policy: base, Argv: []string{"/usr/bin/python3", "-m", "pytest"}, Env: []string{"PATH=/usr/bin", "A=b c"}, Root: true},
			wantHead: []string{"/usr/bin/prlimit", "--core=0", "--nofile=4096", "--fsize=1073741824", "--cpu=40", "--nproc=512", "--", "/usr/bin/bwrap", "--unshare-user"},
			want: []string{"--unshare-net", "--disable-userns", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv",
				"--setenv", "PATH", "/usr/bin", "--setenv", "A", "b c", "--ro-bind", "/usr", "/usr",
				"--dev", "/dev", "--remount-ro", "/dev", "--size", "536870912", "--tmpfs", "/tmp", "--bind", "/w/c", "/w/c", "--ro-bind", "/w/c/.git", "/w/c/.git",
				"--remount-ro", "/", "--chdir", "/w/c", "--", "/usr/bin/python3", "-m", "pytest"},
			never:   []string{"--share-net", "$HOME", "/run", "/var/run", "/root", "/home"},
			wantUID: 65534,
			wantEnv: []string{"PATH=/usr/bin:/bin"},
			wantDir: "/",
		},
		{
			name:     "bwrap as a user keeps the uid; read-only extras; no prlimit",
			spec:     Spec{Backend: BackendBwrap, Bwrap: "/usr/bin/bwrap", Policy: Policy{Clone: "/w/c", ReadOnly: []string{"/opt/go"}, Limits: Limits{TmpSize: 1 << 20}}, Argv: []string{"/usr/bin/true"}},
			wantHead: []string{"/usr/bin/bwrap", "--unshare-user"},
			want:     []string{"--size", "1048576", "--tmpfs", "/tmp", "--ro-bind", "/opt/go", "/opt/go", "--bind", "/w/c", "/w/c"},
			wantUID:  -1,
			wantEnv:  []string{"PATH=/usr/bin:/bin"},
			wantDir:  "/",
		},
		{
			name:     "seccomp filter read from the given descriptor, before the command",
			spec:     Spec{Backend: BackendBwrap, Bwrap: "/usr/bin/bwrap", Policy: base, Argv: []string{"/usr/bin/true"}, SeccompFD: 3},
			wantHead: []string{"/usr/bin/bwrap"},
			want:     []string{"--remount-ro", "/", "--seccomp", "3", "--", "/usr/bin/true"},
			wantUID:  -1,
			wantEnv:  []string{"PATH=/usr/bin:/bin"},
			wantDir:  "/",
		},
		{
			name:     "prepared: bwrap blocks on the given descriptor before the command",
			spec:     Spec{Backend: BackendBwrap, Bwrap: "/usr/bin/bwrap", Policy: base, Argv: []string{"/usr/bin/true"}, SeccompFD: 3, BlockFD: 4},
			wantHead: []string{"/usr/bin/bwrap"},
			want:     []string{"--seccomp", "3", "--block-fd", "4", "--", "/usr/bin/true"},
			wantUID:  -1,
			wantEnv:  []string{"PATH=/usr/bin:/bin"},
			wantDir:  "/",
		},
		{
			name:     "probe without clone binds nothing writable",
			spec:     Spec{Backend: BackendBwrap, Bwrap: "/usr/bin/bwrap", Argv: []string{"/usr/bin/true"}},
			wantHead: []string{"/usr/bin/bwrap"},
			want:     []string{"--chdir", "/", "--", "/usr/bin/true"},
			never:    []string{"--bind"},
			wantUID:  -1,
			wantEnv:  []string{"PATH=/usr/bin:/bin"},
			wantDir:  "/",
		},
		{
			name:     "none runs the command itself in the clone, env given",
			spec:     Spec{Backend: BackendNone, Prlimit: "/usr/bin/prlimit", Policy: Policy{Clone: "/w/c", Timeout: time.Second, Limits: Limits{AddressSpace: 1 << 30}}, Argv: []string{"/usr/bin/true"}, Env: []string{"HOME=/tmp/home"}, Root: true},
			wantHead: []string{"/usr/bin/prlimit", "--core=0", "--nofile=4096", "--fsize=1073741824", "--cpu=11", "--nproc=512", "--as=1073741824", "--", "/usr/bin/true"},
			never:    []string{"/usr/bin/bwrap"},
			wantUID:  65534,
			wantEnv:  []string{"HOME=/tmp/home"},
			wantDir:  "/w/c",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := Command(tt.spec)
			if cmd.Path != cmd.Args[0] {
				t.Errorf("Path %q != Args[0] %q", cmd.Path, cmd.Args[0])
			}
			if diff := cmp.Diff(tt.wantHead, cmd.Args[:min(len(tt.wantHead), len(cmd.Args))]); diff != "" {
				t.Errorf("head (-want +got):\n%s", diff)
			}
			if !subsequence(cmd.Args, tt.want) {
				t.Errorf("args %q\ndo not contain, in order, %q", cmd.Args, tt.want)
			}
			for _, n := range tt.never {
				if slices.ContainsFunc(cmd.Args, func(a string) bool { return a == n || strings.HasPrefix(a, n+"/") }) {
					t.Errorf("args contain %q: %q", n, cmd.Args)
				}
			}
			for i := range len(cmd.Args) - 1 {
				if strings.HasSuffix(cmd.Args[i], "bind") && cmd.Args[i+1] == "/" {
					t.Errorf("%s / is never used (SANDBOX.md: it exposes ~/.ssh and host sockets)", cmd.Args[i])
				}
			}
			if diff := cmp.Diff(tt.wantEnv, cmd.Env); diff != "" {
				t.Errorf("launcher env (-want +got):\n%s", diff)
			}
			if cmd.Dir != tt.wantDir {
				t.Errorf("Dir = %q, want %q", cmd.Dir, tt.wantDir)
			}
			cred := cmd.SysProcAttr.Credential
			switch {
			case tt.wantUID < 0 && cred != nil:
				t.Errorf("credential %+v, want none", cred)
			case tt.wantUID >= 0 && (cred == nil || int(cred.Uid) != tt.wantUID || int(cred.Gid) != tt.wantUID):
				t.Errorf("credential %+v, want uid/gid %d", cred, tt.wantUID)
			}
			if !cmd.SysProcAttr.Setpgid || cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
				t.Errorf("SysProcAttr %+v: want its own process group and SIGKILL on parent death", cmd.SysProcAttr)
			}
		})
	}
}

// subsequence tells whether want appears in got in order (not contiguous).
func subsequence(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

func TestEnviron(t *testing.T) {
	tests := []struct {
		name    string
		extra   map[string]string
		want    []string
		wantErr error
	}{
		{name: "nothing", want: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp/home", "TMPDIR=/tmp", "LANG=C.UTF-8", "TERM=dumb", "CI=1"}},
		{name: "allowed sorted", extra: map[string]string{"PYTHONHASHSEED": "0", "GOFLAGS": "-mod=mod"}, want: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp/home", "TMPDIR=/tmp", "LANG=C.UTF-8", "TERM=dumb", "CI=1", "GOFLAGS=-mod=mod", "PYTHONHASHSEED=0"}},
		{name: "token", extra: map[string]string{"GITHUB_TOKEN": "x"}, wantErr: ErrSecretEnv},
		{name: "key suffix", extra: map[string]string{"OPENROUTER_API_KEY": "x"}, wantErr: ErrSecretEnv},
		{name: "aws", extra: map[string]string{"AWS_REGION": "x"}, wantErr: ErrSecretEnv},
		{name: "ssh agent", extra: map[string]string{"SSH_AUTH_SOCK": "/run/x"}, wantErr: ErrSecretEnv},
		{name: "lowercase secret", extra: map[string]string{"my_secret": "x"}, wantErr: ErrSecretEnv},
		{name: "preload", extra: map[string]string{"LD_PRELOAD": "/x.so"}, wantErr: ErrSecretEnv},
		{name: "override PATH", extra: map[string]string{"PATH": "/w/c/bin"}, wantErr: ErrPolicy},
		{name: "bad name", extra: map[string]string{"A=B": "x"}, wantErr: ErrPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Environ(tt.extra)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Attack test 16: the allow-list is enforced by Parse, which only stats
// files on the trusted PATH (it has no way to spawn anything).
func TestParse(t *testing.T) {
	allowed := []string{"python3", "pytest", "sh", "true"}
	tests := []struct {
		name    string
		line    string
		want    []string
		wantErr bool
	}{
		{name: "allowed resolves on the host PATH", line: "python3 -k x", want: []string{"/usr/bin/python3", "-k", "x"}},
		{name: "quotes split without a shell", line: `true -k "a or b" 'c d'`, want: []string{"/usr/bin/true", "-k", "a or b", "c d"}},
		{name: "not allowed", line: "curl https://example.com", wantErr: true},
		{name: "shell", line: "sh -c id", want: []string{"/usr/bin/sh", "-c", "id"}},
		{name: "relative path", line: "./pytest", wantErr: true},
		{name: "absolute path in the clone", line: "/abs/clone/bin/pytest", wantErr: true},
		{name: "sequence", line: "pytest; rm -rf ~", wantErr: true},
		{name: "substitution", line: "pytest $(id)", wantErr: true},
		{name: "backticks", line: "pytest `id`", wantErr: true},
		{name: "pipe", line: "true | sh", wantErr: true},
		{name: "redirect", line: "true > /etc/x", wantErr: true},
		{name: "newline", line: "true\nsh", wantErr: true},
		{name: "unbalanced quote", line: `true "x`, wantErr: true},
		{name: "empty", line: "  ", wantErr: true},
		{name: "allowed but not installed", line: "pytest -k x", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.line, allowed)
			if tt.wantErr {
				if !errors.Is(err, ErrNotAllowed) {
					t.Fatalf("Parse(%q) = %q, %v; want ErrNotAllowed", tt.line, got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSeccompFilter(t *testing.T) {
	prog, err := seccompFilter()
	if err != nil {
		t.Fatal(err)
	}
	if len(prog)%8 != 0 || len(prog)/8 < len(deniedSyscalls)+10 || len(prog)/8 > 4096 {
		t.Fatalf("program of %d bytes", len(prog))
	}
	// It starts by checking the architecture and ends by killing a foreign one.
	if prog[0] != bpfLdWAbs || prog[4] != offArch || prog[len(prog)-8] != bpfRetK || prog[len(prog)-1] != 0x80 {
		t.Errorf("unexpected shape: % x … % x", prog[:16], prog[len(prog)-8:])
	}
}

// Parse never panics, and whatever it accepts is an allowed name resolved
// to a trusted absolute path, with no shell character anywhere.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"python3 -m pytest -k 'a or b'", "sh -c id", "pytest; rm -rf ~", "true `id`", `true "a\"b"`, "./x", "true\x00sh"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		argv, err := Parse(line, []string{"python3", "true", "sh"})
		if err != nil {
			if !errors.Is(err, ErrNotAllowed) {
				t.Fatalf("error %v does not wrap ErrNotAllowed", err)
			}
			return
		}
		if len(argv) == 0 || !strings.HasPrefix(argv[0], "/usr/") && !strings.HasPrefix(argv[0], "/bin/") {
			t.Fatalf("accepted %q as %q", line, argv)
		}
		if strings.ContainsAny(line, shellMeta) {
			t.Fatalf("accepted shell syntax %q", line)
		}
	})
}
