package disks

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chaos-testing/chaos/lazyfs"
)

// Rules are the disk faults in force on one node's disk, its layer's
// gate: each rule's effect acts on the operations its match picks, in the
// order the rules were added; the first errno answers the operation.
type Rules struct {
	layer *lazyfs.FS // whose gate the rules are while there are any
	mu    sync.Mutex
	rules []*rule
}

type rule struct {
	match   Match
	effect  Effect
	removed chan struct{} // closed when the rule is removed: held operations go on
	once    sync.Once
}

func (ru *rule) release() { ru.once.Do(func() { close(ru.removed) }) }

// Match picks operations by name and path. Ops empty picks every
// operation; "fsync" picks fdatasync too. Paths empty picks every file;
// otherwise patterns (filepath.Match's) of the path relative to the data
// directory, or, one without a "/", of the file's name.
type Match struct {
	Ops   []string
	Paths []string
}

// Picks says whether m picks op.
func (m Match) Picks(op lazyfs.Op) bool {
	if len(m.Ops) > 0 && !slices.Contains(m.Ops, op.Name) && !(op.Name == "fdatasync" && slices.Contains(m.Ops, "fsync")) {
		return false
	}
	if len(m.Paths) == 0 {
		return true
	}
	return slices.ContainsFunc(m.Paths, func(pattern string) bool {
		name := op.Path
		if !strings.Contains(pattern, "/") {
			name = filepath.Base(op.Path)
		}
		ok, _ := filepath.Match(pattern, name)
		return ok
	})
}

// Effect is what a rule does to an operation it picks: hold it, until
// the rule is removed at the latest (removed is then closed), and answer
// an errno, 0 to let it run.
type Effect interface {
	Apply(ctx context.Context, op lazyfs.Op, removed <-chan struct{}) syscall.Errno
}

// Add puts a rule in force; remove takes it out, and lets go the
// operations it holds. The rules are the layer's gate only while there
// are any: with none, the layer asks nothing.
func (r *Rules) Add(m Match, e Effect) (remove func()) {
	ru := &rule{match: m, effect: e, removed: make(chan struct{})}
	r.mu.Lock()
	r.rules = append(r.rules, ru)
	if len(r.rules) == 1 {
		r.setGate(r)
	}
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		r.rules = slices.DeleteFunc(r.rules, func(x *rule) bool { return x == ru })
		if len(r.rules) == 0 {
			r.setGate(nil)
		}
		r.mu.Unlock()
		ru.release()
	}
}

// setGate makes g the layer's gate, when the rules have a layer (a test
// may ask them itself, Before).
func (r *Rules) setGate(g lazyfs.Gate) {
	if r.layer == nil {
		return
	}
	r.layer.SetGate(g)
}

// Len is how many rules are in force.
func (r *Rules) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.rules)
}

// Clear removes every rule: a disk's faults all healed at once.
func (r *Rules) Clear() {
	r.mu.Lock()
	rules := r.rules
	r.rules = nil
	r.setGate(nil)
	r.mu.Unlock()
	for _, ru := range rules {
		ru.release()
	}
}

// Before applies the rules that pick op, as the layer's gate.
func (r *Rules) Before(ctx context.Context, op lazyfs.Op) syscall.Errno {
	r.mu.Lock()
	rules := slices.Clone(r.rules)
	r.mu.Unlock()
	for _, ru := range rules {
		if !ru.match.Picks(op) {
			continue
		}
		if errno := ru.effect.Apply(ctx, op, ru.removed); errno != 0 {
			return errno
		}
	}
	return 0
}

// hold waits d, or until the rule is removed or ctx ends.
func hold(ctx context.Context, d time.Duration, removed <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-removed:
	case <-ctx.Done():
	}
}

// Latency holds each operation for a time it draws: a slow disk.
type Latency struct {
	draw func(*rand.Rand) time.Duration
	rng  *lockedRand
}

// NewLatency is a latency whose holds draw takes, from seed.
func NewLatency(draw func(*rand.Rand) time.Duration, seed uint64) *Latency {
	return &Latency{draw: draw, rng: newLockedRand(seed)}
}

func (l *Latency) Apply(ctx context.Context, _ lazyfs.Op, removed <-chan struct{}) syscall.Errno {
	hold(ctx, l.rng.duration(l.draw), removed)
	return 0
}

// Stall holds every operation until the rule is removed: a hung disk.
type Stall struct{}

func (Stall) Apply(ctx context.Context, _ lazyfs.Op, removed <-chan struct{}) syscall.Errno {
	select {
	case <-removed:
	case <-ctx.Done():
	}
	return 0
}

// Fail answers Errno instead of running an operation, each with
// probability Probability: a failing disk.
type Fail struct {
	Errno       syscall.Errno
	Probability float64
	rng         *lockedRand
}

// NewFail is a failure drawn from seed.
func NewFail(errno syscall.Errno, probability float64, seed uint64) *Fail {
	return &Fail{Errno: errno, Probability: probability, rng: newLockedRand(seed)}
}

func (f *Fail) Apply(context.Context, lazyfs.Op, <-chan struct{}) syscall.Errno {
	if f.rng.Float64() < f.Probability {
		return f.Errno
	}
	return 0
}

// Full gives the disk Free bytes more room: an operation that would add
// more than is left answers ENOSPC, as a file creation does once none is
// left. A disk that fills up.
type Full struct {
	mu   sync.Mutex
	free int64
}

// NewFull is a disk with free bytes left.
func NewFull(free int64) *Full { return &Full{free: free} }

func (f *Full) Apply(_ context.Context, op lazyfs.Op, _ <-chan struct{}) syscall.Errno {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case op.Grow > f.free, op.Name == "create" && f.free <= 0:
		return syscall.ENOSPC
	}
	f.free -= op.Grow
	return 0
}

// lockedRand is a generator the layer's goroutines share.
type lockedRand struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func newLockedRand(seed uint64) *lockedRand {
	return &lockedRand{rng: rand.New(rand.NewPCG(seed, 0xd15c))}
}

func (r *lockedRand) Float64() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rng.Float64()
}

// duration is what draw takes from the generator.
func (r *lockedRand) duration(draw func(*rand.Rand) time.Duration) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return draw(r.rng)
}
