package analysis

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
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
	// convert turns an operation into porcupine's input and output. done is
	// its ok completion, or nil when its outcome is unknown (then the output
	// must be one the model accepts whatever the state). drop marks an
	// operation that constrains nothing, such as a read of unknown result.
	convert func(inv, done *history.Op) (key string, input, output any, drop bool, err error)
	// model must be deterministic, total on unknown outputs, and must not
	// panic: porcupine runs it in goroutines no recover can reach.
	model porcupine.Model
}

// opRef ties a porcupine operation to its entries (positions in the
// history): done is its completion, or -1 if it never completed.
type opRef struct{ inv, done int }

// linPart is the operations of one key, in porcupine's form.
type linPart struct {
	key  string
	ops  []porcupine.Operation
	refs []opRef
}

// linScan is what one pass over the history gives the check.
type linScan struct {
	parts  []*linPart
	counts map[string]int
	other  map[string]int // entries of operations the model ignores, by f
	bad    int
	first  error
}

// scanLinear pairs each process's invocations with their completions in file
// order, which is the process's own order. A fail never happened and is
// dropped; an info, or an invocation never completed, may or may not have
// happened: it gets Return = MaxInt64 and an unknown output, so porcupine may
// order it anywhere after its call, last included (as good as never).
func scanLinear(ops []history.Op, m *linModel, spec *linSpec) *linScan {
	sc := &linScan{counts: map[string]int{}, other: map[string]int{}}
	byKey := map[string]*linPart{}
	add := func(inv, done int, open bool) {
		op := &ops[inv]
		if !m.fs[op.F] {
			sc.other[op.F]++
			return
		}
		var d *history.Op
		if !open {
			d = &ops[done]
		}
		key, input, output, drop, err := spec.convert(op, d)
		switch {
		case err != nil:
			if sc.bad == 0 {
				sc.first = err
			}
			sc.bad++
			return
		case drop:
			sc.counts["dropped_unknown_reads"]++
			return
		}
		if !m.keyed {
			key = ""
		}
		p := byKey[key]
		if p == nil {
			p = &linPart{key: key}
			byKey[key] = p
		}
		ret := int64(math.MaxInt64)
		if open {
			sc.counts["open"]++
		} else {
			ret = int64(max(d.Time, op.Time)) // a clock never runs backwards within one op
		}
		p.ops = append(p.ops, porcupine.Operation{ClientId: op.Process, Input: input, Output: output, Call: int64(op.Time), Return: ret})
		p.refs = append(p.refs, opRef{inv, done})
	}

	pending := map[int]int{} // process -> position of its invocation in flight
	for i := range ops {
		op := &ops[i]
		if op.Process == history.Nemesis {
			continue
		}
		p, inFlight := pending[op.Process]
		if op.Type == history.Invoke {
			if inFlight { // a process has one op in flight: the earlier one never completed
				sc.counts["superseded"]++
				add(p, -1, true)
			}
			pending[op.Process] = i
			continue
		}
		if !inFlight {
			if m.fs[op.F] {
				sc.counts["unmatched_completions"]++
			}
			continue
		}
		delete(pending, op.Process)
		switch {
		case ops[p].F != op.F:
			sc.counts["mismatched_completions"]++
			add(p, i, true)
		case op.Type == history.Ok:
			add(p, i, false)
		case op.Type == history.Info:
			add(p, i, true)
		case !m.fs[op.F]:
			sc.other[op.F]++
		default: // fail: it never happened
			sc.counts["dropped_fail"]++
		}
	}
	rest := make([]int, 0, len(pending))
	for _, p := range pending {
		rest = append(rest, p)
	}
	slices.Sort(rest)
	for _, p := range rest {
		add(p, -1, true)
	}

	for _, p := range byKey {
		for j := range p.ops {
			p.ops[j].Metadata = &p.refs[j] // a pointer: no allocation per op
		}
		sc.parts = append(sc.parts, p)
	}
	slices.SortFunc(sc.parts, func(a, b *linPart) int { return strings.Compare(a.key, b.key) })
	return sc
}

