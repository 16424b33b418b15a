// Where the generators draw their choices: a seeded *rand.Rand in the
// comparison tests, a fuzzer's bytes in the fuzz targets.

package randhistory

import "github.com/chaos-testing/chaos/history"

// Rand is where a generator draws its choices: a *rand.Rand, or FuzzBytes.
type Rand interface{ IntN(n int) int }

// FuzzBytes turns a fuzzer's bytes into choices: each IntN takes one byte,
// and gives 0 once they run out, so every input is a history and a short
// one a small history.
type FuzzBytes []byte

// IntN implements Rand.
func (b *FuzzBytes) IntN(n int) int {
	if len(*b) == 0 {
		return 0
	}
	c := (*b)[0]
	*b = (*b)[1:]
	return int(c) % n
}

// OneOf is one of vs, each as likely (a value listed twice, twice as likely).
func OneOf[T any](r Rand, vs ...T) T { return vs[r.IntN(len(vs))] }

// AnyOutcome is how a generated operation ends: ok half the time, else
// fail, info, or "" for never completed.
func AnyOutcome(r Rand) history.Type {
	return OneOf(r, history.Ok, history.Ok, history.Ok, history.Fail, history.Info, "")
}
