package containers

import (
	"fmt"
	"os"
)

// LabelHarness names the harness process that made a run's containers and
// network: its pid and start time (so that a reused pid is told apart).
// A run whose harness is gone is a leftover.
const LabelHarness = "chaos.harness"

// harness is this process's LabelHarness value.
var harness = harnessOf(os.Getpid())

// Harness is this process's LabelHarness value, which also names the
// owner of a clock patch: chaos clean judges both alike (HarnessGone).
func Harness() string { return harness }

// harnessOf is pid's process id and start time, or "" if it is gone
// (see alive). A harness killed with kill -9 stays a zombie until its
// parent (a shell) reaps it, and its run is a leftover all the same.
func harnessOf(pid int) string {
	start, ok := alive(pid)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%s", pid, start)
}

// HarnessGone reports whether the harness named by a LabelHarness value
// (or a clock patch's owner) is gone, dying included: what it made is a
// leftover. A value from an older chaos, without the label, counts as
// gone.
func HarnessGone(label string) bool {
	var pid int
	if _, err := fmt.Sscanf(label, "%d:", &pid); err != nil {
		return true
	}
	return harnessOf(pid) != label
}
