package history

import (
	"syscall"
	"time"
	"unsafe"
)

// Monotonic reads CLOCK_MONOTONIC with a raw system call. Every process of a
// run shares the host kernel, so this is one clock for the harness, the
// clients and the resource. The vDSO is bypassed on purpose: a clock fault
// patches the vDSO of the process it targets, and must not bend history time.
func Monotonic() time.Duration {
	var ts syscall.Timespec
	const clockMonotonic = 1
	_, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		panic("clock_gettime(CLOCK_MONOTONIC): " + errno.Error()) // cannot fail on Linux
	}
	return time.Duration(ts.Nano())
}

// Clock gives times relative to the start of a run.
type Clock struct{ Start time.Duration }

// NewClock starts a run's clock now.
func NewClock() Clock { return Clock{Start: Monotonic()} }

// Now is the time since the run started.
func (c Clock) Now() time.Duration { return Monotonic() - c.Start }
