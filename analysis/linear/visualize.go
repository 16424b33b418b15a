// Porcupine's HTML visualization of an illegal key, with the nemesis's
// fault windows drawn as annotations and the history entries behind each
// operation in its tooltip.

package linear

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// visualize writes porcupine's HTML view of one illegal key to dir, with the
// nemesis's fault windows drawn as annotations, and returns the file name.
func visualize(dir string, m *Model, model porcupine.Model, key string, info porcupine.LinearizationInfo, faults []porcupine.Annotation) (name string, err error) {
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
func visualizationNote(m *Model, dir string, written, faults int) string {
	what := fmt.Sprintf("%d illegal %ss written to %s as linearizability-<key>.html", written, m.What, dir)
	if !m.keyed {
		what = fmt.Sprintf("the history written to %s as linearizability-%s.html", dir, m.Name)
	}
	ann := fmt.Sprintf(", with the %d nemesis fault windows as annotations", faults)
	if faults == 0 {
		ann = " (the history has no nemesis fault windows to annotate)"
	}
	return "porcupine's visualization of " + what + ann
}

// fileKey makes a key safe as part of a file name. A key that had to be
// changed gets a hash of the original, so two keys never share a file.
func fileKey(m *Model, key string) string {
	if !m.keyed {
		return m.Name
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

// faultWindows draws the nemesis's faults (history.FaultWindows) as
// annotations.
func faultWindows(ops []history.Op) []porcupine.Annotation {
	var out []porcupine.Annotation
	for _, w := range history.FaultWindows(ops) {
		details := fmt.Sprintf("from #%d at %s", w.From, analysis.Secs(w.Start))
		if w.To < 0 {
			details += ", never healed"
		} else {
			details += fmt.Sprintf(" to #%d at %s", w.To, analysis.Secs(w.End))
		}
		out = append(out, porcupine.Annotation{
			Tag:             "nemesis " + w.Kind,
			Start:           int64(w.Start),
			End:             int64(w.End),
			Description:     strings.TrimSpace(w.Kind + " " + strings.Join(w.Victims, " ")),
			Details:         details,
			BackgroundColor: history.FaultColor(w.Kind),
		})
	}
	return out
}

// describeRef shows, in a visualization's tooltip, the history entries of an
// operation.
func describeRef(h []history.Op) func(any) string {
	return func(m any) string {
		r, ok := m.(*OpRef)
		if !ok {
			return ""
		}
		if r.Done < 0 {
			return fmt.Sprintf("#%d, never completed", h[r.Inv].Index)
		}
		return fmt.Sprintf("#%d → #%d %s", h[r.Inv].Index, h[r.Done].Index, h[r.Done].Type)
	}
}
