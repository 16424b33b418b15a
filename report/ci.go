package report

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/runfolder"
)

// junitSuite is JUnit's XML report, as CI systems read it: the run is a
// suite, each checker a test case that fails when it found an anomaly and
// is skipped when it could not decide. A run that did not finish cleanly
// has one more test case, "run", in error, so that a CI job reading only
// junit.xml sees a failure whatever the checkers said. A plan with an
// expectation has one more, "expect": it passes when the verdict met it,
// and then an anomaly the plan is meant to find is no failure (a positive
// control that finds its anomaly is green); its findings stay in the
// checker's output.
type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     float64     `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	Output    string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes r.Dir/junit.xml.
func writeJUnit(r Run, seconds float64) error {
	s := junitSuite{Name: fmt.Sprintf("%s seed %d", r.Plan, r.Seed), Time: seconds}
	if r.Incomplete != "" {
		s.Errors++
		s.Cases = append(s.Cases, junitCase{Name: "run", ClassName: "chaos." + r.Plan,
			Error: &junitMessage{Message: "incomplete: " + r.Incomplete, Text: incompleteNote}})
	}
	met := r.AsExpected != nil && *r.AsExpected
	if r.AsExpected != nil {
		c := junitCase{Name: "expect", ClassName: "chaos." + r.Plan, Output: fmt.Sprintf("expected %s, got %s", r.Expect, r.Report.Verdict)}
		if !met {
			s.Failures++
			c.Failure = &junitMessage{Message: fmt.Sprintf("expected %s, got %s", r.Expect, r.Report.Verdict)}
		}
		s.Cases = append(s.Cases, c)
	}
	for _, res := range r.Report.Results {
		c := junitCase{Name: res.Checker, ClassName: "chaos." + r.Plan, Output: strings.Join(res.Notes, "\n")}
		switch {
		case res.Verdict == analysis.Invalid && met:
			c.Output = strings.TrimSpace(fmt.Sprintf("as expected, %s\n%s\n%s", findingsMessage(res), findingsText(res), c.Output))
		case res.Verdict == analysis.Invalid:
			s.Failures++
			c.Failure = &junitMessage{Message: findingsMessage(res), Text: findingsText(res)}
		case res.Verdict == analysis.Unknown:
			s.Skipped++
			c.Skipped = &junitMessage{Message: "undecided: " + strings.Join(res.Notes, "; ")}
		}
		s.Cases = append(s.Cases, c)
	}
	s.Tests = len(s.Cases)
	b, err := xml.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(runfolder.Folder(r.Dir).Path(runfolder.JUnitFile), append([]byte(xml.Header), append(b, '\n')...), 0o644)
}

// findingsMessage counts a checker's findings, by kind too.
func findingsMessage(res analysis.Result) string {
	if len(res.Kinds) == 0 {
		return fmt.Sprintf("%d findings", res.FindingsTotal)
	}
	return fmt.Sprintf("%d findings: %s", res.FindingsTotal, res.KindCounts())
}

// findingsText is a checker's findings for junit.xml: the first few of
// each kind with their operations (a flood of thousands would bury a CI
// page; analysis.json lists them all).
func findingsText(res analysis.Result) string {
	var b strings.Builder
	shown, hidden := analysis.FirstOfEachKind(res.Findings, 5)
	for _, f := range shown {
		fmt.Fprintf(&b, "%s: %s\n", f.Kind, f.Explanation)
		for _, op := range f.Ops {
			fmt.Fprintf(&b, "  %s\n", op)
		}
	}
	if more := hidden + res.FindingsTotal - len(res.Findings); more > 0 {
		fmt.Fprintf(&b, "... %d more in %s\n", more, runfolder.AnalysisFile)
	}
	return b.String()
}

// writeSummary writes r.Dir/summary.md, a few lines for a CI job summary.
func writeSummary(r Run) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s (seed %d): %s", r.Plan, r.Seed, runStatus(string(r.Report.Verdict), r.Incomplete).Text)
	if e := expectation(r.Expect, r.AsExpected); e != nil {
		fmt.Fprintf(&b, ", %s", e.Text)
	}
	b.WriteString("\n\n")
	if r.Incomplete != "" {
		fmt.Fprintf(&b, "**incomplete: %s**\n\n%s\n\n", mdEscape(r.Incomplete), incompleteNote)
	}
	fmt.Fprintf(&b, "%d %s nodes, workload %s, %d history entries.\n\n", r.Nodes, r.Target, r.Workload, r.Report.Ops)
	b.WriteString("| checker | verdict | findings | by kind |\n|---|---|---|---|\n")
	for _, res := range r.Report.Results {
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", res.Checker, res.Verdict, res.FindingsTotal, mdEscape(res.KindCounts()))
	}
	for _, res := range r.Report.Results {
		for _, f := range res.Findings[:min(len(res.Findings), 3)] {
			fmt.Fprintf(&b, "\n- **%s** (%s): %s", f.Kind, res.Checker, mdEscape(f.Explanation))
		}
	}
	// The run's folder as results/ holds it, which is also how a CI
	// artifact of results/<plan>/ lays it out.
	folder := filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(r.Dir)), filepath.Base(r.Dir)))
	fmt.Fprintf(&b, "\n\nDetails: [`%s/report.html`](%s/report.html) under results/ (every finding, the timeline, the logs).\n", folder, folder)
	return os.WriteFile(runfolder.Folder(r.Dir).Path(runfolder.SummaryFile), []byte(b.String()), 0o644)
}

// mdEscape keeps an explanation from being read as Markdown.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;").Replace(s)
}
