// Porcupine's HTML visualization of an illegal key, with the nemesis's
// fault windows drawn as annotations and the history entries behind each
// operation in its tooltip.
package analysis

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/history"
)

// visualize writes porcupine's HTML view of one illegal key to dir, with the
// nemesis's fault windows drawn as annotations, and returns the file name.
func visualize(dir string, m *linModel, model porcupine.Model, key string, info porcupine.LinearizationInfo, faults []porcupine.Annotation) (name string, err error) {
	defer func() {
		if e := recover(); e != nil {
			err = fmt.Errorf("porcupine crashed: %v", e)
		}
	}()
	name = "linearizability-" + fileKey(m, key) + ".html"
	info.AddAnnotations(faults)
	return name, porcupine.VisualizePath(model, info, filepath.Join(dir, name))
}

// visualizationNote tells where the visualizations of written illegal keys
// are, and what their annotations show.
func visualizationNote(m *linModel, dir string, written, faults int) string {
	what := fmt.Sprintf("%d illegal %ss written to %s as linearizability-<key>.html", written, m.what, dir)
	if !m.keyed {
		what = fmt.Sprintf("the history written to %s as linearizability-%s.html", dir, m.name)
	}
	ann := fmt.Sprintf(", with the %d nemesis fault windows as annotations", faults)
	if faults == 0 {
		ann = " (the history has no nemesis fault windows to annotate)"
	}
	return "porcupine's visualization of " + what + ann
}

// fileKey makes a key safe as part of a file name. A key that had to be
// changed gets a hash of the original, so two keys never share a file.
func fileKey(m *linModel, key string) string {
	if !m.keyed {
		return m.name
	}
	safe := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
	}
	if key != "" && len(key) <= 100 && key[0] != '.' && strings.IndexFunc(key, func(r rune) bool { return !safe(r) }) < 0 {
		return key
	}
	clean := strings.Map(func(r rune) rune {
		if safe(r) {
			return r
		}
		return '_'
	}, key)
	h := fnv.New32a()
	h.Write([]byte(key))
	return fmt.Sprintf("_%.60s_%08x", clean, h.Sum32())
}

// faultWindows reads the nemesis's entries (process -1, "<kind>-start" and
// "<kind>-end", value the victims' names) as annotations: a fault may act from
// its start's invocation until its end's completion, or until the history
// ends when it was never healed.
func faultWindows(ops []history.Op) []porcupine.Annotation {
	type window struct {
		kind         string
		victims      []string
		start, end   time.Duration
		from, to     int // history indices; to = -1 while open
		ended, named bool
	}
	var ws []*window
	var last time.Duration
	open := func(kind string, pick func(*window) bool) *window {
		for _, w := range ws {
			if w.kind == kind && w.to < 0 && pick(w) {
				return w
			}
		}
		return nil
	}
	for i := range ops {
		op := &ops[i]
		last = max(last, op.Time)
		if op.Process != history.Nemesis {
			continue
		}
		var victims []string
		if len(op.Value) > 0 {
			_ = json.Unmarshal(op.Value, &victims) // unreadable victims: the window still counts
		}
		if kind, ok := strings.CutSuffix(op.F, "-start"); ok {
			if op.Type == history.Invoke {
				ws = append(ws, &window{kind: kind, start: op.Time, from: op.Index, to: -1})
			} else if w := open(kind, func(w *window) bool { return !w.named }); w != nil {
				w.victims, w.named = victims, true
			}
			continue
		}
		kind, ok := strings.CutSuffix(op.F, "-end")
		if !ok {
			continue
		}
		if op.Type == history.Invoke {
			w := open(kind, func(w *window) bool { return !w.ended && slices.Equal(w.victims, victims) })
			if w == nil {
				w = open(kind, func(w *window) bool { return !w.ended })
			}
			if w != nil {
				w.ended = true
			}
			continue
		}
		if w := open(kind, func(w *window) bool { return w.ended }); w != nil {
			w.end, w.to = op.Time, op.Index
		}
	}
	colors := map[string]string{"partition": "#fde2e4", "pause": "#fff1c1", "kill": "#e2e8fd", "clock": "#e3f8e0"}
	out := make([]porcupine.Annotation, 0, len(ws))
	for _, w := range ws {
		details := fmt.Sprintf("from #%d at %s", w.from, secs(w.start))
		if w.to < 0 {
			w.end = last
			details += ", never healed"
		} else {
			details += fmt.Sprintf(" to #%d at %s", w.to, secs(w.end))
		}
		out = append(out, porcupine.Annotation{
			Tag:             "nemesis " + w.kind,
			Start:           int64(w.start),
			End:             int64(w.end),
			Description:     strings.TrimSpace(w.kind + " " + strings.Join(w.victims, " ")),
			Details:         details,
			BackgroundColor: cmp.Or(colors[w.kind], "#eeeeee"),
		})
	}
	return out
}

// describeRef shows, in a visualization's tooltip, the history entries of an
// operation.
func describeRef(h []history.Op) func(any) string {
	return func(m any) string {
		r, ok := m.(*opRef)
		if !ok {
			return ""
		}
		if r.done < 0 {
			return fmt.Sprintf("#%d, never completed", h[r.inv].Index)
		}
		return fmt.Sprintf("#%d → #%d %s", h[r.inv].Index, h[r.done].Index, h[r.done].Type)
	}
}
