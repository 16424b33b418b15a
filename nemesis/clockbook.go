package nemesis

import (
	"sync"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/nemesis/vdsoclock"
)

// clockBook is the clock patches of a run's processes, by host pid: one
// patch per process whatever the number of clock faults on it, whose
// offsets are the sum, clock by clock, of the shares of the faults in
// force, and which is removed with the last share.
type clockBook struct {
	mu    sync.Mutex
	procs map[int]*sharedPatch
}

// sharedPatch is one process's patch and the faults' shares of it.
type sharedPatch struct {
	patch  *vdsoclock.Patch
	shares map[*clockState]vdsoclock.Offsets
}

func (sp *sharedPatch) sum() vdsoclock.Offsets {
	var o vdsoclock.Offsets
	for _, s := range sp.shares {
		o = o.Plus(s)
	}
	return o
}

// entry is pid's patch if it is still in force: the process patched may
// be gone, and its pid given to another since.
func (b *clockBook) entry(pid int) *sharedPatch {
	sp := b.procs[pid]
	if sp != nil && !sp.patch.InForce() {
		delete(b.procs, pid)
		return nil
	}
	return sp
}

// join gives fault st a share o of pid's offsets, patching pid if no fault
// has yet. The patch names this harness as its owner, for chaos clean.
func (b *clockBook) join(pid int, st *clockState, o vdsoclock.Offsets) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	sp := b.entry(pid)
	if sp == nil {
		p, err := vdsoclock.Install(pid, containers.Harness())
		if err != nil {
			return err
		}
		sp = &sharedPatch{patch: p, shares: map[*clockState]vdsoclock.Offsets{}}
		b.procs[pid] = sp
	}
	sp.shares[st] = o
	return sp.patch.Set(sp.sum())
}

// holds reports whether fault st has a share of pid's patch, in force.
func (b *clockBook) holds(pid int, st *clockState) bool {
	held := false
	_ = b.withShare(pid, st, func(*sharedPatch) error {
		held = true
		return nil
	})
	return held
}

// set changes fault st's share of pid's offsets (a strobe's flip).
func (b *clockBook) set(pid int, st *clockState, o vdsoclock.Offsets) error {
	return b.withShare(pid, st, func(sp *sharedPatch) error {
		sp.shares[st] = o
		return sp.patch.Set(sp.sum())
	})
}

// drop takes fault st's share out of pid's offsets, and the patch out of
// the process with the last share. A process gone has nothing to take out.
func (b *clockBook) drop(pid int, st *clockState) error {
	return b.withShare(pid, st, func(sp *sharedPatch) error {
		delete(sp.shares, st)
		if len(sp.shares) > 0 {
			return sp.patch.Set(sp.sum())
		}
		delete(b.procs, pid)
		return vdsoclock.Remove(pid)
	})
}

// withShare runs f, under the book's lock, on pid's patch if it is in
// force and fault st has a share of it; otherwise it does nothing.
func (b *clockBook) withShare(pid int, st *clockState, f func(*sharedPatch) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	sp := b.entry(pid)
	if sp == nil {
		return nil
	}
	if _, ok := sp.shares[st]; !ok {
		return nil
	}
	return f(sp)
}
