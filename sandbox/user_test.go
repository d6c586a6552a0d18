package sandbox

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAttacksAsUnprivilegedUser runs the attack tests again with miam
// itself unprivileged: as root, it copies this test binary where uid 65534
// can run it and runs it as that uid (the launcher then runs without a
// credential change, and RLIMIT_NPROC and file permissions are those of an
// ordinary user). Run by a non-root user, the other tests already are that
// variant.
func TestAttacksAsUnprivilegedUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Log("already unprivileged: the attack tests above are the unprivileged variant")
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "miam-user-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	os.Chmod(tmp, 0o1777)
	bin := filepath.Join(dir, "sandbox.test")
	if err := copyFile(self, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "-test.run", "^(TestAttack|TestRlimitsApplied|TestReadOnlyToolchain|TestNativeLandlock|TestLandlockHelperOutOfReach|TestPrepare)", "-test.v", "-test.count=1")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + tmp, "HOME=" + tmp}
	cmd.Dir = tmp
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}, Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if err != nil {
		t.Fatalf("the attack tests as uid 65534 failed: %v\n%s", err, out.String())
	}
	// They ran against every backend that works for an unprivileged user
	// here, not the no-isolation fallback: those root has, plus Landlock
	// (never used as root) where the kernel has it.
	want := []string{}
	for _, p := range machineCaps().Probes {
		if p.OK {
			want = append(want, p.Backend)
		}
		if p.OK && p.Backend == BackendBwrap {
			want = append(want, BackendBwrap+"-prepared")
		}
	}
	if abi, err := landlockABI(); err == nil && abi >= minLandlockABI {
		want = append(want, BackendLandlock)
	}
	if len(want) == 0 {
		t.Fatal("no backend to run as uid 65534")
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "--- ") { // the inner verdicts, for the record
			t.Log(strings.TrimSpace(line))
		}
	}
	for _, b := range want {
		for _, test := range []string{"TestAttackWritesConfined", "TestAttackTimeoutKillsTree", "TestAttackEnvScrubbed", "TestAttackMainThreadExitSurvivor", "TestAttackGitFilterDrivers"} {
			if !strings.Contains(out.String(), "--- PASS: "+test+"/"+b+" ") {
				t.Errorf("%s was not exercised by %s as uid 65534:\n%s", b, test, out.String())
			}
		}
	}
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
