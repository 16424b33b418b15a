package randhistory

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// randomLines is 0 to 3 processes' entries, each process's numbered in its
// order (F) at times that never decrease.
func randomLines(r Rand) [][]history.Op {
	lines := make([][]history.Op, r.IntN(4))
	for p := range lines {
		var at time.Duration
		for i := range r.IntN(5) {
			at += time.Duration(r.IntN(3)) * Tick
			lines[p] = append(lines[p], history.Op{Process: p, F: strconv.Itoa(i), Time: at})
		}
	}
	return lines
}

// Every line order keeps all entries and each process's own order, and
// numbers the lines; all but InTimeOrder sometimes put a line before an
// earlier-timed one, which is what the generators need them for.
func TestLineOrders(t *testing.T) {
	orders := []struct {
		name       string
		write      func(Rand, [][]history.Op) []history.Op
		mayShuffle bool
	}{
		{"interleave", Interleave, true},
		{"writtenLate", WrittenLate, true},
		{"inTimeOrder", func(r Rand, lines [][]history.Op) []history.Op { return InTimeOrder(Interleave(r, lines)) }, false},
	}
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			shuffled := 0
			for seed := range 2000 {
				r := rand.New(rand.NewPCG(uint64(seed), 0))
				lines := randomLines(r)
				h := o.write(r, lines)
				total, next := 0, make([]int, len(lines))
				for _, l := range lines {
					total += len(l)
				}
				if len(h) != total {
					t.Fatalf("seed %d: %d lines of %d entries", seed, len(h), total)
				}
				for i, op := range h {
					if op.Index != i || op.F != strconv.Itoa(next[op.Process]) {
						t.Fatalf("seed %d: line %d is entry %s (index %d) of process %d, expected entry %d", seed, i, op.F, op.Index, op.Process, next[op.Process])
					}
					next[op.Process]++
					if i > 0 && op.Time < h[i-1].Time {
						shuffled++
					}
				}
			}
			if (shuffled > 0) != o.mayShuffle {
				t.Fatalf("%d lines before an earlier-timed one", shuffled)
			}
		})
	}
}
