package history

// Pair is one operation: its invocation and its completion, or nil for a
// completion the history does not have (the process never finished it).
// Only PairsWithLone makes pairs without an invocation.
type Pair struct {
	Inv, Done *Op
}

// Pairs matches the invocations and completions of the ops keep selects,
// process by process (a process has one op in flight), in the order of
// the invocations. A completion without an invocation is skipped.
func Pairs(ops []Op, keep func(*Op) bool) []Pair { return pairs(ops, keep, false) }

// PairsWithLone is Pairs, except that a completion without an invocation
// is kept, in its place, as a pair whose Inv is nil: Jepsen and Elle read
// a history of completions only as operations whose start is unknown.
func PairsWithLone(ops []Op, keep func(*Op) bool) []Pair { return pairs(ops, keep, true) }

func pairs(ops []Op, keep func(*Op) bool, lone bool) []Pair {
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
		} else if lone {
			out = append(out, Pair{Done: op})
		}
	}
	return out
}
