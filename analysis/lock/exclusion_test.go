package lock

import (
	"testing"

	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// Holds that start at one instant: whether they overlap is decided by their
// times, whichever of their lines the file has first. A hold is [acquire ok,
// end): one ended by a release invoked at the very time of its ok lasts no
// time; one that never ends lasts to its process's last entry, included.
func TestLockExclusionAtOneInstant(t *testing.T) {
	for _, tc := range []struct {
		name string
		// add writes the two holds' entries; first says which process's
		// acquire ok comes first in the file.
		add  func(h *hist, first int)
		want int
	}{
		{"released at once", func(h *hist, first int) {
			h.Entry(4, 0, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"})
			h.Entry(4, 1, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"})
			for _, p := range []int{first, 1 - first} {
				h.Entry(5, p, history.Ok, lockop.FAcquire, lockop.Value{Lock: "l", Session: 1})
			}
			h.release(0, 5, 5.1, history.Ok, 1) // p0 held it for no time
			h.release(1, 10, 10.1, history.Ok, 1)
		}, 0},
		{"never released", func(h *hist, first int) {
			h.Entry(4, 0, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"})
			h.Entry(4, 1, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"})
			for _, p := range []int{first, 1 - first} {
				h.Entry(5, p, history.Ok, lockop.FAcquire, lockop.Value{Lock: "l", Session: 1})
			}
			h.release(1, 10, 10.1, history.Ok, 1) // p0 holds it at 5 s, its last entry
		}, 1},
	} {
		for first := range 2 {
			h := &hist{}
			tc.add(h, first)
			r := check(t, h, nil, "")
			if got := len(analysistest.FindingsOf(r, "mutual-exclusion")); got != tc.want || r.FindingsTotal != tc.want {
				t.Errorf("%s, p%d's acquire first in the file: %d mutual-exclusion findings (%d in all), want %d", tc.name, first, got, r.FindingsTotal, tc.want)
			}
		}
	}
}
