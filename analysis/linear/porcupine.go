// Checking the parts of a history: in parallel, largest first, within the
// check's time limit, and cut short when the check is cancelled or, once
// some part is illegal, after a grace period.

package linear

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/anishathalye/porcupine"
)

// partResult is the judgement of one key.
type partResult struct {
	res porcupine.CheckResult
	// best is the longest partial linearization found (search).
	best []int
	// info is porcupine's, to draw an illegal key, when asked for and
	// porcupine found it illegal in time; nil otherwise.
	info *porcupine.LinearizationInfo
	err  error // the model crashed on this key
}

// runParts checks every part on GOMAXPROCS workers, largest first. Each
// porcupine call gets what is left of ctx's deadline, except that once one
// part is illegal the verdict is settled, and every part still running or
// yet to start gets at most grace more: enough for most further findings,
// while one intractable key cannot hold the report up to the time limit
// (porcupine alone stops at the first illegal partition). late reports that
// some part was cut short by the grace rather than by ctx. With draw,
// an illegal part gets porcupine's information to draw it. partDone hears
// how many parts are done as each one ends.
func runParts(ctx context.Context, model porcupine.Model, parts []*Part, grace time.Duration, draw bool, partDone func(int)) (results []partResult, late bool) {
	results = make([]partResult, len(parts))
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(parts[order[a]].Ops) > len(parts[order[b]].Ops) })
	r := &runner{model: model, grace: grace, draw: draw, running: map[int]func(){}}
	ctx, stopWatch := watchMemory(ctx)
	defer stopWatch()
	var next atomic.Int64
	// Counting and telling under one lock keeps the counts told in order:
	// progress that goes back reads as a bug to whoever watches it.
	var doneMu sync.Mutex
	done := 0
	work := func() {
		for {
			j := int(next.Add(1) - 1)
			if j >= len(order) {
				return
			}
			results[order[j]] = r.check(ctx, j, parts[order[j]])
			doneMu.Lock()
			done++
			partDone(done)
			doneMu.Unlock()
		}
	}
	// The calling goroutine is a worker too: a history of one key, as
	// files from elsewhere often are, is checked without a handoff.
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(parts)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return results, r.late.Load()
}

// runner shares among the workers whether some part was found illegal and
// how to cut short the parts in flight.
type runner struct {
	model   porcupine.Model
	grace   time.Duration
	draw    bool
	mu      sync.Mutex
	illegal bool
	running map[int]func() // cancels part j's check after the grace
	late    atomic.Bool
}

// check searches one part (search), and runs porcupine on it to draw it
// if it is illegal and r.draw asks for that.
func (r *runner) check(ctx context.Context, j int, p *Part) (res partResult) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var cut atomic.Bool
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
	ctx, cancelBudget := context.WithTimeout(ctx, budget)
	defer cancelBudget()
	res.res, res.best = search(ctx, r.model, p.Ops)
	if err := context.Cause(ctx); errors.Is(err, errMemory) {
		res.err = err
	}
	if res.res == porcupine.Illegal && r.draw {
		res.info = drawInfo(ctx, r.model, p)
	}
	return res
}

// drawInfo runs porcupine on a part found illegal, for the information
// its visualization needs, until ctx ends: nil if it did not say illegal
// by then. Porcupine takes a timeout but no context; to stop it early the
// model's steps all fail once ctx ends, which unwinds its search at once,
// and whatever it returns then is discarded.
func drawInfo(ctx context.Context, model porcupine.Model, p *Part) *porcupine.LinearizationInfo {
	budget := time.Until(deadline(ctx))
	if ctx.Err() != nil || budget <= 0 { // porcupine reads a timeout <= 0 as "none"
		return nil
	}
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	step := model.Step
	model.StepContext = func(_ context.Context, s, i, o any) (bool, any) {
		if stop.Load() {
			return false, s
		}
		return step(s, i, o)
	}
	out, info := porcupine.CheckOperationsVerbose(model, p.Ops, budget)
	if out != porcupine.Illegal || ctx.Err() != nil {
		return nil // possibly forced by the failing steps
	}
	return &info
}

func deadline(ctx context.Context) time.Time {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Now().Add(DefaultTimeLimit)
	}
	return d
}

// errMemory ends a search that holds so many states that the machine would
// run out of memory: the part is undecided, never guessed, and the run is
// not killed.
var errMemory = errors.New("the search held more states than half this machine's memory; a machine with more may decide")

// memoryCap is the heap past which searches stop: half the machine's
// memory.
var memoryCap = func() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 8 << 30
	}
	return uint64(si.Totalram) * uint64(si.Unit) / 2
}()

// watchMemory cancels ctx with errMemory once the heap passes memoryCap:
// every part's search then stops.
func watchMemory(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				metrics.Read(sample)
				if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > memoryCap {
					cancel(errMemory)
					return
				}
			}
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}
