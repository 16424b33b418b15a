//go:build !(linux && amd64)

package vdsoclock

import "errors"

// errUnsupported: the injected code is x86-64 and the mechanism Linux's.
var errUnsupported = errors.New("clock faults are made on Linux on x86-64 only")

// Patch is a patched process; there are none on this platform.
type Patch struct {
	Pid   int
	Owner string
}

func Install(int, string) (*Patch, error) { return nil, errUnsupported }
func (*Patch) Set(Offsets) error          { return errUnsupported }
func (*Patch) InForce() bool              { return false }
func Remove(int) error                    { return nil }
func Patched(int) (bool, error)           { return false, nil }
func Scan() ([]Patch, error)              { return nil, nil }
