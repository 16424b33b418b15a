package containers

import (
	"os"
	"os/exec"
	"testing"
)

func TestOrphaned(t *testing.T) {
	if orphaned(harness) {
		t.Errorf("this process (%s) counts as gone", harness)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := harnessOf(cmd.Process.Pid)
	for _, l := range []string{"", "junk", gone, harnessOf(os.Getpid()) + "0", "1:x"} {
		if !orphaned(l) {
			t.Errorf("harness %q counts as alive", l)
		}
	}
}
