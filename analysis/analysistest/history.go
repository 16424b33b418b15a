// Package analysistest is what the checkers' tests share: histories built
// entry by entry, a checker run by its name, and the comparison of a
// checker with its brute-force oracle on random small histories.
package analysistest

import (
	"time"

	"github.com/chaos-testing/chaos/history"
)

// History builds a history entry by entry, in the order given (which need
// not be time order across processes); Index is the entry's position, and
// times are in seconds.
type History struct{ Ops []history.Op }

// Entry adds an entry and returns its index.
func (h *History) Entry(sec float64, proc int, typ history.Type, f string, v any) int {
	i := len(h.Ops)
	h.Ops = append(h.Ops, history.Op{
		Index: i, Time: time.Duration(sec * float64(time.Second)),
		Type: typ, Process: proc, F: f, Value: history.MustValue(v),
	})
	return i
}

// Add adds an entry, and returns h for the next.
func (h *History) Add(sec float64, proc int, typ history.Type, f string, v any) *History {
	h.Entry(sec, proc, typ, f, v)
	return h
}

// Indices lists the entries' indices.
func Indices(ops []history.Op) []int {
	var is []int
	for _, o := range ops {
		is = append(is, o.Index)
	}
	return is
}
