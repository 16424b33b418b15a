//go:build !(linux && amd64)

package vdsoclock

import (
	"errors"
	"time"
)

// errUnsupported: the injected code is x86-64 and the mechanism Linux's.
var errUnsupported = errors.New("clock faults are made on Linux on x86-64 only")

// Patch is a patched process; there are none on this platform.
type Patch struct{ Pid int }

func Install(int) (*Patch, error)              { return nil, errUnsupported }
func (*Patch) Set(time.Duration, Clocks) error { return errUnsupported }
func Remove(int) error                         { return nil }
func Patched(int) (bool, error)                { return false, nil }
func Scan() ([]int, error)                     { return nil, nil }
