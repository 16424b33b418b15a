// A brute-force linearizability checker for the register models, and the
// search it shares with the multi-register and kv oracles: every order of
// the operations that took effect, checked step by step.

package oracle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
)

// maxSearchOps bounds the operations a brute-force search accepts: beyond a
// dozen the search may take longer than anyone waits.
const maxSearchOps = 16

// searchable is an error if n operations are more than a brute-force
// search (this one, or Mutex's) accepts.
func searchable(n int) error {
	if n > maxSearchOps {
		return fmt.Errorf("%d operations: the brute-force oracle takes at most %d", n, maxSearchOps)
	}
	return nil
}

// regAction is one operation as the search sees it.
type regAction struct {
	// call is the invocation's time; ret the completion's, or MaxInt64 when
	// the outcome is unknown (it may take effect at any time after call).
	call, ret int64
	// known: the operation completed ok, so it took effect, once, with its
	// recorded output. Otherwise it may take effect or never.
	known bool
	// apply is the operation's effect on a state (a value per key slot).
	apply regEffect
}

// regLinearizable reports whether some order of acts is legal from init: a
// depth-first search that places, one at a time, any operation whose every
// real-time predecessor is already placed and that is legal in the current
// state. The search succeeds once every known operation is placed; the
// unknown ones left over never took effect. A (placed set, state) pair
// that failed once fails again, so it is remembered.
func regLinearizable(init []string, acts []regAction) (bool, error) {
	if err := searchable(len(acts)); err != nil {
		return false, err
	}
	// before[i] is the set of known operations that completed before i was
	// invoked. An unknown operation precedes nothing: it has no completion.
	before := make([]uint32, len(acts))
	var known uint32
	for i, a := range acts {
		if a.known {
			known |= 1 << i
		}
		for j, b := range acts {
			if j != i && b.known && b.ret < a.call {
				before[i] |= 1 << j
			}
		}
	}
	failed := map[string]bool{}
	var search func(placed uint32, s []string) bool
	search = func(placed uint32, s []string) bool {
		if placed&known == known {
			return true
		}
		memo := fmt.Sprintf("%x %q", placed, s)
		if failed[memo] {
			return false
		}
		for i, a := range acts {
			if placed&(1<<i) != 0 || before[i]&^placed != 0 {
				continue
			}
			if next, ok := a.apply(s); ok && search(placed|1<<i, next) {
				return true
			}
		}
		failed[memo] = true
		return false
	}
	return search(0, init), nil
}

// regPair is one operation's entries: done is nil if it never completed.
type regPair struct{ inv, done *history.Op }

// pairOps matches each client process's invocations with its completions,
// in line order, which is each process's own order. The nemesis and the
// observer (negative processes) are left out. The oracle judges well-formed
// histories only: a process with two operations in flight, a completion
// without an invocation or of another f is an error.
func pairOps(h []history.Op) ([]regPair, error) {
	var pairs []regPair
	inFlight := map[int]int{} // process -> its pair in flight
	for i := range h {
		op := &h[i]
		if op.Process < 0 {
			continue
		}
		j, busy := inFlight[op.Process]
		switch {
		case op.Type == history.Invoke && busy:
			return nil, fmt.Errorf("entry %d: process %d invokes with an operation in flight", i, op.Process)
		case op.Type == history.Invoke:
			inFlight[op.Process] = len(pairs)
			pairs = append(pairs, regPair{inv: op})
		case !busy:
			return nil, fmt.Errorf("entry %d: completion without an invocation", i)
		case pairs[j].inv.F != op.F:
			return nil, fmt.Errorf("entry %d: completes %s, but its invocation is %s", i, op.F, pairs[j].inv.F)
		default:
			pairs[j].done = op
			delete(inFlight, op.Process)
		}
	}
	return pairs, nil
}

// newAction is the part of an action that the entries' types and times
// decide, or false for a failed operation, which never took effect.
func newAction(p regPair) (regAction, bool) {
	a := regAction{call: int64(p.inv.Time), ret: math.MaxInt64}
	if p.done == nil {
		return a, true
	}
	switch p.done.Type {
	case history.Fail:
		return a, false
	case history.Ok:
		a.known, a.ret = true, int64(p.done.Time)
	}
	return a, true
}

// regEffect is what an operation does to the key slots: the next state, or
// false if the operation cannot happen in s. It must not modify s.
type regEffect func(s []string) ([]string, bool)

// regUnchanged is the effect of a read whose result is unknown: none, and
// legal in every state.
func regUnchanged(s []string) ([]string, bool) { return s, true }

