// A failure that was not one: when a key is illegal, what a client was told
// may be what is false. A system that answers "failed" for a write it then
// makes (a deposed leader refusing from its stale state while the new one
// stores the write, say) leaves a history that only that write can explain.
// The witness asks whether one of the failed operations near where the
// order breaks would, had it taken effect, make the key linearizable, and
// names it if so: the operation and the failure it was answered with.

package linear

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/history"
)

// maxFailedTries bounds the failed operations tried for one key. The
// search is an explanation, not the verdict: it gives up rather than hold
// the report up, within the time its caller allows.
const maxFailedTries = 8

// failures are the failed operations of one batch of the history. Which
// key each touches is read only when a witness first asks: most histories
// have no illegal key, and need none of it.
type failures struct {
	h     []history.Op
	m     *Model
	spec  *Spec
	refs  []OpRef
	byKey map[string][]OpRef
}

// tookEffect is, for illegal key p, a clause naming the latest failed
// operation invoked by horizon that makes p linearizable if it took effect
// (as an operation of unknown outcome), and the positions of its entries;
// nothing if none of those tried before ctx ends does. Only keyed models
// are asked: in a model of the whole history, converting an operation can
// widen every state the check already judged.
func (f *failures) tookEffect(ctx context.Context, p *Part, horizon int64) (string, []int) {
	if !f.m.keyed || len(f.refs) == 0 {
		return "", nil
	}
	if f.byKey == nil {
		f.byKey = map[string][]OpRef{}
		for _, r := range f.refs {
			k := f.m.keyOf(&f.h[r.Inv])
			f.byKey[k] = append(f.byKey[k], r)
		}
	}
	var tries []OpRef
	for _, r := range f.byKey[p.key] {
		if int64(f.h[r.Inv].Time) <= horizon {
			tries = append(tries, r)
		}
	}
	// The nearest to where the order breaks first.
	slices.SortStableFunc(tries, func(a, b OpRef) int { return cmp.Compare(f.h[b.Inv].Time, f.h[a.Inv].Time) })
	model := f.spec.Model
	ops := append(slices.Clip(p.Ops), porcupine.Operation{})
	tried := 0
	for _, r := range tries {
		if tried == maxFailedTries || ctx.Err() != nil {
			break
		}
		inv := &f.h[r.Inv]
		lop, err := f.spec.Convert(inv, nil)
		if err != nil || lop.Drop || lop.Unseen {
			continue
		}
		tried++
		o := porcupine.Operation{ClientId: inv.Process, Input: lop.Input, Output: lop.Output, Call: int64(inv.Time), Return: unknownReturn(inv, lop)}
		ops[len(ops)-1] = o
		if res, _ := search(ctx, model, ops); res != porcupine.Ok {
			continue
		}
		answer := "answered with a failure"
		if e := f.h[r.Done].Error; e != "" {
			answer += " (" + e + ")"
		}
		what := strings.TrimSuffix(describeOp(model, inv, o), UnknownMark(true))
		return fmt.Sprintf("it is linearizable if %s, %s, took effect", what, answer), []int{r.Inv, r.Done}
	}
	return "", nil
}
