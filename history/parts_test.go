package history

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestBatcher: fed a history twice, Parts and its Batcher hand over every
// entry once, each part whole in one batch, an operation in no part with
// both its entries in one batch, each batch in file order, whatever the
// batch size.
func TestBatcher(t *testing.T) {
	e := func(p int, typ Type, f, key string) Op {
		return Op{Process: p, Type: typ, F: f, Value: json.RawMessage(`{"key":"` + key + `"}`)}
	}
	h := []Op{
		e(0, Invoke, "write", "a"),
		e(1, Invoke, "read", "b"),
		e(Nemesis, Info, "pause-start", ""),
		e(0, Ok, "write", "a"),
		e(2, Invoke, "noop", ""), // in no part, completed much later
		e(1, Ok, "read", "b"),
		e(0, Invoke, "read", "b"),
		e(3, Ok, "read", "a"),      // a completion without an invocation
		e(4, Invoke, "write", "c"), // never completed
		e(0, Info, "read", "b"),
		e(1, Invoke, "noop", ""), // never completed: superseded
		e(1, Invoke, "write", "a"),
		e(2, Ok, "noop", ""),
		e(1, Fail, "write", "a"),
		e(Nemesis, Info, "pause-end", ""),
	}
	for i := range h {
		h[i].Index = i
	}
	partOf := func(inv *Op) string {
		if inv.F == "noop" {
			return ""
		}
		var v struct{ Key string }
		_ = json.Unmarshal(inv.Value, &v)
		return v.Key
	}
	parts := map[int]string{} // entry -> its part, as Pairs pairs them
	for _, p := range Pairs(h, func(*Op) bool { return true }) {
		if k := partOf(p.Inv); k != "" {
			parts[p.Inv.Index] = k
			if p.Done != nil {
				parts[p.Done.Index] = k
			}
		}
	}
	for _, size := range []int{1, 2, 3, 5, 100} {
		ps := NewParts(partOf)
		for i := range h {
			ps.See(&h[i])
		}
		inBatch := map[int]int{} // entry -> batch
		n := 0
		b := ps.Batcher(size, func(batch []Op) error {
			if !slices.IsSortedFunc(batch, func(x, y Op) int { return x.Index - y.Index }) {
				t.Errorf("size %d: batch %d out of file order: %v", size, n, batch)
			}
			for _, op := range batch {
				if _, dup := inBatch[op.Index]; dup {
					t.Errorf("size %d: entry %d in two batches", size, op.Index)
				}
				inBatch[op.Index] = n
			}
			n++
			return nil
		})
		for _, op := range h {
			if err := b.Add(op); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if len(inBatch) != len(h) {
			t.Errorf("size %d: %d of %d entries handed over", size, len(inBatch), len(h))
		}
		for i, k := range parts {
			for j, k2 := range parts {
				if k == k2 && inBatch[i] != inBatch[j] {
					t.Errorf("size %d: part %s split: entries %d and %d in batches %d and %d", size, k, i, j, inBatch[i], inBatch[j])
				}
			}
		}
		if inBatch[4] != inBatch[12] {
			t.Errorf("size %d: the operation in no part split: batches %d and %d", size, inBatch[4], inBatch[12])
		}
		if size == 1 && n < 6 {
			t.Errorf("size 1: %d batches; want one per part or loose operation at least", n)
		}
	}
}

// TestSample: a sample of a long history keeps every fault, at most
// about its bound of client operations, each with its completion, spread
// evenly (every Every-th), in file order.
func TestSample(t *testing.T) {
	s := NewSample(100)
	var h []Op
	for i := range 10_000 {
		p := i % 7
		h = append(h, Op{Process: p, Type: Invoke, F: "read"}, Op{Process: p, Type: Ok, F: "read"})
		if i%1000 == 0 {
			h = append(h, Op{Process: Nemesis, Type: Info, F: "pause-start"})
		}
	}
	for i := range h {
		h[i].Index = i
		s.See(h[i])
	}
	ops := s.Ops()
	faults, invs, done := 0, 0, 0
	for i, op := range ops {
		switch {
		case op.Process < 0:
			faults++
		case op.Type == Invoke:
			invs++
			if i+1 >= len(ops) || ops[i+1].Index != op.Index+1 {
				t.Errorf("invocation #%d kept without its completion", op.Index)
			}
		default:
			done++
		}
		if i > 0 && ops[i-1].Index >= op.Index {
			t.Errorf("entries out of order: #%d after #%d", op.Index, ops[i-1].Index)
		}
	}
	if faults != 10 || invs != done || invs > 100 || invs < 50 || s.Every() != 10_000/invs {
		t.Errorf("%d faults, %d invocations, %d completions, one in %d; want 10 faults and 50 to 100 operations, one in 10000/their count", faults, invs, done, s.Every())
	}
}
