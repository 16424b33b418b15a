// The linearizability checkers: LinearChecker, the contract a sequential
// model fulfils for it (linModel, linSpec, linOp), and checkLinear, which
// turns porcupine's judgement of each key into a Result. The steps are
// beside it: linear_scan.go reads the history into porcupine's operations,
// porcupine.go runs porcupine, witness.go and visualize.go show why a key is
// illegal; the models are in models.go and model_*.go.
package analysis

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/history"
)

// DefaultLinearTimeLimit bounds one linearizability check whose checker
// sets no limit of its own. Checking is NP-hard: a check that never ends
// helps nobody, so running out of time gives Unknown, never a guess.
const DefaultLinearTimeLimit = 60 * time.Second

// LinearChecker checks that a history is linearizable with respect to a
// sequential model, with porcupine, one key at a time when the model
// partitions by key. The registered checkers are values of this type, so a
// caller can look one up and set its TimeLimit.
type LinearChecker struct {
	model *linModel
	// TimeLimit bounds one Check; zero means DefaultLinearTimeLimit.
	TimeLimit time.Duration
}

// Name is how plans refer to the checker: the model's name.
func (c LinearChecker) Name() string { return c.model.name }

// Check implements Checker.
func (c LinearChecker) Check(ctx context.Context, in Input) Result {
	return checkLinear(ctx, in, c.model, cmp.Or(c.TimeLimit, DefaultLinearTimeLimit))
}

// linModel is a sequential specification as the porcupine machinery needs
// it. Its porcupine model is made afresh for each check because the initial
// state and the encoding of values depend on the Input.
type linModel struct {
	name string
	// fs are the operations the model judges; entries of others are ignored.
	fs map[string]bool
	// keyed models are checked one key at a time; the others as a whole.
	keyed bool
	// what a key names, for explanations ("register", "lock").
	what    string
	prepare func(in Input) (*linSpec, error)
}

// linSpec is one check's view of a model.
type linSpec struct {
	// convert turns an operation into porcupine's terms. done is its ok
	// completion, or nil when its outcome is unknown (then the output must be
	// one the model accepts whatever the state).
	convert func(inv, done *history.Op) (linOp, error)
	// model must be deterministic, total on unknown outputs, and must not
	// panic: porcupine runs it in goroutines no recover can reach.
	model porcupine.Model
	// direct, if set, decides a history of one part without a search when
	// it can (decided false otherwise), giving its finding if illegal.
	direct func(h []history.Op, p *linPart) (f *Finding, decided bool)
}

// linOp is one operation in porcupine's terms, on the key it touches.
type linOp struct {
	key           string
	input, output any
	// drop marks an operation that constrains nothing, such as a read of
	// unknown result: it is left out of the check.
	drop bool
	// unseen marks a dropped write of unknown outcome that evidence
	// elsewhere in the history shows never took effect.
	unseen bool
	// returned, for an operation of unknown outcome whose effect evidence
	// elsewhere in the history shows (its output then known), is the
	// latest time it can have taken effect.
	returned time.Duration
}

// keyName is how explanations and notes name a key of m.
func keyName(m *linModel, key string) string {
	if !m.keyed {
		return "the history"
	}
	return fmt.Sprintf("%s %q", m.what, key)
}

