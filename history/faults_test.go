package history

import (
	"testing"
	"time"
)

// A fault that hit nobody (no one held the lock) made no window; one that
// hit someone and was never healed lasts until the history ends; a healed
// one, from its start to its end.
func TestFaultWindows(t *testing.T) {
	var ops []Op
	add := func(s float64, proc int, typ Type, f, v string) {
		op := Op{Index: len(ops), Time: time.Duration(s * float64(time.Second)), Process: proc, Type: typ, F: f}
		if v != "" {
			op.Value = []byte(v)
		}
		ops = append(ops, op)
	}
	add(1, Nemesis, Invoke, "partition-start", "")
	add(6, Nemesis, Info, "partition-start", `[]`) // nobody held the lock
	add(7, 0, Invoke, "acquire", `{}`)
	add(8, Nemesis, Invoke, "partition-start", "")
	add(8.1, Nemesis, Info, "partition-start", `["c0 -x- n1"]`)
	add(9, Nemesis, Invoke, "partition-end", `["c0 -x- n1"]`)
	add(9.2, Nemesis, Info, "partition-end", `["c0 -x- n1"]`)
	add(10, Nemesis, Invoke, "pause-start", "")
	add(10.1, Nemesis, Info, "pause-start", `["c0"]`)
	add(12, 0, Ok, "acquire", `{}`)
	ws := FaultWindows(ops)
	if len(ws) != 2 {
		t.Fatalf("windows %+v; want the partition that hit c0 and the pause", ws)
	}
	if w := ws[0]; w.Kind != "partition" || w.Start != 8*time.Second || w.End != 9200*time.Millisecond || w.From != 3 || w.To != 6 {
		t.Errorf("healed partition: %+v", w)
	}
	if w := ws[1]; w.Kind != "pause" || w.End != 12*time.Second || w.To != -1 {
		t.Errorf("pause never healed: %+v; want it to last until the history ends", w)
	}
	if m := FaultsMissed(ops); len(m) != 1 || m[0].Kind != "partition" || m[0].Start != time.Second || m[0].End != 6*time.Second || len(m[0].Victims) != 0 {
		t.Errorf("faults that hit nobody: %+v; want the first partition, from 1 s until it gave up at 6 s", m)
	}
}
