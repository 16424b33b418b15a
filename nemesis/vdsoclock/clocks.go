package vdsoclock

import "time"

// Clocks is a set of clock ids, bit i for clock id i.
type Clocks uint64

// The clocks a fault moves: wall-clock time only, or the monotonic clocks
// (which leases and timeouts measure with) too.
const (
	// Realtime is CLOCK_REALTIME, _COARSE and _TAI; gettimeofday and time.
	Realtime Clocks = 1<<0 | 1<<5 | 1<<11
	// Monotonic is CLOCK_MONOTONIC, _RAW, _COARSE and CLOCK_BOOTTIME.
	Monotonic Clocks = 1<<1 | 1<<4 | 1<<6 | 1<<7
)

// numClocks is how many clock ids a patch can shift (0 to 15).
const numClocks = 16

// Offsets are how far each clock is moved, by clock id.
type Offsets [numClocks]time.Duration

// By is the offsets that move the clocks c by d, and no other.
func (c Clocks) By(d time.Duration) Offsets {
	var o Offsets
	for id := range o {
		if c&(1<<id) != 0 {
			o[id] = d
		}
	}
	return o
}

// Plus is the offsets of o and p added up, clock by clock.
func (o Offsets) Plus(p Offsets) Offsets {
	for id := range o {
		o[id] += p[id]
	}
	return o
}