// partResult is porcupine's judgement of one key.
type partResult struct {
	res  porcupine.CheckResult
	info porcupine.LinearizationInfo
	err  error // porcupine crashed on this key
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
		return Result{Verdict: Unknown, Notes: []string{err.Error()}}
	}
	sc := scanLinear(in.History, m, spec)
	res := Result{Verdict: Valid, Stats: map[string]any{}}
	n := 0
	for _, p := range sc.parts {
		n += len(p.ops)
	}
	switch {
	case sc.bad > 0:
		return Result{Verdict: Unknown, Notes: []string{fmt.Sprintf(
			"%d operations could not be read as %s operations, so the history cannot be judged; first: %v", sc.bad, m.name, sc.first)}}
	case n == 0:
		note := "no " + strings.Join(sortedKeys(m.fs), "/") + " operation to check"
		if len(sc.other) > 0 {
			note += "; the history has only " + describeCounts(sc.other)
		}
		return Result{Verdict: Unknown, Notes: []string{note}, Stats: map[string]any{"operations": 0}}
	}

	results, late := runParts(ctx, spec.model, sc.parts, limit/30)

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
		if len(res.Findings) < maxFindings {
			res.Findings = append(res.Findings, witness(in.History, m, spec.model, p, results[i].info, file))
		}
	}
	res.FindingsTotal = len(illegal)
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
		what := fmt.Sprintf("%d illegal %ss written to %s as linearizability-<key>.html", written, m.what, in.Dir)
		if !m.keyed {
			what = fmt.Sprintf("the history written to %s as linearizability-%s.html", in.Dir, m.name)
		}
		ann := fmt.Sprintf(", with the %d nemesis fault windows as annotations", len(faults))
		if len(faults) == 0 {
			ann = " (the history has no nemesis fault windows to annotate)"
		}
		res.Notes = append(res.Notes, "porcupine's visualization of "+what+ann)
	}
	if k := sc.counts["unmatched_completions"] + sc.counts["mismatched_completions"] + sc.counts["superseded"]; k > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d entries broke the invoke-then-complete order of their process; their operations were treated as of unknown outcome", k))
	}

	res.Stats["operations"] = n
	res.Stats["keys"] = len(sc.parts)
	res.Stats["keys_illegal"] = len(illegal)
	res.Stats["keys_undecided"] = undecided
	for _, k := range []string{"open", "dropped_fail", "dropped_unknown_reads", "superseded", "unmatched_completions", "mismatched_completions"} {
		res.Stats[k] = sc.counts[k]
	}
	if len(sc.other) > 0 {
		res.Stats["ignored"] = sc.other
	}
	res.Stats["check_s"] = time.Since(start).Seconds()
	return res
}

// runParts checks every part on GOMAXPROCS workers, largest first. Each
// porcupine call gets what is left of ctx's deadline, except that once one
// part is illegal the verdict is settled, and every part still running or
// yet to start gets at most grace more: enough for most further findings,
// while one intractable key cannot hold the report up to the time limit
// (porcupine alone stops at the first illegal partition). late reports that
// some part was cut short by the grace rather than by ctx.
func runParts(ctx context.Context, model porcupine.Model, parts []*linPart, grace time.Duration) (results []partResult, late bool) {
	results = make([]partResult, len(parts))
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(parts[order[a]].ops) > len(parts[order[b]].ops) })
	r := &runner{model: model, grace: grace, running: map[int]func(){}}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(parts)) {
		wg.Go(func() {
			for {
				j := int(next.Add(1) - 1)
				if j >= len(order) {
					return
				}
				results[order[j]] = r.check(ctx, j, parts[order[j]])
			}
		})
	}
	wg.Wait()
	return results, r.late.Load()
}

// runner shares among the workers whether some part was found illegal and
// how to cut short the parts in flight.
type runner struct {
	model   porcupine.Model
	grace   time.Duration
	mu      sync.Mutex
	illegal bool
	running map[int]func() // cancels part j's check after the grace
	late    atomic.Bool
}

