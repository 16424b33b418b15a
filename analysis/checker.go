// Package analysis judges a finished history. Checkers read; they never
// change the history, and a checker that cannot decide says so (Unknown)
// rather than guessing.
//
// This package is the framework: the Checker interface and its registry,
// findings, results and their typed figures, running checkers on a
// history whole or in batches, and the stats checker that every run gets.
// The checkers proper come in families, each a package of its own that
// registers its checkers in init: analysis/linear, etcd, lock, set,
// stream, zkwatch, primaries and txn.
package analysis

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/registry"
)

// Verdict is a checker's judgement.
type Verdict string

const (
	Valid   Verdict = "valid"   // no anomaly found
	Invalid Verdict = "invalid" // at least one anomaly, with its proof
	Unknown Verdict = "unknown" // the checker could not decide
)

// rank orders verdicts for combining: one Invalid makes the run invalid.
func (v Verdict) rank() int {
	switch v {
	case Invalid:
		return 2
	case Unknown:
		return 1
	}
	return 0
}

// Worst combines verdicts: Invalid beats Unknown beats Valid.
func Worst(vs ...Verdict) Verdict {
	w := Valid
	for _, v := range vs {
		if v.rank() > w.rank() {
			w = v
		}
	}
	return w
}

// Finding is one anomaly and the entries that prove it.
type Finding struct {
	Kind string `json:"kind"`
	// Explanation says in one sentence what happened.
	Explanation string `json:"explanation"`
	// Ops are the history entries (by index) that prove the finding.
	Ops []history.Op `json:"ops"`
	// ResourceLines are lines of the resource log that prove it.
	ResourceLines []int `json:"resource_lines,omitempty"`
	// Cycle is the cycle of dependencies a transactional finding rests
	// on, for the report to draw; none for other findings.
	Cycle []CycleStep `json:"cycle,omitempty"`
}

// CycleStep is one transaction of a cycle and its dependency on the one
// before.
type CycleStep struct {
	// Name is how the explanation names it: T1, T2, ...
	Name string `json:"name"`
	// Op is the history index of its invocation.
	Op int `json:"op"`
	// Process ran it; Type is how it ended (ok, info, or invoke when it
	// never did).
	Process int          `json:"process"`
	Type    history.Type `json:"type"`
	// Txn is what it did, keys as JSON: `r "x" [1 2], append "y" 3`.
	Txn string `json:"txn"`
	// Next is the relation by which the next transaction (the first,
	// after the last) comes after this one: ww, wr, rw, process or
	// realtime.
	Next string `json:"next"`
}

// FindingsCap, above 0, bounds how many findings a Result lists (chaos run
// and check --max-findings), for a history where one kind floods; the
// counts, in all and by kind, stay exact. 0, the default: every finding
// is listed.
var FindingsCap = 0

// Listed says whether a result that lists n findings lists another.
func Listed(n int) bool { return FindingsCap <= 0 || n < FindingsCap }

// MaxOps bounds how many history entries one finding names.
const MaxOps = 20

// FindingList keeps the findings (the first FindingsCap, if set) and
// counts them, in all and by kind.
type FindingList struct {
	List  []Finding
	Total int
	Kinds map[string]int
}

// Add counts a finding and keeps it while the list has room. It is built
// either way: its kind is counted.
func (l *FindingList) Add(build func() Finding) {
	f := build()
	l.Total++
	if l.Kinds == nil {
		l.Kinds = map[string]int{}
	}
	l.Kinds[f.Kind]++
	if Listed(len(l.List)) {
		l.List = append(l.List, f)
	}
}

// Put sets r's findings, their total and their counts by kind from l.
func (l FindingList) Put(r *Result) {
	r.Findings, r.FindingsTotal, r.Kinds = l.List, l.Total, l.Kinds
}

// OpsAt lists the entries of h at the given positions, in history order and
// once each. It sorts pos.
func OpsAt(h []history.Op, pos []int) []history.Op {
	slices.Sort(pos)
	var ops []history.Op
	for _, i := range slices.Compact(pos) {
		ops = append(ops, h[i])
	}
	return ops
}

// Result is what one checker concluded.
type Result struct {
	Checker  string    `json:"checker"`
	Verdict  Verdict   `json:"verdict"`
	Findings []Finding `json:"findings,omitempty"`
	// FindingsTotal counts all findings, and Kinds counts them by kind;
	// Findings lists them all, or the first FindingsCap.
	FindingsTotal int            `json:"findings_total"`
	Kinds         map[string]int `json:"kinds,omitempty"`
	// Notes are facts a reader needs to weigh the verdict (e.g. "Redlock
	// gives no fencing token, so the fenced resource had nothing to check").
	Notes []string `json:"notes,omitempty"`
	// Stats are figures for people to read; Figures holds, typed, those
	// that tools (compare) read, stored under their kind (figures.go).
	Stats   map[string]any `json:"stats,omitempty"`
	Figures Figures        `json:"-"`
}

