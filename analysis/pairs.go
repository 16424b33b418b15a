package analysis

import "github.com/chaos-testing/chaos/history"

// opPair is one operation: its invocation and its completion, or nil for
// a completion the history does not have (the process never finished it).
type opPair struct {
	inv, done *history.Op
}

// pairs matches the invocations and completions of the ops keep selects,
// process by process (a process has one op in flight), in the order of
// the invocations. A completion without an invocation is skipped.
func pairs(ops []history.Op, keep func(*history.Op) bool) []opPair {
	var out []opPair
	pending := map[int]int{} // process -> position in out of its op in flight
	for i := range ops {
		op := &ops[i]
		if !keep(op) {
			continue
		}
		if op.Type == history.Invoke {
			pending[op.Process] = len(out)
			out = append(out, opPair{inv: op})
			continue
		}
		if j, ok := pending[op.Process]; ok {
			out[j].done = op
			delete(pending, op.Process)
		}
	}
	return out
}