// regCheckOps pairs h's entries, makes every operation that did not fail an
// action with effectOf (which numbers the keys it touches), and searches
// for an order of them from the slots' initial values.
func regCheckOps(h []history.Op, effectOf func(p regPair, known bool, keys keySlots) (regEffect, error), initial func(keySlots) ([]string, error)) (bool, error) {
	pairs, err := pairOps(h)
	if err != nil {
		return false, err
	}
	keys := keySlots{}
	var acts []regAction
	for _, p := range pairs {
		a, took := newAction(p)
		if !took {
			continue
		}
		if a.apply, err = effectOf(p, a.known, keys); err != nil {
			return false, err
		}
		acts = append(acts, a)
	}
	init, err := initial(keys)
	if err != nil {
		return false, err
	}
	return regLinearizable(init, acts)
}

// everySlot gives every key slot the initial value v.
func everySlot(v string) func(keySlots) ([]string, error) {
	return func(keys keySlots) ([]string, error) {
		init := make([]string, len(keys))
		for i := range init {
			init[i] = v
		}
		return init, nil
	}
}

// keySlots numbers the keys of a history in the order they are first seen.
type keySlots map[string]int

func (k keySlots) slot(key string) int {
	if i, ok := k[key]; ok {
		return i
	}
	k[key] = len(k)
	return len(k) - 1
}

// regValueText is the compact text of a JSON value, by which the register
// oracles compare values; no value at all is null. Numbers are compared as
// written (1 and 1.0 differ): the generators write small integers only.
func regValueText(raw json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "null", nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", fmt.Errorf("value %s: %w", raw, err)
	}
	return b.String(), nil
}

// withSlot is s with slot i set to v (s itself unchanged).
func withSlot(s []string, i int, v string) []string {
	next := append([]string(nil), s...)
	next[i] = v
	return next
}

// RegisterOptions are what a register history is checked with.
type RegisterOptions struct {
	// Initial is every register's value before the history; nil is absent
	// (null).
	Initial json.RawMessage
	// NilReadsUnknown makes a read of null say nothing (Knossos), instead
	// of "the register was absent".
	NilReadsUnknown bool
	// Cas allows cas operations (the cas-register model).
	Cas bool
}

// Register reports whether h, of read, write and cas operations on
// registers named by their keys, is linearizable, checking every key at
// once. A write sets its key's value; a read returns it (null: absent); a
// cas(from, to) that completed ok found from and set to. A failed operation
// never took effect; one of unknown outcome (info or never completed) may
// have taken effect at any time after its invocation, or never.
func Register(h []history.Op, opt RegisterOptions) (bool, error) {
	initial, err := regValueText(opt.Initial)
	if err != nil {
		return false, fmt.Errorf("initial value: %w", err)
	}
	effectOf := func(p regPair, known bool, keys keySlots) (regEffect, error) {
		return registerEffect(p, known, opt, keys)
	}
	return regCheckOps(h, effectOf, everySlot(initial))
}

// registerEffect is what a register operation does to the key slots.
func registerEffect(p regPair, known bool, opt RegisterOptions, keys keySlots) (regEffect, error) {
	var v registerop.Value
	if err := json.Unmarshal(p.inv.Value, &v); err != nil {
		return nil, fmt.Errorf("%s invocation %s: %w", p.inv.F, p.inv.Value, err)
	}
	k := keys.slot(v.Key)
	switch p.inv.F {
	case registerop.FRead:
		if !known { // a read of unknown outcome returned nothing we know
			return regUnchanged, nil
		}
		var d registerop.Value
		if err := json.Unmarshal(p.done.Value, &d); err != nil {
			return nil, fmt.Errorf("read completion %s: %w", p.done.Value, err)
		}
		got, err := regValueText(d.Value)
		if err != nil {
			return nil, err
		}
		return func(s []string) ([]string, bool) {
			return s, s[k] == got || got == "null" && opt.NilReadsUnknown
		}, nil
	case registerop.FWrite:
		val, err := regValueText(v.Value)
		if err != nil {
			return nil, err
		}
		return func(s []string) ([]string, bool) { return withSlot(s, k, val), true }, nil
	case registerop.FCas:
		if !opt.Cas {
			return nil, fmt.Errorf("a cas in a plain register history")
		}
		from, err := regValueText(v.From)
		if err != nil {
			return nil, err
		}
		to, err := regValueText(v.To)
		if err != nil {
			return nil, err
		}
		// Known or not, a cas that takes effect found from. One that did not
		// find it changed nothing, which is as if it never took effect.
		return func(s []string) ([]string, bool) { return withSlot(s, k, to), s[k] == from }, nil
	}
	return nil, fmt.Errorf("f %q is not a register operation", p.inv.F)
}
