package analysistest

import (
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/setop"
)

// SetAdd adds an add of e by proc and its completion, answered by node, and
// returns their indices.
func (h *History) SetAdd(proc int, inv, done float64, typ history.Type, e int64, node string) (int, int) {
	return h.Entry(inv, proc, history.Invoke, setop.FAdd, setop.Value{Element: &e}),
		h.Entry(done, proc, typ, setop.FAdd, setop.Value{Element: &e, Node: node})
}
