package containers

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestOrphaned(t *testing.T) {
	if HarnessGone(harness) {
		t.Errorf("this process (%s) counts as gone", harness)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := harnessOf(cmd.Process.Pid)
	for _, l := range []string{"", "junk", gone, harnessOf(os.Getpid()) + "0", "1:x"} {
		if !HarnessGone(l) {
			t.Errorf("harness %q counts as alive", l)
		}
	}
}

// A harness killed with kill -9 is a zombie until its parent reaps it: it
// is gone all the same (chaos clean run a second after the kill found its
// run in progress, and removed nothing).
func TestZombieHarnessIsGone(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	label := harnessOf(cmd.Process.Pid)
	if label == "" || HarnessGone(label) {
		t.Fatalf("a running process (%q) counts as gone", label)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not reaped: the process is a zombie, its /proc entry still there.
	for range 1000 {
		if state, _, err := procState(cmd.Process.Pid); err != nil || state == 'Z' {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if state, _, err := procState(cmd.Process.Pid); err != nil || state != 'Z' {
		t.Fatalf("killed process in state %c (%v), want a zombie", state, err)
	}
	if !HarnessGone(label) {
		t.Errorf("a zombie harness (%s) counts as alive", label)
	}
}
