package containers

import (
	"fmt"
	"os"
	"strings"
)

// LabelHarness names the harness process that made a run's containers and
// network: its pid and start time (so that a reused pid is told apart).
// A run whose harness is gone is a leftover.
const LabelHarness = "chaos.harness"

// harness is this process's LabelHarness value.
var harness = harnessOf(os.Getpid())

// harnessOf is pid's process id and start time, or "" if it is gone.
func harnessOf(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted after its closing parenthesis. Start time is field 22.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return fmt.Sprintf("%d:%s", pid, f[19])
}

// orphaned reports whether the harness named by a LabelHarness value is
// gone (a value from an older chaos, without the label, counts as gone).
func orphaned(label string) bool {
	var pid int
	if _, err := fmt.Sscanf(label, "%d:", &pid); err != nil {
		return true
	}
	return harnessOf(pid) != label
}