// checkLinear runs the check: scan, porcupine on every key in parallel
// (largest first, so that one long key does not start last), then findings
// and visualizations for the illegal keys.
func checkLinear(parent context.Context, in Input, m *linModel, limit time.Duration) Result {
	start := time.Now()
	ctx, cancel := context.WithTimeout(parent, limit)
	defer cancel()
	spec, err := m.prepare(in)
	if err != nil {
		return unknownResult(err.Error())
	}
	// Every model's visualization shows the entries behind an operation.
	spec.model.DescribeOperationMetadata = describeRef(in.History)
	sc := scanLinear(in.History, m, spec)
	n := 0
	for _, p := range sc.parts {
		n += len(p.ops)
	}
	switch {
	case sc.bad.n > 0:
		return unknownResult(fmt.Sprintf(
			"%d operations could not be read as %s operations, so the history cannot be judged; first: %v", sc.bad.n, m.name, sc.bad.first))
	case n == 0:
		// As in Knossos: nothing took effect, and the empty order is a
		// linearization of that. (A run whose clients did nothing is not
		// a pass: the stats checker says so.)
		what := []string{"the history has no " + strings.Join(sortedKeys(m.fs), "/") + " operation"}
		if k := sc.counts["dropped_fail"] + sc.counts["dropped_unknown_reads"]; k > 0 {
			what = nil
			if k := sc.counts["dropped_fail"]; k > 0 {
				what = append(what, fmt.Sprintf("%d failed", k))
			}
			if k := sc.counts["dropped_unknown_reads"]; k > 0 {
				what = append(what, fmt.Sprintf("%d were reads of unknown value", k))
			}
		}
		if len(sc.other) > 0 {
			what = append(what, "the history has only "+describeCounts(sc.other)+" besides")
		}
		return Result{Verdict: Valid,
			Stats: map[string]any{"operations": 0, "dropped_fail": sc.counts["dropped_fail"], "dropped_unknown_reads": sc.counts["dropped_unknown_reads"]},
			Notes: []string{"no operation took effect: " + strings.Join(what, " and ") + "; a history where nothing happened is linearizable"}}
	}

	res := Result{Verdict: Valid, Stats: map[string]any{}}
	if spec.direct != nil && len(sc.parts) == 1 {
		if f, decided := spec.direct(in.History, sc.parts[0]); decided {
			res.Stats["decided_by"] = "revision order"
			if f != nil {
				res.Verdict, res.Findings, res.FindingsTotal = Invalid, []Finding{*f}, 1
			}
			linearStats(res, sc, n, 1, 0, start)
			return res
		}
	}
	results, late := runParts(ctx, spec.model, sc.parts, limit/30, func(done int) { in.progress(m.name, done, len(sc.parts)) })
	var illegal []int
	undecided := 0
	for i, r := range results {
		switch {
		case r.err != nil:
			undecided++
			res.Notes = append(res.Notes, fmt.Sprintf("porcupine failed on %s: %v", keyName(m, sc.parts[i].key), r.err))
		case r.res == porcupine.Illegal:
			illegal = append(illegal, i)
		case r.res != porcupine.Ok:
			undecided++
		}
	}

	faults := faultWindows(in.History)
	written := 0
	var found findingList
	for _, i := range illegal {
		p := sc.parts[i]
		file := ""
		if in.Dir != "" {
			var err error
			if file, err = visualize(in.Dir, m, spec.model, p.key, results[i].info, faults); err != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("visualization of %s not written: %v", keyName(m, p.key), err))
				file = ""
			} else {
				written++
			}
		}
		found.add(func() Finding { return witness(in.History, m, spec.model, p, results[i].info, file) })
	}
	res.Findings, res.FindingsTotal = found.list, found.total

	if undecided > 0 {
		why := fmt.Sprintf("the time limit of %s ran out", limit)
		switch {
		case parent.Err() != nil:
			why = "the check was cancelled"
		case late && ctx.Err() == nil:
			why = fmt.Sprintf("once the history was found invalid, each got at most %s more", limit/30)
		}
		what := fmt.Sprintf("%d of %d %ss were", undecided, len(sc.parts), m.what)
		if !m.keyed {
			what = "the history was"
		}
		res.Notes = append(res.Notes, fmt.Sprintf("%s not decided: %s (more time may decide; nothing is guessed)", what, why))
	}
	switch {
	case len(illegal) > 0:
		res.Verdict = Invalid
	case undecided > 0:
		res.Verdict = Unknown
	}
	if written > 0 {
		res.Notes = append(res.Notes, visualizationNote(m, in.Dir, written, len(faults)))
	}
	if k := sc.counts["unmatched_completions"] + sc.counts["mismatched_completions"] + sc.counts["superseded"]; k > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d entries broke the invoke-then-complete order of their process; their operations were treated as of unknown outcome", k))
	}

	linearStats(res, sc, n, len(illegal), undecided, start)
	return res
}

// linearStats fills res's figures of a check begun at start.
func linearStats(res Result, sc *linScan, n, illegal, undecided int, start time.Time) {
	res.Stats["operations"] = n
	res.Stats["keys"] = len(sc.parts)
	res.Stats["keys_illegal"] = illegal
	res.Stats["keys_undecided"] = undecided
	for _, k := range []string{"open", "patched", "dropped_fail", "dropped_unknown_reads", "dropped_unseen_writes", "superseded", "unmatched_completions", "mismatched_completions"} {
		res.Stats[k] = sc.counts[k]
	}
	if len(sc.other) > 0 {
		res.Stats["ignored"] = sc.other
	}
	res.Stats["check_s"] = time.Since(start).Seconds()
}
