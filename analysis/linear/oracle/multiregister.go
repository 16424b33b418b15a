// A brute-force linearizability checker for the multi-register model:
// transactions of reads and writes over several registers.

package oracle

import (
	"encoding/json"
	"fmt"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/txnop"
)

// MultiRegister reports whether h, of txn operations (Jepsen's :txn, steps
// "r" and "w" on keys), is linearizable. A transaction takes effect at one
// point, its steps in order, so that a read sees the same transaction's
// earlier writes. A read that returned null says nothing (Knossos). initial
// is either an object giving each key its value (a key it lacks is null) or
// one value for every key; nil is null. Failed and unknown outcomes are as
// in Register.
func MultiRegister(h []history.Op, initial json.RawMessage) (bool, error) {
	return regCheckOps(h, txnEffect, func(keys keySlots) ([]string, error) { return multiInitial(initial, keys) })
}

// multiInitial is every key slot's value before the history.
func multiInitial(initial json.RawMessage, keys keySlots) ([]string, error) {
	init := make([]string, len(keys))
	var perKey map[string]json.RawMessage
	if len(initial) > 0 && json.Unmarshal(initial, &perKey) == nil && perKey != nil {
		for k, i := range keys {
			v, err := regValueText(perKey[k])
			if err != nil {
				return nil, fmt.Errorf("initial value of %q: %w", k, err)
			}
			init[i] = v
		}
		return init, nil
	}
	all, err := regValueText(initial)
	if err != nil {
		return nil, fmt.Errorf("initial value: %w", err)
	}
	for i := range init {
		init[i] = all
	}
	return init, nil
}

// txnStepEffect is one step of a transaction: write val to slot k, or
// read slot k and find want ("" if the read says nothing).
type txnStepEffect struct {
	write bool
	k     int
	val   string
}

// txnEffect is what a transaction does to the key slots.
func txnEffect(p regPair, known bool, keys keySlots) (regEffect, error) {
	var steps []txnop.Step
	if err := json.Unmarshal(p.inv.Value, &steps); err != nil {
		return nil, fmt.Errorf("txn invocation %s: %w", p.inv.Value, err)
	}
	var got []txnop.Step
	if known {
		if err := json.Unmarshal(p.done.Value, &got); err != nil {
			return nil, fmt.Errorf("txn completion %s: %w", p.done.Value, err)
		}
		if len(got) != len(steps) {
			return nil, fmt.Errorf("txn completion %s: %d steps, invoked with %d", p.done.Value, len(got), len(steps))
		}
	}
	effects := make([]txnStepEffect, len(steps))
	for j, s := range steps {
		e := &effects[j]
		e.k = keys.slot(s.Key)
		switch s.F {
		case "w":
			v, err := regValueText(s.Value)
			if err != nil {
				return nil, err
			}
			e.write, e.val = true, v
		case "r":
			if !known {
				continue
			}
			if got[j].F != s.F || got[j].Key != s.Key {
				return nil, fmt.Errorf("txn completion %s: step %d differs from its invocation's", p.done.Value, j)
			}
			v, err := regValueText(got[j].Value)
			if err != nil {
				return nil, err
			}
			if v != "null" {
				e.val = v
			}
		default:
			return nil, fmt.Errorf("txn step f %q", s.F)
		}
	}
	return func(s []string) ([]string, bool) {
		for _, e := range effects {
			switch {
			case e.write:
				s = withSlot(s, e.k, e.val)
			case e.val != "" && s[e.k] != e.val:
				return nil, false
			}
		}
		return s, true
	}, nil
}
