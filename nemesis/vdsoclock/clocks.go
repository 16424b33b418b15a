package vdsoclock

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
