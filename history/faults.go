package history

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"
)

// FaultWindow is one fault as the nemesis recorded it: from its start's
// invocation until its end's completion, or until the history ends when it
// was never healed.
type FaultWindow struct {
	Kind       string
	Victims    []string // the start's completion value: who was hit, and how
	Start, End time.Duration
	// Hit is when its start completed, naming its victims: when it took
	// hold (a crash point's, when it fired).
	Hit time.Duration
	// From and To are the history indices of the start's invocation and
	// the end's completion; To is -1 when the fault was never healed.
	From, To int
}

// FaultWindows reads the nemesis's entries (process -1, "<kind>-start" and
// "<kind>-end", value the victims) as windows, in order of start. A fault
// that hit nobody (no one held the lock) was never in force: it is one of
// FaultsMissed, not a window.
func FaultWindows(ops []Op) []FaultWindow {
	hit, _ := faultWindows(ops)
	return hit
}

// FaultsMissed are the faults that hit nobody, each as the window it would
// have had (Start, From: its start's invocation; End: when it gave up).
func FaultsMissed(ops []Op) []FaultWindow {
	_, missed := faultWindows(ops)
	return missed
}

func faultWindows(ops []Op) (hit, missed []FaultWindow) {
	type window struct {
		FaultWindow
		ended, named bool
	}
	var ws []*window
	var last time.Duration
	open := func(kind string, pick func(*window) bool) *window {
		for _, w := range ws {
			if w.Kind == kind && w.To < 0 && pick(w) {
				return w
			}
		}
		return nil
	}
	for i := range ops {
		op := &ops[i]
		last = max(last, op.Time)
		if op.Process != Nemesis {
			continue
		}
		var victims []string
		if len(op.Value) > 0 {
			_ = json.Unmarshal(op.Value, &victims) // unreadable victims: the window still counts
		}
		if kind, ok := strings.CutSuffix(op.F, "-start"); ok {
			if op.Type == Invoke {
				ws = append(ws, &window{FaultWindow: FaultWindow{Kind: kind, Start: op.Time, From: op.Index, To: -1}})
			} else if w := open(kind, func(w *window) bool { return !w.named }); w != nil {
				w.Victims, w.named, w.Hit = victims, true, op.Time
			}
			continue
		}
		kind, ok := strings.CutSuffix(op.F, "-end")
		if !ok {
			continue
		}
		if op.Type == Invoke {
			w := open(kind, func(w *window) bool { return !w.ended && slices.Equal(w.Victims, victims) })
			if w == nil {
				w = open(kind, func(w *window) bool { return !w.ended })
			}
			if w != nil {
				w.ended = true
			}
			continue
		}
		if w := open(kind, func(w *window) bool { return w.ended }); w != nil {
			w.End, w.To = op.Time, op.Index
		}
	}
	for _, w := range ws {
		if w.To < 0 && w.named && len(w.Victims) == 0 && !w.ended {
			w.End = w.Hit
			missed = append(missed, w.FaultWindow) // never in force
			continue
		}
		if w.To < 0 {
			w.End = last
		}
		hit = append(hit, w.FaultWindow)
	}
	return hit, missed
}

// FaultColor is the colour faults of kind are drawn in: its own, chosen
// (faultColors), or one drawn from its name, so that a new kind of fault
// is told apart from the others without a word here.
func FaultColor(kind string) string {
	if c, ok := faultColors[kind]; ok {
		return c
	}
	h := fnv.New32a()
	h.Write([]byte(kind))
	// A pale colour, as the chosen ones: each channel in the upper fifth.
	v := h.Sum32()
	return fmt.Sprintf("#%02x%02x%02x", 0xd0+v%0x30, 0xd0+(v>>8)%0x30, 0xd0+(v>>16)%0x30)
}

// faultColors are the colours chosen for the kinds of fault chaos has.
var faultColors = map[string]string{"partition": "#fde2e4", "pause": "#fff1c1", "kill": "#e2e8fd", "clock": "#e3f8e0",
	"power-loss": "#d6dcf7", "bitflip": "#f3dcf5", "truncate": "#f3dcf5",
	// A process slowed, not stopped: a pause's hue, paler.
	"cpu": "#fbf3dc",
	// Packet faults in the partition's family of hues: the network.
	"loss": "#fbd5c0", "delay": "#fcebd9", "reorder": "#fcebd9", "duplicate": "#fcebd9", "corrupt": "#fbd5c0",
	"bandwidth": "#fcebd9", "remove-member": "#dfe9f5"}
