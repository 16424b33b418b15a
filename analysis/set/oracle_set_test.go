package set

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/analysis/set/oracle"
	"github.com/chaos-testing/chaos/history"
)

// setComparison draws set histories for TestOracleSet and FuzzOracleSet.
var setComparison = analysistest.Comparison[[]history.Op]{Draw: oracle.RandomSetHistory, Diff: diffSetOracle, Show: analysistest.JSONLines[history.Op]}

// TestOracleSet compares the set checker with the brute-force oracle on
// random small histories.
func TestOracleSet(t *testing.T) { setComparison.Test(t, 50000, analysistest.Indexed(0x5e7)) }

// FuzzOracleSet turns fuzz bytes into a small set history and compares the
// set checker with the oracle on it.
func FuzzOracleSet(f *testing.F) {
	setComparison.Fuzz(f, []byte{},
		[]byte{4, 11, 0, 1, 2, 3, 4, 0, 1, 1, 0, 1, 0, 1, 0, 1, 2, 3, 4, 2, 0, 3, 1, 0},
		[]byte("set checker against oracle: duplicates, futures, late lines"))
}

// diffSetOracle says how the set checker's result on h differs from the
// oracle's, or else the verdict both gave.
func diffSetOracle(h []history.Op) ([]string, error) {
	want, err := oracle.CheckSet(h)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	got := Checker{}.Check(context.Background(), analysis.Input{History: h})
	var diffs []string
	differ := func(what string, g, w any) {
		if fmt.Sprint(g) != fmt.Sprint(w) {
			diffs = append(diffs, fmt.Sprintf("%s: checker %v, oracle %v", what, g, w))
		}
	}
	differ("verdict", got.Verdict, want.Verdict)
	counts := map[string]int{"adds": want.Adds, "elements": want.Elements}
	if want.Verdict != "unknown" {
		counts["final_reads"] = want.Reads
		counts["acknowledged"], counts["refused"], counts["unknown"] = want.Acknowledged, want.Refused, want.Unknown
		counts["recovered"] = len(want.Recovered)
	}
	sets := map[string][]int64{"lost": want.Lost, "unexpected": want.Unexpected, "future": want.Future}
	kinds := map[string]string{"lost": "lost-add", "unexpected": "unexpected-element", "future": "future-read"}
	total := 0
	for name, es := range sets {
		total += len(es)
		if want.Verdict == "unknown" {
			continue
		}
		counts[name] = len(es)
		listed, _ := got.Stats[name+"_elements"].(string)
		g, err := parseIntervals(listed)
		if err != nil {
			return nil, fmt.Errorf("stats[%s_elements]: %w", name, err)
		}
		differ(name+" elements", g, es)
		differ(kinds[name]+" findings", len(analysistest.FindingsOf(got, kinds[name])), len(es))
	}
	for k, w := range counts {
		differ("stats["+k+"]", got.Stats[k], w)
	}
	differ("findings_total", got.FindingsTotal, total)
	if len(got.Findings) != got.FindingsTotal {
		diffs = append(diffs, fmt.Sprintf("%d findings listed of %d; a small history lists them all", len(got.Findings), got.FindingsTotal))
	}
	if diffs != nil {
		return nil, fmt.Errorf("checker and oracle differ:\n\t%s\nchecker stats %v", strings.Join(diffs, "\n\t"), got.Stats)
	}
	return []string{want.Verdict}, nil
}

// parseIntervals reads what intervals writes ("1..3 5") back as a sorted
// list of elements, nil for "".
func parseIntervals(s string) ([]int64, error) {
	var es []int64
	for _, run := range strings.Fields(s) {
		lo, hi, isRun := strings.Cut(run, "..")
		if !isRun {
			hi = lo
		}
		a, err1 := strconv.ParseInt(lo, 10, 64)
		b, err2 := strconv.ParseInt(hi, 10, 64)
		if err1 != nil || err2 != nil || a > b {
			return nil, fmt.Errorf("%q: not a run of elements", run)
		}
		for e := a; e <= b; e++ {
			es = append(es, e)
		}
	}
	if !slices.IsSorted(es) {
		return nil, fmt.Errorf("%q: runs out of order", s)
	}
	return es, nil
}