// Input is everything a checker may read about a run.
type Input struct {
	History  []history.Op
	Resource []history.ResourceEntry
	// ResourceMode is "fenced" or "unfenced", or "" when the run had no resource.
	ResourceMode string
	// Dir is where a checker may write artifacts (visualizations), or "".
	Dir string
	// Initial is the registers' value before the run, for the register
	// models (register, cas-register, kv, multi-register); nil means absent
	// (JSON null). Knossos histories often start from 0, and their files
	// do not say so.
	Initial json.RawMessage
	// NilReadsUnknown makes a read that returned JSON null mean "value
	// unknown" (always legal), as in Knossos, instead of "key absent".
	NilReadsUnknown bool
	// Progress, if set, hears how far a long analysis has come.
	Progress Progress
	// Changes are the kinds of operation (f) by which the run's workload
	// changes the system's state; a run that attempted none of them
	// tested nothing, whatever its reads saw. Nil when not known (a
	// history file checked alone).
	Changes []string
	// Config is the target's settings the run used (run.json's config:
	// what the system may do on its own, such as etcd's automatic
	// compaction); nil when not known (a history file checked alone).
	Config map[string]string
}

// Progress is told which checker runs, and how many of its parts (keys)
// are done of total (0 when it does not count them).
type Progress func(checker string, done, total int)

// TellProgress tells in.Progress, if set, which checker runs and how far
// it has come.
func (in Input) TellProgress(checker string, done, total int) {
	if in.Progress != nil {
		in.Progress(checker, done, total)
	}
}

// UnknownResult is the result of a check that could not decide, and why.
func UnknownResult(why string) Result {
	return Result{Verdict: Unknown, Notes: []string{why}}
}

// Checker judges a run.
type Checker interface {
	Name() string
	Check(ctx context.Context, in Input) Result
}

// Checkers is the registry of checkers, by name.
var Checkers = registry.New[Checker]("checker")

// Register makes a checker available by its name.
func Register(c Checker) { Checkers.Register(c.Name(), c) }

// Report is the analysis of a run: every checker's result and the verdict.
type Report struct {
	Verdict Verdict  `json:"verdict"`
	Results []Result `json:"results"`
	// Truncated is set when the history's last line was cut off.
	Truncated string        `json:"truncated,omitempty"`
	Ops       int           `json:"ops"`
	Took      time.Duration `json:"took_ns"`
}

// Run runs the checkers on in. A checker that panics is a bug in chaos,
// not in the system under test: its verdict becomes Unknown.
func Run(ctx context.Context, checkers []Checker, in Input) Report {
	start := time.Now()
	rep := Report{Verdict: Valid, Ops: len(in.History)}
	for _, c := range checkers {
		in.TellProgress(c.Name(), 0, 0)
		rep.Results = append(rep.Results, safeCheck(ctx, c, in))
	}
	for _, r := range rep.Results {
		rep.Verdict = Worst(rep.Verdict, r.Verdict)
	}
	rep.Took = time.Since(start)
	return rep
}

func safeCheck(ctx context.Context, c Checker, in Input) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			r = Result{Checker: c.Name(), Verdict: Unknown, Notes: []string{fmt.Sprintf("checker crashed: %v", p)}}
		}
	}()
	r = c.Check(ctx, in)
	r.Checker = c.Name()
	r.countKinds()
	return r
}

// FirstOfEachKind is the first n of each kind of fs, in their order, and
// how many it leaves out: what a reader is shown of a flood, whose whole
// list analysis.json keeps.
func FirstOfEachKind(fs []Finding, n int) (shown []Finding, hidden int) {
	seen := map[string]int{}
	for _, f := range fs {
		if seen[f.Kind] == n {
			hidden++
			continue
		}
		seen[f.Kind]++
		shown = append(shown, f)
	}
	return shown, hidden
}

// KindCounts lists r's findings counted by kind, the most frequent first:
// "stale-write ×20, mutual-exclusion ×14".
func (r Result) KindCounts() string {
	names := slices.SortedFunc(maps.Keys(r.Kinds), func(a, b string) int { return cmp.Or(r.Kinds[b]-r.Kinds[a], cmp.Compare(a, b)) })
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s ×%d", k, r.Kinds[k])
	}
	return strings.Join(parts, ", ")
}

// countKinds counts r's findings by kind when its checker did not: exact
// when it lists them all.
func (r *Result) countKinds() {
	if r.Kinds != nil || len(r.Findings) == 0 {
		return
	}
	r.Kinds = map[string]int{}
	for _, f := range r.Findings {
		r.Kinds[f.Kind]++
	}
}
