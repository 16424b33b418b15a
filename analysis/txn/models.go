package txn

import (
	"maps"
	"slices"
)

// The tables below are Elle's consistency_model.clj, restricted to what
// these checkers can find, plus garbage-read, which Elle's code does not
// report: like duplicate-elements, no Adya history can have one, so it
// rules out read uncommitted and everything stronger. It counts only
// when no models or anomalies were chosen (Options.chosen).

// garbageRead is chaos's own anomaly: a read of a value nobody wrote.
const garbageRead = "garbage-read"

// impliedAnomalies: an anomaly a implies each of impliedAnomalies[a]
// (Elle's implied-anomalies).
var impliedAnomalies = map[string][]string{
	"G0":                          {"G1c", "G0-process"},
	"G0-process":                  {"G1c-process", "G0-realtime"},
	"G0-realtime":                 {"G1c-realtime"},
	"G1a":                         {"G1"},
	"G1b":                         {"G1"},
	"G1c":                         {"G1", "G1c-process"},
	"G1c-process":                 {"G1c-realtime", "G1-process"},
	"G1c-realtime":                {"G1-realtime"},
	"G1":                          {"G1-process"},
	"G1-process":                  {"G1-realtime"},
	"G-single-item":               {"G-single", "G-single-item-process", "G-nonadjacent-item"},
	"G-single-item-process":       {"G-single-process", "G-single-item-realtime", "G-nonadjacent-item-process"},
	"G-single-item-realtime":      {"G-single-realtime", "G-nonadjacent-item-realtime"},
	"G-single":                    {"G-nonadjacent", "GSIb", "G-single-process"},
	"G-single-process":            {"G-nonadjacent-process", "G-single-realtime"},
	"G-single-realtime":           {"G-nonadjacent-realtime"},
	"G-nonadjacent-item":          {"G-nonadjacent", "G2-item", "G-nonadjacent-item-process"},
	"G-nonadjacent-item-process":  {"G-nonadjacent-process", "G2-item-process", "G-nonadjacent-item-realtime"},
	"G-nonadjacent-item-realtime": {"G2-item-realtime", "G-nonadjacent-realtime"},
	"G-nonadjacent":               {"G2", "G-nonadjacent-process"},
	"G-nonadjacent-process":       {"G2-process", "G-nonadjacent-realtime"},
	"G-nonadjacent-realtime":      {"G2-realtime"},
	"G2":                          {"G2-process"},
	"G2-item":                     {"G2", "G2-item-process"},
	"G2-item-process":             {"G2-process", "G2-item-realtime"},
	"G2-item-realtime":            {"G2-realtime"},
	"G2-process":                  {"G2-realtime"},
	"GSIa":                        {"GSI"},
	"GSIb":                        {"GSI"},
	"incompatible-order":          {"G1a"},
	"future-read":                 {"G1c"},
	"dirty-update":                {"G1a"},
	"lost-update":                 {"write-skew", "G2-item"},
	"write-skew":                  {"G2"},
}

// anomalySeverity orders anomalies that do not imply one another: G0 is
// worse than G1c, data anomalies worse than process ones, and those worse
// than real-time ones (Elle's anomaly-severity-graph). Searches and
// listings go by it.
var anomalySeverity = map[string][]string{
	"G0":           {"G1c"},
	"G0-process":   {"G1c-process"},
	"G0-realtime":  {"G1c-realtime"},
	"G1c":          {"G-single", "G2-item"},
	"G1c-process":  {"G-single-process", "G2-item-process"},
	"G1c-realtime": {"G-single-realtime", "G2-item-realtime"},
	"G2":           {"G0-process"},
	"G2-process":   {"G0-realtime"},
}

