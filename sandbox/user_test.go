package sandbox

import (
	"bytes"
	"fmt"
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
	bin, dir := unprivilegedCopy(t)
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o1777)
	cmd := exec.CommandContext(t.Context(), bin, "-test.run", "^(TestAttack|TestRlimitsApplied|TestReadOnlyToolchain|TestNativeLandlock|TestLandlockHelperOutOfReach|TestPrepare)", "-test.v", "-test.count=1")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + tmp, "HOME=" + tmp}
	cmd.Dir = tmp
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}, Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
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

// unprivilegedCopy copies this test binary into a fresh directory (0755,
// removed at the test's end) where uid 65534 can run it.
func unprivilegedCopy(t *testing.T) (bin, dir string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if dir, err = os.MkdirTemp("", "miam-user-test-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin = filepath.Join(dir, "sandbox.test")
	if err := copyFile(self, bin); err != nil {
		t.Fatal(err)
	}
	return bin, dir
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

// A process of the sandbox's uid on the host (a daemon running as nobody,
// another run's leftover) races Seal: once the clone's files turn to its
// uid, it swaps a subdirectory not yet walked for a symlink to a host
// directory. Seal must not give that directory's files away — even with
// PrepareClone's fence open to the uid's group and the clone's
// directories world-writable, as git makes them under umask 000.
func TestAttackSealRace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("Seal hands the clone to uid 65534 only when miam runs as root")
	}
	victim := t.TempDir()
	os.Chmod(victim, 0o755)
	secret := filepath.Join(victim, "secret")
	if err := os.WriteFile(secret, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"zz/f": "x"}
	for i := range 3000 {
		files[fmt.Sprintf("a%04d", i)] = "x"
	}
	c, err := NewClone(t.Context(), gitRepo(t, files), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	os.Chown(c.tmp, -1, c.gid)
	for dir, mode := range map[string]os.FileMode{c.tmp: 0o710, c.Dir: 0o777, filepath.Join(c.Dir, "zz"): 0o777} {
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
	}
	// The attacker: this test binary, run as uid 65534.
	bin, dir := unprivilegedCopy(t)
	ready := filepath.Join(dir, "ready")
	os.Chmod(dir, 0o777)
	a := exec.CommandContext(t.Context(), bin, "-test.run", "^TestSealRaceAttacker$")
	a.Env = []string{"MIAM_SEAL_ATTACK=" + c.Dir + "\n" + victim + "\n" + ready}
	a.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	var out bytes.Buffer
	a.Stdout, a.Stderr = &out, &out
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the attacker did not start: %s", out.String())
		}
	}
	serr := c.Seal() // may fail on the swapped directory: that is a refusal
	a.Wait()
	var st syscall.Stat_t
	if err := syscall.Stat(secret, &st); err != nil || st.Uid != 0 || st.Gid != 0 {
		t.Errorf("the host file the attacker pointed at was given away: uid %d gid %d (%v); attacker: %s", st.Uid, st.Gid, err, out.String())
	}
	t.Logf("attacker: %s; Seal: %v", strings.TrimSpace(out.String()), serr)
}

// TestSealRaceAttacker is TestAttackSealRace's attacker, run by it as uid
// 65534; alone it does nothing.
func TestSealRaceAttacker(t *testing.T) {
	args := strings.Split(os.Getenv("MIAM_SEAL_ATTACK"), "\n")
	if len(args) != 3 {
		t.Skip("run by TestAttackSealRace")
	}
	clone, victim, ready := args[0], args[1], args[2]
	os.WriteFile(ready, nil, 0o644)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var st syscall.Stat_t
		if syscall.Lstat(filepath.Join(clone, "a0000"), &st) == nil && st.Uid == 65534 {
			break
		}
		if time.Now().After(deadline) {
			fmt.Println("the clone never turned to uid 65534")
			return
		}
	}
	if err := os.Rename(filepath.Join(clone, "zz"), filepath.Join(clone, "zz.old")); err != nil {
		fmt.Println("swap refused:", err)
		return
	}
	fmt.Println("swapped zz for a symlink:", os.Symlink(victim, filepath.Join(clone, "zz")))
}
