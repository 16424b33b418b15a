package containers

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// alive reports whether process pid lives, and its start time (which
// tells it from a later process given the same pid). A process is gone
// when it is no longer there, a zombie or dead (state Z or X), or dying:
// exiting (its namespaces may be gone already) or with a SIGKILL pending.
func alive(pid int) (start string, ok bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", false
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted after its closing parenthesis. State is field 3, flags 9,
	// start time 22.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 || strings.ContainsAny(f[0], "ZXx") {
		return "", false
	}
	const exiting = 0x4 // PF_EXITING
	if flags, err := strconv.ParseUint(f[6], 10, 64); err != nil || flags&exiting != 0 {
		return "", false
	}
	if _, pending, err := procState(pid); err != nil || pending&sigBit(unix.SIGKILL) != 0 {
		return "", false
	}
	return f[19], true
}

// procState reads a process's state letter and the signals pending for
// it (its main thread's and the process's), from /proc.
func procState(pid int) (state byte, pending uint64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for line := range bytes.Lines(b) {
		key, val, ok := bytes.Cut(bytes.TrimSpace(line), []byte(":\t"))
		switch {
		case !ok:
		case string(key) == "State" && len(val) > 0:
			state = val[0]
		case string(key) == "SigPnd" || string(key) == "ShdPnd":
			mask, _ := strconv.ParseUint(string(val), 16, 64)
			pending |= mask
		}
	}
	return state, pending, nil
}

// sigBit is sig's bit in a mask of pending signals.
func sigBit(sig unix.Signal) uint64 { return 1 << (sig - 1) }
