package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/replay"
	"github.com/chaos-testing/chaos/runfolder"
)

// runSummary is what --json prints of one judged run.
type runSummary struct {
	Plan       string           `json:"plan,omitempty"`
	Seed       int64            `json:"seed"`
	Verdict    analysis.Verdict `json:"verdict"`
	Expect     string           `json:"expect,omitempty"`
	AsExpected *bool            `json:"as_expected,omitempty"`
	Incomplete string           `json:"incomplete,omitempty"`
	// Checkers are each checker's verdict and count of findings, and
	// Kinds the kinds of finding listed, as "checker: kind".
	Checkers []checkerSummary `json:"checkers"`
	Kinds    []string         `json:"kinds,omitempty"`
	Dir      string           `json:"dir"`
	Exit     int              `json:"exit"`
}

type checkerSummary struct {
	Checker  string           `json:"checker"`
	Verdict  analysis.Verdict `json:"verdict"`
	Findings int              `json:"findings"`
}

// summarize sums up the run in dir, judged rep with exit code code; with
// expect, the exit code says whether the verdict met the plan's
// expectation instead: 0 if it did, 2 if undecided, else 1.
func summarize(rep analysis.Report, dir string, code int, expect bool) runSummary {
	s := runSummary{Verdict: rep.Verdict, Dir: dir, Exit: code, Kinds: replay.Kinds(rep)}
	if info, err := runfolder.Folder(dir).ReadInfo(); err == nil {
		s.Plan, s.Seed, s.Expect, s.Incomplete = info.Plan, info.Seed, info.Expect, info.Incomplete()
		s.AsExpected = runfolder.Expected(info.Expect, rep.Verdict)
	}
	for _, r := range rep.Results {
		s.Checkers = append(s.Checkers, checkerSummary{r.Checker, r.Verdict, r.FindingsTotal})
	}
	if expect && s.AsExpected != nil {
		switch {
		case *s.AsExpected:
			s.Exit = exitValid
		case rep.Verdict == analysis.Unknown:
			s.Exit = exitUndecided
		default:
			s.Exit = exitAnomaly
		}
	}
	return s
}

// metText says whether a verdict met its plan's expectation.
func metText(met bool) string {
	if met {
		return "as expected"
	}
	return "unexpected"
}

// worstExit is the exit code of many runs: an anomaly (or, with --expect,
// an unmet expectation) over an undecided run over a valid one.
func worstExit(sums []runSummary) int {
	code := exitValid
	for _, s := range sums {
		switch {
		case s.Exit == exitAnomaly:
			return exitAnomaly
		case s.Exit != exitValid:
			code = s.Exit
		}
	}
	return code
}

// seedTable ends a run over many seeds: a line per run, then how often
// each verdict came.
func seedTable(w io.Writer, sums []runSummary) {
	fmt.Fprintf(w, "\n%d runs of %s:\n", len(sums), sums[0].Plan)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "seed\tverdict\texpected\tfindings\tfolder")
	count := map[string]int{}
	met := 0
	for _, s := range sums {
		verdict := string(s.Verdict)
		if s.Incomplete != "" {
			verdict += " (incomplete)"
		}
		count[string(s.Verdict)]++
		expected := "-"
		if s.AsExpected != nil {
			expected = metText(*s.AsExpected)
			if *s.AsExpected {
				met++
			}
		}
		kinds := strings.Join(s.Kinds, "; ")
		if kinds == "" {
			kinds = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", s.Seed, verdict, expected, kinds, s.Dir)
	}
	tw.Flush()
	var rates []string
	for _, v := range []analysis.Verdict{analysis.Valid, analysis.Invalid, analysis.Unknown} {
		rates = append(rates, fmt.Sprintf("%s %d/%d", v, count[string(v)], len(sums)))
	}
	fmt.Fprint(w, strings.Join(rates, ", "))
	if sums[0].Expect != "" {
		fmt.Fprintf(w, "; as expected (%s) %d/%d", sums[0].Expect, met, len(sums))
	}
	fmt.Fprintln(w)
}

// printJSON prints one run's summary, or many runs' (--seeds, whatever
// their number) as {"runs": [...], "exit": N}.
func printJSON(sums []runSummary, many bool) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if !many {
		return enc.Encode(sums[0])
	}
	return enc.Encode(struct {
		Runs []runSummary `json:"runs"`
		Exit int          `json:"exit"`
	}{sums, worstExit(sums)})
}
