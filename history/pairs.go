package history

// Pair is one operation: its invocation and its completion, or nil for a
// completion the history does not have (the process never finished it).
type Pair struct {
	Inv, Done *Op
}

// Pairs matches the invocations and completions of the ops keep selects,
// process by process (a process has one op in flight), in the order of
// the invocations. A completion without an invocation is skipped.
func Pairs(ops []Op, keep func(*Op) bool) []Pair {
	var out []Pair
	pending := map[int]int{} // process -> position in out of its op in flight
	for i := range ops {
		op := &ops[i]
		if !keep(op) {
			continue
		}
		if op.Type == Invoke {
			pending[op.Process] = len(out)
			out = append(out, Pair{Inv: op})
			continue
		}
		if j, ok := pending[op.Process]; ok {
			out[j].Done = op
			delete(pending, op.Process)
		}
	}
	return out
}