// check runs porcupine on one part. Porcupine takes a timeout but no
// context; to stop it early the model's steps all fail once the part's
// context ends, which unwinds its search at once, and whatever it returns
// then is discarded as Unknown.
func (r *runner) check(ctx context.Context, j int, p *linPart) (res partResult) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stop, cut atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	r.mu.Lock()
	budget := time.Until(deadline(ctx))
	capped := r.illegal && r.grace < budget
	if capped {
		budget = r.grace
	}
	r.running[j] = func() { cut.Store(true); cancel() }
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.running, j)
		if res.res == porcupine.Illegal && !r.illegal {
			r.illegal = true
			for _, c := range r.running {
				time.AfterFunc(r.grace, c)
			}
		}
		r.mu.Unlock()
		if (cut.Load() || capped) && res.res == porcupine.Unknown {
			r.late.Store(true)
		}
	}()
	defer func() {
		if e := recover(); e != nil {
			res = partResult{res: porcupine.Unknown, err: fmt.Errorf("%v", e)}
		}
	}()
	if ctx.Err() != nil || budget <= 0 { // porcupine reads a timeout <= 0 as "none"
		return partResult{res: porcupine.Unknown}
	}
	model := r.model
	step := model.Step
	model.StepContext = func(_ context.Context, s, i, o any) (bool, any) {
		if stop.Load() {
			return false, s
		}
		return step(s, i, o)
	}
	out, info := porcupine.CheckOperationsVerbose(model, p.ops, budget)
	if out != porcupine.Ok && ctx.Err() != nil {
		out = porcupine.Unknown // possibly forced by the failing steps: not a verdict
	}
	return partResult{res: out, info: info}
}

func deadline(ctx context.Context) time.Time {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Now().Add(DefaultLinearTimeLimit)
	}
	return d
}

