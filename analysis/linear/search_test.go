package linear

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/linear/oracle"
)

// TestSearchAsPorcupine checks search against porcupine on random
// cas-register histories: the same verdict, and a longest partial
// linearization that the model accepts, as long as porcupine's longest.
func TestSearchAsPorcupine(t *testing.T) {
	illegal := 0
	for i := range uint64(2000) {
		c := oracle.RandomRegister(rand.New(rand.NewPCG(7, i)), true)
		spec, err := CASRegister.Model.Prepare(analysis.Input{History: c.History, Initial: c.Initial, NilReadsUnknown: c.NilReadsUnknown})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ScanHistory(c.History, CASRegister.Model, spec).Parts {
			res, best := search(context.Background(), spec.Model, p.Ops)
			want, info := porcupine.CheckOperationsVerbose(spec.Model, p.Ops, 0)
			if res != want {
				t.Fatalf("history %d, key %q: search says %s, porcupine %s", i, p.key, res, want)
			}
			longest := 0
			for _, l := range info.PartialLinearizations()[0] {
				longest = max(longest, len(l))
			}
			if len(best) != longest {
				t.Fatalf("history %d, key %q: longest partial linearization %v, porcupine's has %d operations", i, p.key, best, longest)
			}
			state := spec.Model.Init()
			for _, id := range best {
				ok, next := spec.Model.Step(state, p.Ops[id].Input, p.Ops[id].Output)
				if !ok {
					t.Fatalf("history %d, key %q: %v does not fit the model at operation %d", i, p.key, best, id)
				}
				state = next
			}
			if res == porcupine.Illegal {
				illegal++
			}
		}
	}
	if illegal == 0 {
		t.Fatal("no illegal key among the histories: the test tests little")
	}
}

// TestSearchCancelled checks that a search whose context has ended
// decides nothing.
func TestSearchCancelled(t *testing.T) {
	c := oracle.RandomRegister(rand.New(rand.NewPCG(7, 0)), true)
	spec, err := CASRegister.Model.Prepare(analysis.Input{History: c.History})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, p := range ScanHistory(c.History, CASRegister.Model, spec).Parts {
		if res, _ := search(ctx, spec.Model, p.Ops); res != porcupine.Unknown {
			t.Fatalf("key %q: %s after the context ended, expected unknown", p.key, res)
		}
	}
}

// A search whose states fill half the machine's memory is stopped, its
// part undecided, rather than the process killed.
func TestWatchMemory(t *testing.T) {
	defer func(c uint64) { memoryCap = c }(memoryCap)
	memoryCap = 1
	ctx, stop := watchMemory(context.Background())
	defer stop()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("not stopped past the cap")
	}
	if !errors.Is(context.Cause(ctx), errMemory) {
		t.Fatalf("stopped by %v", context.Cause(ctx))
	}
	memoryCap = 1 << 62
	ctx, stop2 := watchMemory(context.Background())
	defer stop2()
	select {
	case <-ctx.Done():
		t.Fatalf("stopped under the cap: %v", context.Cause(ctx))
	case <-time.After(time.Second):
	}
}