// modelsImplied: a history that satisfies model m satisfies each of
// modelsImplied[m] (Elle's models), in canonical names.
var modelsImplied = map[string][]string{
	"causal-cerone":                     {"read-atomic"},
	"PL-2+":                             {"PL-CS", "PL-2L"},
	"PL-CS":                             {"PL-2"},
	"PL-FCV":                            {"PL-2+"},
	"PL-2":                              {"PL-1"},
	"PL-3":                              {"PL-2.99", "PL-3U", "PL-SI", "view-serializable"},
	"PL-3U":                             {"PL-FCV"},
	"monotonic-atomic-view":             {"PL-2"},
	"PL-2L":                             {"PL-2"},
	"PL-MSR":                            {"PL-2"},
	"parallel-snapshot-isolation":       {"causal-cerone", "update-atomic"},
	"prefix":                            {"causal-cerone"},
	"read-atomic":                       {"monotonic-atomic-view"},
	"PL-2.99":                           {"PL-CS", "monotonic-atomic-view"},
	"update-atomic":                     {"read-atomic"},
	"PL-SI":                             {"PL-FCV", "monotonic-atomic-view", "PL-MSR", "parallel-snapshot-isolation", "prefix"},
	"PL-SS":                             {"PL-3", "linearizable", "PL-SI", "strong-snapshot-isolation", "strong-session-serializable", "session-serializable"},
	"strong-session-PL-1":               {"PL-1"},
	"strong-session-PL-2":               {"PL-2", "strong-session-PL-1"},
	"strong-PL-1":                       {"strong-session-PL-1"},
	"strong-PL-2":                       {"strong-session-PL-2", "strong-PL-1"},
	"strong-session-serializable":       {"PL-3", "strong-session-snapshot-isolation"},
	"strong-session-snapshot-isolation": {"PL-SI", "strong-session-PL-2"},
	"strong-snapshot-isolation":         {"strong-session-snapshot-isolation", "strong-PL-2"},
	"linearizable":                      {"sequential"},
	"sequential":                        {"causal"},
	"causal":                            {"writes-follow-reads", "PRAM"},
	"PRAM":                              {"monotonic-reads", "monotonic-writes", "read-your-writes"},
	"session-serializable":              {"1SR"},
}

// proscribed: model m directly forbids each of proscribed[m] (Elle's
// direct-proscribed-anomalies), in canonical names.
var proscribed = map[string][]string{
	"causal-cerone":                     {"internal", "G1a"},
	"PL-CS":                             {"G1", "G-cursor", "lost-update"},
	"PL-2L":                             {"G1", "G-monotonic"},
	"PL-MSR":                            {"G1", "G-MSR"},
	"PL-2+":                             {"G1", "G-single"},
	"PL-FCV":                            {"G1", "G-SIb"},
	"parallel-snapshot-isolation":       {"internal", "G1a"},
	"PL-3":                              {"G1", "G2", "internal"},
	"PL-2":                              {"G1"},
	"PL-1":                              {"G0", "duplicate-elements", "cyclic-versions", garbageRead},
	"prefix":                            {"internal", "G1a"},
	"PL-SI":                             {"internal", "G1", "G-SI", "G-nonadjacent"},
	"read-atomic":                       {"internal", "G1a", "future-read"},
	"PL-2.99":                           {"G1", "G2-item", "lost-update"},
	"update-atomic":                     {"lost-update"},
	"PL-SS":                             {"G1", "G1c-realtime", "G2-realtime"},
	"strong-session-PL-1":               {"G0-process"},
	"strong-session-PL-2":               {"G1c-process"},
	"strong-PL-1":                       {"G0-realtime"},
	"strong-PL-2":                       {"G1c-realtime"},
	"strong-session-snapshot-isolation": {"internal", "G1-process", "G-nonadjacent-process"},
	"strong-snapshot-isolation":         {"internal", "G1-realtime", "G-nonadjacent-realtime"},
	"strong-session-serializable":       {"G1-process", "G2-process"},
	"PL-3U":                             {"G1", "G-update"},
}

// canonicalModel gives the canonical name of each model Elle knows by
// other names (Elle's canonical-model-names).
var canonicalModel = map[string]string{
	"consistent-view":                 "PL-2+",
	"conflict-serializable":           "PL-3",
	"cursor-stability":                "PL-CS",
	"forward-consistent-view":         "PL-FCV",
	"monotonic-snapshot-read":         "PL-MSR",
	"monotonic-view":                  "PL-2L",
	"read-committed":                  "PL-2",
	"read-uncommitted":                "PL-1",
	"repeatable-read":                 "PL-2.99",
	"serializable":                    "PL-3",
	"snapshot-isolation":              "PL-SI",
	"strict-serializable":             "PL-SS",
	"strong-serializable":             "PL-SS",
	"update-serializable":             "PL-3U",
	"strong-session-read-uncommitted": "strong-session-PL-1",
	"strong-session-read-committed":   "strong-session-PL-2",
	"strong-read-uncommitted":         "strong-PL-1",
	"strong-read-committed":           "strong-PL-2",
}