// witness explains why a key is illegal from porcupine's longest partial
// linearization P: after P the model is in some state, and none of the
// operations that must come next (those invoked before the earliest
// completion among the rest) extends P any further. Those operations, the
// one whose completion forces the order first, and P's last operation are
// the proof; their entries are listed, at most maxFindings of them.
func witness(h []history.Op, m *linModel, model porcupine.Model, p *linPart, info porcupine.LinearizationInfo, file string) Finding {
	var best []int
	if pl := info.PartialLinearizations(); len(pl) > 0 {
		for _, l := range pl[0] {
			if len(l) > len(best) {
				best = l
			}
		}
	}
	state := model.Init()
	in := make([]bool, len(p.ops))
	for _, id := range best {
		_, state = model.Step(state, p.ops[id].Input, p.ops[id].Output)
		in[id] = true
	}
	first := int64(math.MaxInt64)
	for id, o := range p.ops {
		if !in[id] {
			first = min(first, o.Return)
		}
	}
	var next []int
	for id, o := range p.ops {
		if !in[id] && o.Call <= first {
			next = append(next, id)
		}
	}
	// The operation completing first leads (it forces the order); the others
	// follow by invocation.
	slices.SortStableFunc(next, func(a, b int) int { return cmp.Compare(p.ops[a].Call, p.ops[b].Call) })
	if lead := slices.IndexFunc(next, func(id int) bool { return p.ops[id].Return == first }); lead > 0 {
		id := next[lead]
		copy(next[1:lead+1], next[:lead])
		next[0] = id
	}
	describe := func(id int) string {
		o := p.ops[id]
		return fmt.Sprintf("#%d %s %s", h[p.refs[id].inv].Index, history.ProcessName(o.ClientId), model.DescribeOperation(o.Input, o.Output))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%s is not linearizable: ", capitalize(keyName(m, p.key)))
	when := "next"
	if len(best) == 0 {
		fmt.Fprintf(&b, "in its initial state %s, ", model.DescribeState(state))
		when = "first"
	} else {
		fmt.Fprintf(&b, "at most %d of its %d operations can be ordered consistently with real time and the %s model, ending in state %s after %s; ",
			len(best), len(p.ops), m.name, model.DescribeState(state), describe(best[len(best)-1]))
	}
	fits := false // does some candidate fit the state, only to lead nowhere later?
	var list []string
	for i, id := range next {
		if ok, _ := model.Step(state, p.ops[id].Input, p.ops[id].Output); ok {
			fits = true
		}
		if i < 3 {
			list = append(list, describe(id))
		}
	}
	if len(next) > 3 {
		list = append(list, fmt.Sprintf("%d more", len(next)-3))
	}
	switch {
	case len(next) == 1 && fits:
		fmt.Fprintf(&b, "the one operation that can come %s, %s, leads to no full order", when, list[0])
	case len(next) == 1:
		fmt.Fprintf(&b, "the one operation that can come %s, %s, does not fit that state", when, list[0])
	case fits:
		fmt.Fprintf(&b, "none of the %d operations that can come %s (%s) leads to a full order", len(next), when, strings.Join(list, ", "))
	default:
		fmt.Fprintf(&b, "none of the %d operations that can come %s (%s) fits that state", len(next), when, strings.Join(list, ", "))
	}
	if file != "" {
		fmt.Fprintf(&b, "; see %s", file)
	}
	b.WriteString(".")

	pick := slices.Clone(next)
	if len(best) > 0 {
		pick = append(pick, best[len(best)-1])
	}
	var pos []int
	for _, id := range pick {
		r := p.refs[id]
		if len(pos)+2 > maxFindings && len(pos) > 0 {
			break
		}
		pos = append(pos, r.inv)
		if r.done >= 0 {
			pos = append(pos, r.done)
		}
	}
	slices.Sort(pos)
	f := Finding{Kind: "nonlinearizable", Explanation: b.String()}
	for _, i := range slices.Compact(pos) {
		f.Ops = append(f.Ops, h[i])
	}
	return f
}

// visualize writes porcupine's HTML view of one illegal key to dir, with the
// nemesis's fault windows drawn as annotations, and returns the file name.
func visualize(dir string, m *linModel, model porcupine.Model, key string, info porcupine.LinearizationInfo, faults []porcupine.Annotation) (name string, err error) {
	defer func() {
		if e := recover(); e != nil {
			err = fmt.Errorf("porcupine crashed: %v", e)
		}
	}()
	name = "linearizability-" + fileKey(m, key) + ".html"
	info.AddAnnotations(faults)
	return name, porcupine.VisualizePath(model, info, filepath.Join(dir, name))
}

// fileKey makes a key safe as part of a file name. A key that had to be
// changed gets a hash of the original, so two keys never share a file.
func fileKey(m *linModel, key string) string {
	if !m.keyed {
		return m.name
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

// faultWindows reads the nemesis's entries (process -1, "<kind>-start" and
// "<kind>-end", value the victims' names) as annotations: a fault may act from
// its start's invocation until its end's completion, or until the history
// ends when it was never healed.
func faultWindows(ops []history.Op) []porcupine.Annotation {
	type window struct {
		kind         string
		victims      []string
		start, end   time.Duration
		from, to     int // history indices; to = -1 while open
		ended, named bool
	}
	var ws []*window
	var last time.Duration
	open := func(kind string, pick func(*window) bool) *window {
		for _, w := range ws {
			if w.kind == kind && w.to < 0 && pick(w) {
				return w
			}
		}
		return nil
	}
	for i := range ops {
		op := &ops[i]
		last = max(last, op.Time)
		if op.Process != history.Nemesis {
			continue
		}
		var victims []string
		if len(op.Value) > 0 {
			_ = json.Unmarshal(op.Value, &victims) // unreadable victims: the window still counts
		}
		if kind, ok := strings.CutSuffix(op.F, "-start"); ok {
			if op.Type == history.Invoke {
				ws = append(ws, &window{kind: kind, start: op.Time, from: op.Index, to: -1})
			} else if w := open(kind, func(w *window) bool { return !w.named }); w != nil {
				w.victims, w.named = victims, true
			}
			continue
		}
		kind, ok := strings.CutSuffix(op.F, "-end")
		if !ok {
			continue
		}
		if op.Type == history.Invoke {
			w := open(kind, func(w *window) bool { return !w.ended && slices.Equal(w.victims, victims) })
			if w == nil {
				w = open(kind, func(w *window) bool { return !w.ended })
			}
			if w != nil {
				w.ended = true
			}
			continue
		}
		if w := open(kind, func(w *window) bool { return w.ended }); w != nil {
			w.end, w.to = op.Time, op.Index
		}
	}
	colors := map[string]string{"partition": "#fde2e4", "pause": "#fff1c1", "kill": "#e2e8fd", "clock": "#e3f8e0"}
	out := make([]porcupine.Annotation, 0, len(ws))
	for _, w := range ws {
		details := fmt.Sprintf("from #%d at %s", w.from, secs(w.start))
		if w.to < 0 {
			w.end = last
			details += ", never healed"
		} else {
			details += fmt.Sprintf(" to #%d at %s", w.to, secs(w.end))
		}
		out = append(out, porcupine.Annotation{
			Tag:             "nemesis " + w.kind,
			Start:           int64(w.start),
			End:             int64(w.end),
			Description:     strings.TrimSpace(w.kind + " " + strings.Join(w.victims, " ")),
			Details:         details,
			BackgroundColor: cmp.Or(colors[w.kind], "#eeeeee"),
		})
	}
	return out
}

func keyName(m *linModel, key string) string {
	if !m.keyed {
		return "the history"
	}
	return fmt.Sprintf("%s %q", m.what, key)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func describeCounts(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
