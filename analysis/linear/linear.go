// Package linear holds the linearizability checkers: Checker, the contract
// a sequential model fulfils for it (Model, Spec, Op), and checkLinear,
// which turns porcupine's judgement of each key into a Result. The steps
// are beside it: scan.go reads the history into porcupine's operations,
// porcupine.go runs porcupine, witness.go and visualize.go show why a key
// is illegal; the models are in models.go and model_*.go. A family whose
// model is its own (analysis/etcd) builds it on Model and registers a
// Checker of it.
package linear

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// DefaultTimeLimit bounds one linearizability check whose checker
// sets no limit of its own. Checking is NP-hard: a check that never ends
// helps nobody, so running out of time gives Unknown, never a guess.
const DefaultTimeLimit = 60 * time.Second

// Checker checks that a history is linearizable with respect to a
// sequential model, with porcupine, one key at a time when the model
// partitions by key. The registered checkers are values of this type, so a
// caller can look one up and set its TimeLimit.
type Checker struct {
	// Model is the sequential specification it checks against.
	Model *Model
	// TimeLimit bounds one Check, or each batch of a check given in
	// batches (a long history's time grows with its length); zero means
	// DefaultTimeLimit.
	TimeLimit time.Duration
}

// Name is how plans refer to the checker: the model's name.
func (c Checker) Name() string { return c.Model.Name }

// Check implements analysis.Checker.
func (c Checker) Check(ctx context.Context, in analysis.Input) analysis.Result {
	lc := c.begin(ctx, in)
	lc.add(in.History)
	return lc.result()
}

// Parts implements analysis.BatchChecker: a keyed model's keys are independent.
func (c Checker) Parts() history.PartOf {
	m := c.Model
	if !m.keyed {
		return nil
	}
	return func(inv *history.Op) string {
		if !m.Fs[inv.F] {
			return ""
		}
		return m.keyOf(inv)
	}
}

// Begin implements analysis.BatchChecker.
func (c Checker) Begin(ctx context.Context, in analysis.Input) analysis.Batches {
	return c.begin(ctx, in)
}

// Model is a sequential specification as the porcupine machinery needs
// it. Its porcupine model is made afresh for each check because the initial
// state and the encoding of values depend on the Input.
type Model struct {
	// Name is the name of the model's checker, by which plans refer to it.
	Name string
	// Fs are the operations the model judges; entries of others are ignored.
	Fs map[string]bool
	// keyed models are checked one key at a time; the others as a whole.
	keyed bool
	// What a key names, for explanations ("register", "lock").
	What string
	// keyOf, for a keyed model, reads the key of an invocation it judges
	// as Convert does.
	keyOf func(inv *history.Op) string
	// Prepare makes a check's view of the model for the run in.
	Prepare func(in analysis.Input) (*Spec, error)
}

// Spec is one check's view of a model.
type Spec struct {
	// Convert turns an operation into porcupine's terms. done is its ok
	// completion, or nil when its outcome is unknown (then the output must be
	// one the model accepts whatever the state).
	Convert func(inv, done *history.Op) (Op, error)
	// Model must be deterministic, total on unknown outputs, and must not
	// panic: porcupine runs it in goroutines no recover can reach.
	Model porcupine.Model
	// Direct, if set, decides a history of one part without a search when
	// it can (decided false otherwise), giving its finding if illegal.
	Direct func(h []history.Op, p *Part) (f *analysis.Finding, decided bool)
	// Implicit are invocations by history.Server, of unknown outcome, that
	// the system may carry out on its own (a lease expiring), checked with
	// the history's. Their Index follows the history's last.
	Implicit []history.Op
}

// Op is one operation in porcupine's terms, on the key it touches.
type Op struct {
	key string
	// Input and Output are what porcupine hands the model's functions.
	Input, Output any
	// Drop marks an operation that constrains nothing, such as a read of
	// unknown result: it is left out of the check.
	Drop bool
	// Unseen marks a dropped write of unknown outcome that evidence
	// elsewhere in the history shows never took effect.
	Unseen bool
	// Returned, for an operation of unknown outcome whose effect evidence
	// elsewhere in the history shows (its output then known), is the
	// latest time it can have taken effect.
	Returned time.Duration
}

// keyName is how explanations and notes name a key of m.
func keyName(m *Model, key string) string {
	if !m.keyed {
		return "the history"
	}
	return fmt.Sprintf("%s %q", m.What, key)
}

