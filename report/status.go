package report

import (
	"html/template"

	"github.com/chaos-testing/chaos/analysis"
)

// NotAnalyzed is the index's verdict for a run with no analysis.json.
const NotAnalyzed = "not analyzed"

// incompleteNote follows the reason a run is incomplete wherever its
// verdicts are shown.
const incompleteNote = "The run did not finish cleanly: the verdicts judge only the history it wrote before it stopped."

// status is how a run's verdict is shown: Class styles its badge.
type status struct{ Class, Text string }

// runStatus is a run's headline: its verdict, except that a run that did
// not finish cleanly is "incomplete", never valid, unless it found an
// anomaly (one found in the history it wrote is one all the same; the page
// says beside it that the run is incomplete).
func runStatus(verdict, incomplete string) status {
	switch {
	case incomplete != "" && verdict == NotAnalyzed:
		return status{"incomplete", "incomplete, " + NotAnalyzed}
	case incomplete != "" && verdict != string(analysis.Invalid):
		return status{"incomplete", "incomplete"}
	case verdict == NotAnalyzed:
		return status{"not-analyzed", verdict}
	}
	return status{verdict, verdict}
}

// expectation is how a verdict stands against its plan's expect field
// (met, from runfolder.Expected): "as expected" or "unexpected", saying
// what was expected; nil when the plan expects nothing.
func expectation(expect string, met *bool) *status {
	switch {
	case met == nil:
		return nil
	case *met:
		return &status{"as-expected", "as expected (" + expect + ")"}
	}
	return &status{"unexpected", "unexpected: expected " + expect}
}

// badgeTemplate draws a status as a badge; the report and the index parse
// their pages into clones of it.
var badgeTemplate = template.Must(template.New("badge").Funcs(funcs).Parse(
	`<span class="verdict {{.Class}}">{{.Text}}</span>`))
