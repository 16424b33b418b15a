package disks

import (
	"context"
	"sync"
	"syscall"

	"github.com/chaos-testing/chaos/lazyfs"
)

// Trigger fires once, at an operation of the disk: the Nth that On picks
// (from 1), or, with Nth 0, each it picks with probability Probability: a
// crash point. Its rule must pick every operation: from the moment it
// fires, every operation of the disk is held until Fire returns, as if the
// machine froze at that instant. Fire acts on the node (kills or pauses
// its process) and says whether the node is dead: then every operation of
// the disk, the one that fired it first, fails with EIO until the rule is
// removed (none changes the disk after the crash), else all go on.
type Trigger struct {
	On          Match
	Nth         int
	Probability float64
	Fire        func(op lazyfs.Op) (dead bool)

	rng  *lockedRand
	mu   sync.Mutex
	seen int
	// done is nil while armed; closed once Fire has returned.
	done     chan struct{}
	dead     bool
	disarmed bool
}

// Disarm keeps the trigger from firing from now on, and says whether it
// had fired already (or is firing).
func (t *Trigger) Disarm() (fired bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.disarmed = true
	return t.done != nil
}

// NewTrigger is a trigger drawing from seed when it fires by probability.
func NewTrigger(on Match, nth int, probability float64, seed uint64, fire func(lazyfs.Op) bool) *Trigger {
	return &Trigger{On: on, Nth: nth, Probability: probability, Fire: fire, rng: newLockedRand(seed)}
}

func (t *Trigger) Apply(ctx context.Context, op lazyfs.Op, removed <-chan struct{}) syscall.Errno {
	t.mu.Lock()
	if done := t.done; done != nil {
		t.mu.Unlock()
		select {
		case <-done:
		case <-removed:
			return 0
		case <-ctx.Done():
		}
		return t.answer()
	}
	if t.disarmed || !t.On.Picks(op) {
		t.mu.Unlock()
		return 0
	}
	t.seen++
	if t.Nth > 0 && t.seen != t.Nth || t.Nth == 0 && t.rng.Float64() >= t.Probability {
		t.mu.Unlock()
		return 0
	}
	done := make(chan struct{})
	t.done = done
	t.mu.Unlock()
	dead := t.Fire(op)
	t.mu.Lock()
	t.dead = dead
	t.mu.Unlock()
	close(done)
	return t.answer()
}

// answer is what becomes of an operation once the trigger has fired.
func (t *Trigger) answer() syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dead {
		return syscall.EIO
	}
	return 0
}
