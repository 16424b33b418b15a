package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/linear"
	"github.com/chaos-testing/chaos/analysis/txn"
	"github.com/chaos-testing/chaos/foreign/jepsen"
	"github.com/chaos-testing/chaos/foreign/porcupinelog"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/report"
	"github.com/chaos-testing/chaos/runfolder"
)

// FileCheck says how to judge a history file that chaos did not write.
type FileCheck struct {
	// Model judges a Jepsen EDN history: one of jepsen.Models.
	Model string
	// Txn is what Elle's checkers are told, for the list-append and
	// rw-register models.
	Txn txn.Options
	// Initial is the registers' value before the history (JSON); nil is absent.
	Initial json.RawMessage
	// Out is the folder for visualizations, and with Details for
	// analysis.json and the report too (what chaos check FILE writes);
	// none, the verdict alone.
	Out     string
	Details bool
}

// InputError is a history file that cannot be read: bad input, like a bad plan.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// CheckFile judges a Jepsen EDN history (.edn) or one of porcupine's test
// logs (etcd or kv, told apart by their content).
func CheckFile(ctx context.Context, path string, c FileCheck) (analysis.Report, error) {
	in, checker, err := readForeign(path, c.Model, c.Txn)
	if err != nil {
		return analysis.Report{}, InputError{err}
	}
	if c.Initial != nil {
		in.Initial = c.Initial
	}
	in.Dir = c.Out
	if in.Dir != "" { // else the verdict alone, nothing drawn
		if err := os.MkdirAll(in.Dir, 0o755); err != nil {
			return analysis.Report{}, err
		}
	}
	rep := analysis.Run(ctx, []analysis.Checker{checker}, in)
	noteReversals(&rep, history.FindReversals(in.History))
	if !c.Details {
		return rep, nil
	}
	// The verdict's details go where the command line says they are:
	// analysis.json and the report, beside the visualizations.
	if err := runfolder.Folder(c.Out).WriteAnalysis(runfolder.Analysis{Report: rep}); err != nil {
		return rep, err
	}
	return rep, report.Write(report.Run{Dir: c.Out, Plan: filepath.Base(path), Target: "history file", Workload: checker.Name(),
		Report: rep, History: in.History})
}

// noteReversals adds to every result a note on the entries whose times go
// backwards within their process, if there are any: found once, for all
// the checkers, whose verdicts all rest on those times. Where another
// client's entry is stamped between two such entries, a real-time order a
// checker used is wrong whichever stamp is: a valid verdict cannot be
// trusted and becomes unknown, and each finding that involves one of those
// processes says so. A finding is kept, not withdrawn: most rest on orders
// the reversal does not touch, and the reader can tell from its entries.
func noteReversals(rep *analysis.Report, r history.Reversals) {
	note := r.Note()
	if note == "" {
		return
	}
	doubtful := r.Doubtful()
	for i := range rep.Results {
		res := &rep.Results[i]
		res.Notes = append(res.Notes, note)
		if !r.Matter() {
			continue
		}
		for j := range res.Findings {
			f := &res.Findings[j]
			if p := slices.IndexFunc(f.Ops, func(op history.Op) bool { return slices.Contains(doubtful, op.Process) }); p >= 0 {
				f.Explanation += fmt.Sprintf(" (The times of %s go backwards in this history: a real-time order this finding uses may be wrong.)",
					history.ProcessName(f.Ops[p].Process))
			}
		}
	}
	if r.Matter() {
		rep.Verdict = analysis.Worst(rep.Verdict, analysis.Unknown)
	}
}

// readForeign reads a history from elsewhere, and says which checker
// judges it: the one a Jepsen history's model names (a checker's name),
// or the model of a porcupine log's kind.
func readForeign(path, model string, opts txn.Options) (analysis.Input, analysis.Checker, error) {
	if strings.HasSuffix(path, ".edn") {
		ops, err := jepsen.ReadFile(path, model)
		if err != nil {
			return analysis.Input{}, nil, err
		}
		c, ok := analysis.Checkers.Lookup(model)
		if !ok {
			return analysis.Input{}, nil, fmt.Errorf("%s: no checker of model %q", path, model)
		}
		if tc := txn.WithOptions(model, opts); tc != nil {
			c = tc
		}
		// Knossos's semantics: a nil read is an unknown value.
		return analysis.Input{History: ops, NilReadsUnknown: true}, c, nil
	}
	ops, format, err := porcupinelog.ReadFile(path)
	if err != nil {
		return analysis.Input{}, nil, fmt.Errorf("%s: not a chaos run folder, a Jepsen .edn history, or a porcupine log: %w", path, err)
	}
	if format == porcupinelog.KV {
		return analysis.Input{History: ops}, linear.KV, nil
	}
	// Porcupine's etcd logs: a nil read means the key was absent.
	return analysis.Input{History: ops}, linear.CASRegister, nil
}