// linearCheck is one check of a history given in batches of whole keys
// (the whole history at once, when it fits in memory): for each batch,
// scan, porcupine on every key in parallel (largest first, so that one
// long key does not start last), then findings and visualizations for
// the illegal keys; the verdict, notes and figures once all are in.
type linearCheck struct {
	in              analysis.Input
	m               *Model
	limit           time.Duration
	start           time.Time
	parent          context.Context
	batches         int
	timedOut        bool // a batch ran out of time
	faults          []porcupine.Annotation
	failed          error // the model could not be prepared
	sc              Scan
	keys, n         int
	illegal         int
	undecided, late int
	written         int
	decidedBy       string
	found           analysis.FindingList
	notes           []string
}

// begin starts a check of the run in; its History must hold the
// nemesis's entries, at least, for the visualizations' fault windows.
func (c Checker) begin(parent context.Context, in analysis.Input) *linearCheck {
	return &linearCheck{in: in, m: c.Model, limit: cmp.Or(c.TimeLimit, DefaultTimeLimit), start: time.Now(),
		parent: parent, faults: faultWindows(in.History),
		sc: Scan{counts: map[string]int{}, other: map[string]int{}}}
}

// Add implements analysis.Batches.
func (lc *linearCheck) Add(batch []history.Op) { lc.add(batch) }

func (lc *linearCheck) add(batch []history.Op) {
	m := lc.m
	in := lc.in
	in.History = batch
	spec, err := m.Prepare(in)
	if err != nil {
		lc.failed = err
	}
	if lc.failed != nil {
		return
	}
	batch = slices.Concat(batch, spec.Implicit)
	// Every model's visualization shows the entries behind an operation.
	spec.Model.DescribeOperationMetadata = describeRef(batch)
	sc := ScanHistory(batch, m, spec)
	lc.sc.merge(sc)
	lc.keys += len(sc.Parts)
	for _, p := range sc.Parts {
		lc.n += len(p.Ops)
	}
	if lc.sc.Bad.N > 0 || len(sc.Parts) == 0 {
		return // a history that cannot be read is not judged
	}
	if spec.Direct != nil && len(sc.Parts) == 1 {
		if f, decided := spec.Direct(batch, sc.Parts[0]); decided {
			lc.decidedBy = "revision order"
			if f != nil {
				lc.illegal++
				if file := lc.visualizeDirect(spec, sc.Parts[0]); file != "" {
					f.Explanation += "; see " + file
				}
				lc.found.Add(func() analysis.Finding { return *f })
			}
			return
		}
	}
	keysBefore := lc.keys - len(sc.Parts)
	ctx, cancel := context.WithTimeout(lc.parent, lc.limit)
	defer cancel()
	lc.batches++
	results, late := runParts(ctx, spec.Model, sc.Parts, lc.limit/30, in.Dir != "", func(done int) { in.TellProgress(m.Name, keysBefore+done, lc.keys) })
	if late {
		lc.late++
	}
	lc.timedOut = lc.timedOut || ctx.Err() != nil
	fails := &failures{h: batch, m: m, spec: spec, refs: sc.failed}
	// explainEnd ends the time the witnesses of this batch's illegal keys
	// have, in all, to look for a failure that took effect: a thirtieth of
	// the limit from the first illegal key, as for the keys still running.
	var explainEnd time.Time
	for i, r := range results {
		p := sc.Parts[i]
		switch {
		case r.err != nil:
			lc.undecided++
			lc.notes = append(lc.notes, fmt.Sprintf("porcupine failed on %s: %v", keyName(m, p.key), r.err))
		case r.res == porcupine.Illegal:
			lc.illegal++
			file := ""
			if in.Dir != "" {
				file = lc.draw(spec, p, r.info)
			}
			if explainEnd.IsZero() {
				explainEnd = time.Now().Add(lc.limit / 30)
			}
			also := func(horizon int64) (string, []int) {
				ctx, cancel := context.WithDeadline(lc.parent, explainEnd)
				defer cancel()
				return fails.tookEffect(ctx, p, horizon)
			}
			lc.found.Add(func() analysis.Finding { return witness(batch, m, spec.Model, p, r.best, file, also) })
		case r.res != porcupine.Ok:
			lc.undecided++
		}
	}
}

// Result implements analysis.Batches.
func (lc *linearCheck) Result() analysis.Result { return lc.result() }

