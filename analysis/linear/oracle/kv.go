// A brute-force linearizability checker for the kv model: porcupine's
// string per key, with get, put and append.

package oracle

import (
	"encoding/json"
	"fmt"

	"github.com/chaos-testing/chaos/history"
)

// KV reports whether h, of get, put and append operations on strings named
// by their keys, is linearizable. A put sets its key's string, an append
// extends it, a get returns it; a missing key is "" (and a get of null
// means ""). initial is every key's string before the history (nil: "").
// Failed and unknown outcomes are as in Register.
func KV(h []history.Op, initial json.RawMessage) (bool, error) {
	var start string
	if len(initial) > 0 {
		if err := json.Unmarshal(initial, &start); err != nil {
			return false, fmt.Errorf("initial value %s: %w", initial, err)
		}
	}
	return regCheckOps(h, kvEffect, everySlot(start))
}

// kvEffect is what a kv operation does to the key slots.
func kvEffect(p regPair, known bool, keys keySlots) (regEffect, error) {
	var v struct {
		Key   string  `json:"key"`
		Value *string `json:"value"`
	}
	if err := json.Unmarshal(p.inv.Value, &v); err != nil {
		return nil, fmt.Errorf("%s invocation %s: %w", p.inv.F, p.inv.Value, err)
	}
	k := keys.slot(v.Key)
	switch p.inv.F {
	case "get":
		if !known {
			return regUnchanged, nil
		}
		var d struct {
			Value *string `json:"value"`
		}
		if err := json.Unmarshal(p.done.Value, &d); err != nil {
			return nil, fmt.Errorf("get completion %s: %w", p.done.Value, err)
		}
		got := ""
		if d.Value != nil {
			got = *d.Value
		}
		return func(s []string) ([]string, bool) { return s, s[k] == got }, nil
	case "put", "append":
		if v.Value == nil {
			return nil, fmt.Errorf("%s invocation %s: no string", p.inv.F, p.inv.Value)
		}
		arg, add := *v.Value, p.inv.F == "append"
		return func(s []string) ([]string, bool) {
			if add {
				return withSlot(s, k, s[k]+arg), true
			}
			return withSlot(s, k, arg), true
		}, nil
	}
	return nil, fmt.Errorf("f %q is not a kv operation", p.inv.F)
}
