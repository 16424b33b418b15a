package report

// Lock holds, for the timeline: a reader of a stale write needs to see
// whose tenure it fell in. A hold is as analysis/lock counts it: from an
// acquire's ok completion to the holder's next release or acquire
// invocation, or to the end of the run when none comes. Leader elections
// (campaign, resign) hold the same way.

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

type hold struct {
	proc        int
	from, to    time.Duration
	start, stop int // history indices: the acquire's completion, the entry that ended it (-1: none)
	lock        string
	session     int
	token       *int64
}

func (h hold) label() string {
	switch {
	case h.token != nil:
		return fmt.Sprintf("token %d", *h.token)
	case h.session > 0:
		return fmt.Sprintf("held s%d", h.session)
	}
	return "held"
}

func (h hold) describe() string {
	s := fmt.Sprintf("%s holds %q", history.ProcessName(h.proc), h.lock)
	if h.session > 0 {
		s += fmt.Sprintf(", session %d", h.session)
	}
	if h.token != nil {
		s += fmt.Sprintf(", fencing token %d", *h.token)
	} else {
		s += ", no fencing token"
	}
	s += fmt.Sprintf(", from %.3fs (#%d)", h.from.Seconds(), h.start)
	if h.stop < 0 {
		return s + " to the end of the run, never released"
	}
	return s + fmt.Sprintf(" to %.3fs (#%d)", h.to.Seconds(), h.stop)
}

// lockHolds reads the holds of every client in ops (a whole history or a
// sample of one; the end of the run is end). A history of no lock
// workload has none.
func lockHolds(ops []history.Op, end time.Duration) []hold {
	var out []hold
	open := map[int]int{} // process -> position in out of its hold in force
	closeAt := func(op *history.Op) {
		if i, ok := open[op.Process]; ok {
			out[i].to, out[i].stop = op.Time, op.Index
			delete(open, op.Process)
		}
	}
	for i := range ops {
		op := &ops[i]
		if op.Process < 0 {
			continue
		}
		acquire := op.F == lockop.FAcquire || op.F == lockop.FCampaign
		release := op.F == lockop.FRelease || op.F == lockop.FResign
		switch {
		case (acquire || release) && op.Type == history.Invoke:
			closeAt(op)
		case acquire && op.Type == history.Ok:
			var v lockop.Value
			if json.Unmarshal(op.Value, &v) != nil || v.Lock == "" {
				continue // not a lock's acquire
			}
			closeAt(op)
			open[op.Process] = len(out)
			out = append(out, hold{proc: op.Process, from: op.Time, to: end, start: op.Index, stop: -1,
				lock: v.Lock, session: v.Session, token: v.Token})
		}
	}
	return out
}