func (lc *linearCheck) result() analysis.Result {
	m, sc := lc.m, &lc.sc
	switch {
	case lc.failed != nil:
		return analysis.UnknownResult(lc.failed.Error())
	case sc.Bad.N > 0:
		return analysis.UnknownResult(fmt.Sprintf(
			"%d operations could not be read as %s operations, so the history cannot be judged; first: %v", sc.Bad.N, m.Name, sc.Bad.First))
	case lc.n == 0:
		// As in Knossos: nothing took effect, and the empty order is a
		// linearization of that. (A run whose clients did nothing is not
		// a pass: the stats checker says so.)
		what := []string{"the history has no " + strings.Join(analysis.SortedKeys(m.Fs), "/") + " operation"}
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
			what = append(what, "the history has only "+analysis.DescribeCounts(sc.other)+" besides")
		}
		return analysis.Result{Verdict: analysis.Valid,
			Stats: map[string]any{"operations": 0, "dropped_fail": sc.counts["dropped_fail"], "dropped_unknown_reads": sc.counts["dropped_unknown_reads"]},
			Notes: []string{"no operation took effect: " + strings.Join(what, " and ") + "; a history where nothing happened is linearizable"}}
	}

	res := analysis.Result{Verdict: analysis.Valid, Stats: map[string]any{}, Notes: lc.notes}
	lc.found.Put(&res)
	if lc.decidedBy != "" {
		res.Stats["decided_by"] = lc.decidedBy
	}
	if lc.undecided > 0 {
		why := fmt.Sprintf("the time limit of %s ran out", lc.limit)
		if lc.batches > 1 {
			why = fmt.Sprintf("the time limit of %s a batch of keys ran out", lc.limit)
		}
		switch {
		case lc.parent.Err() != nil:
			why = "the check was cancelled"
		case lc.late > 0 && !lc.timedOut:
			why = fmt.Sprintf("once the history was found invalid, each got at most %s more", lc.limit/30)
		}
		what := fmt.Sprintf("%d of %d %ss were", lc.undecided, lc.keys, m.What)
		if !m.keyed {
			what = "the history was"
		}
		res.Notes = append(res.Notes, fmt.Sprintf("%s not decided: %s (more time may decide; nothing is guessed)", what, why))
	}
	switch {
	case lc.illegal > 0:
		res.Verdict = analysis.Invalid
	case lc.undecided > 0:
		res.Verdict = analysis.Unknown
	}
	if lc.written > 0 {
		res.Notes = append(res.Notes, visualizationNote(m, lc.in.Dir, lc.written, len(lc.faults)))
	}
	if k := sc.counts["unmatched_completions"] + sc.counts["mismatched_completions"] + sc.counts["superseded"]; k > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d entries broke the invoke-then-complete order of their process; their operations were treated as of unknown outcome", k))
	}

	lc.stats(res)
	return res
}

// stats fills res's figures.
func (lc *linearCheck) stats(res analysis.Result) {
	sc := &lc.sc
	res.Stats["operations"] = lc.n
	res.Stats["keys"] = lc.keys
	res.Stats["keys_illegal"] = lc.illegal
	res.Stats["keys_undecided"] = lc.undecided
	for _, k := range []string{"open", "patched", "dropped_fail", "dropped_unknown_reads", "dropped_unseen_writes", "superseded", "unmatched_completions", "mismatched_completions"} {
		res.Stats[k] = sc.counts[k]
	}
	if len(sc.other) > 0 {
		res.Stats["ignored"] = sc.other
	}
	res.Stats["check_s"] = time.Since(lc.start).Seconds()
}

// visualizeDirect writes porcupine's view of a part that the revision
// order found illegal, so that a finding decided without porcupine can
// be read in its interactive view as any other: the part is searched for
// at most a thirtieth of the check's limit (the revision order exists
// because its search may not end), and drawn if found illegal. It returns
// the file's name, or "".
func (lc *linearCheck) visualizeDirect(spec *Spec, p *Part) string {
	if lc.in.Dir == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(lc.parent, lc.limit/30)
	defer cancel()
	results, _ := runParts(ctx, spec.Model, []*Part{p}, 0, true, func(int) {})
	if r := results[0]; r.err == nil && r.res == porcupine.Illegal {
		return lc.draw(spec, p, r.info)
	}
	return ""
}

// draw writes the visualization of illegal part p from porcupine's
// information, or says in a note why it could not, and returns the file's
// name, or "".
func (lc *linearCheck) draw(spec *Spec, p *Part, info *porcupine.LinearizationInfo) string {
	if info == nil {
		lc.notes = append(lc.notes, fmt.Sprintf("visualization of %s not written: porcupine did not find it illegal in the time left", keyName(lc.m, p.key)))
		return ""
	}
	file, err := visualize(lc.in.Dir, lc.m, spec.Model, p.key, *info, lc.faults)
	if err != nil {
		lc.notes = append(lc.notes, fmt.Sprintf("visualization of %s not written: %v", keyName(lc.m, p.key), err))
		return ""
	}
	lc.written++
	return file
}