// friendlyModel names canonical models as Elle reports them (Elle's
// friendly-model-names, which picks serializable for PL-3; for PL-SS it
// picks whichever of its two names its map yields last, and here it is
// strict-serializable).
var friendlyModel = func() map[string]string {
	f := map[string]string{}
	for name, c := range canonicalModel {
		f[c] = name
	}
	f["PL-3"], f["PL-SS"] = "serializable", "strict-serializable"
	return f
}()

// reach is every vertex reachable from starts in a graph given as
// adjacency lists, starts included.
func reach(adj map[string][]string, starts []string) map[string]bool {
	seen := map[string]bool{}
	queue := slices.Clone(starts)
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if seen[v] {
			continue
		}
		seen[v] = true
		queue = append(queue, adj[v]...)
	}
	return seen
}

// reverse turns a graph's edges around.
func reverse(adj map[string][]string) map[string][]string {
	rev := map[string][]string{}
	for _, a := range slices.Sorted(maps.Keys(adj)) {
		for _, b := range adj[a] {
			rev[b] = append(rev[b], a)
		}
	}
	return rev
}

// impossibleModels are the canonical models the anomalies rule out
// (Elle's anomalies->impossible-models).
func impossibleModels(anomalies []string) map[string]bool {
	forbidding := reverse(proscribed)
	var direct []string
	for a := range reach(impliedAnomalies, anomalies) {
		direct = append(direct, forbidding[a]...)
	}
	return reach(reverse(modelsImplied), direct)
}

// boundary is what the anomalies found rule out, as Elle's boundary: not,
// the weakest models they violate, and alsoNot, the stronger ones that
// follow, in Elle's friendly names, sorted.
func boundary(impossible map[string]bool) (not, alsoNot []string) {
	for m := range impossible {
		// Weakest: m implies no other impossible model.
		weakest := true
		for w := range reach(modelsImplied, []string{m}) {
			if w != m && impossible[w] {
				weakest = false
				break
			}
		}
		name := friendlyName(m)
		if weakest {
			not = append(not, name)
		} else {
			alsoNot = append(alsoNot, name)
		}
	}
	slices.Sort(not)
	slices.Sort(alsoNot)
	return not, alsoNot
}

// strongestPossible are the strongest models not ruled out (Elle's
// strongest-models of its possible-models): those no other possible model
// implies, in friendly names, sorted.
func strongestPossible(impossible map[string]bool) []string {
	implying := reverse(modelsImplied)
	var out []string
	for _, m := range knownModels() {
		if canonicalModel[m] != "" || impossible[m] {
			continue // a model is counted once, by its canonical name
		}
		strongest := true
		for s := range reach(implying, []string{m}) {
			if s != m && !impossible[s] {
				strongest = false
				break
			}
		}
		if strongest {
			out = append(out, friendlyName(m))
		}
	}
	slices.Sort(out)
	return out
}

func friendlyName(m string) string {
	if f, ok := friendlyModel[m]; ok {
		return f
	}
	return m
}

// anomalyDepths is each anomaly's depth in Elle's implication and severity
// graphs: 0 for those nothing implies or outranks. Elle searches cycle
// classes, and reports anomalies, shallowest first.
var anomalyDepths = func() map[string]int {
	merged := map[string][]string{}
	for _, g := range []map[string][]string{impliedAnomalies, anomalySeverity} {
		for a, bs := range g {
			merged[a] = append(merged[a], bs...)
		}
	}
	parents := reverse(merged)
	depth := map[string]int{}
	var visit func(string) int
	visit = func(a string) int { // depth = longest path from a root; the graph is a small DAG
		if d, ok := depth[a]; ok {
			return d
		}
		d := 0
		for _, p := range parents[a] {
			d = max(d, visit(p)+1)
		}
		depth[a] = d
		return d
	}
	for a, bs := range merged {
		visit(a)
		for _, b := range bs {
			visit(b)
		}
	}
	return depth
}()

// anomalyDepth is a's depth; kinds outside the graphs sort with the roots.
func anomalyDepth(a string) int { return anomalyDepths[a] }
