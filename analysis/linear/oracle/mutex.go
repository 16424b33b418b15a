package oracle

import (
	"fmt"
	"math"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// mutexOp is one acquire or release that may have taken effect.
type mutexOp struct {
	lock      int // index of its lock name
	acquire   bool
	inv, done time.Duration // done is MaxInt64 if its outcome is unknown
	certain   bool          // it completed ok: it took effect
}

// Mutex reports whether h is linearizable for Knossos's mutex model: each
// lock name (an acquire's or release's lockop.Value.Lock, "" without
// a value) is a lock, free at first; an acquire takes it when free, a
// release frees it when held, by whichever process; anything else is
// illegal. Every order of the operations consistent with real time is
// tried (a before b iff a's completion is earlier than b's invocation): ok
// operations take effect, failed ones never do, and those of unknown
// outcome (info, or never completed) take effect at any point after their
// invocation, or never. Each process's entries are taken in file order: an
// invocation followed by another of the same process never completed.
func Mutex(h []history.Op) (bool, error) {
	ops, nlocks, err := mutexOps(h)
	if err != nil {
		return false, err
	}
	if err := searchable(len(ops)); err != nil {
		return false, err
	}
	if nlocks > 63 {
		return false, fmt.Errorf("%d locks: at most 63", nlocks)
	}
	var mustPrecede []uint32 // per op, the ok ops that completed before it was invoked
	var certain uint32
	for i, a := range ops {
		var m uint32
		for j, b := range ops {
			if b.certain && b.done < a.inv {
				m |= 1 << j
			}
		}
		mustPrecede = append(mustPrecede, m)
		if a.certain {
			certain |= 1 << i
		}
	}
	type node struct {
		placed uint32
		held   uint64
	}
	failed := map[node]bool{} // states from which no order completes
	var search func(n node) bool
	search = func(n node) bool {
		if n.placed&certain == certain {
			return true // the rest, of unknown outcome, never took effect
		}
		if failed[n] {
			return false
		}
		for i, op := range ops {
			bit := uint32(1) << i
			if n.placed&bit != 0 || mustPrecede[i]&^n.placed != 0 {
				continue
			}
			lock := uint64(1) << op.lock
			if (n.held&lock != 0) == op.acquire {
				continue // acquire while held, or release while free
			}
			if search(node{n.placed | bit, n.held ^ lock}) {
				return true
			}
		}
		failed[n] = true
		return false
	}
	return search(node{}), nil
}

// mutexOps pairs each process's invocations with their completions and
// keeps the acquires and releases that may have taken effect.
func mutexOps(h []history.Op) (ops []mutexOp, nlocks int, err error) {
	locks := map[string]int{}
	pending := map[int]int{} // process -> position of its invocation in flight
	add := func(i int, done *history.Op) error {
		inv := h[i]
		if inv.F != lockop.FAcquire && inv.F != lockop.FRelease {
			return nil
		}
		var v lockop.Value
		if len(inv.Value) > 0 && string(inv.Value) != "null" {
			if err := inv.Decode(&v); err != nil {
				return err
			}
		}
		k, ok := locks[v.Lock]
		if !ok {
			k = len(locks)
			locks[v.Lock] = k
		}
		op := mutexOp{lock: k, acquire: inv.F == lockop.FAcquire, inv: inv.Time, done: math.MaxInt64}
		switch {
		case done == nil || done.Type == history.Info:
		case done.Type == history.Ok:
			op.done, op.certain = done.Time, true
		default:
			return nil // failed: it never took effect
		}
		ops = append(ops, op)
		return nil
	}
	for i, op := range h {
		if op.Process < 0 {
			continue
		}
		p, inFlight := pending[op.Process]
		if op.Type == history.Invoke {
			if inFlight {
				if err := add(p, nil); err != nil {
					return nil, 0, err
				}
			}
			pending[op.Process] = i
			continue
		}
		if !inFlight {
			continue
		}
		delete(pending, op.Process)
		if h[p].F != op.F {
			return nil, 0, fmt.Errorf("entry %d completes %s, but its process's operation in flight is %s", i, op.F, h[p].F)
		}
		if err := add(p, &h[i]); err != nil {
			return nil, 0, err
		}
	}
	for i, op := range h {
		if p, ok := pending[op.Process]; ok && p == i {
			if err := add(i, nil); err != nil {
				return nil, 0, err
			}
		}
	}
	return ops, len(locks), nil
}
