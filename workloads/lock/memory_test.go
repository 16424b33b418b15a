package lock

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	lockchecker "github.com/chaos-testing/chaos/analysis/lock"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/resource"
	"github.com/chaos-testing/chaos/workloads"
)

// memLock is an in-memory lock service shared by a test's clients, each
// grant with the next token; broken, it grants the lock to anyone.
type memLock struct {
	mu     sync.Mutex
	free   *sync.Cond
	held   bool
	token  int64
	broken bool
}

func newMemLock(broken bool) *memLock {
	l := &memLock{broken: broken}
	l.free = sync.NewCond(&l.mu)
	return l
}

func (l *memLock) Acquire(ctx context.Context) (Held, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { l.mu.Lock(); l.free.Broadcast(); l.mu.Unlock() })
	defer stop()
	for l.held && !l.broken {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotAcquired, ctx.Err())
		}
		l.free.Wait()
	}
	l.held = true
	l.token++
	return &memHeld{l: l, token: l.token}, nil
}

type memHeld struct {
	l     *memLock
	token int64
}

func (h *memHeld) Token() *int64 { return &h.token }

func (h *memHeld) Release(context.Context) error {
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	h.l.held = false
	h.l.free.Broadcast()
	return nil
}

// memLocks are the locks of the runs on memory under way, by their
// history file: RunClient finds the workload by name, registered once,
// and each run has a lock of its own.
var memLocks sync.Map // history path → *memLock

// onMemory is the lock workload on the lock of the run whose history its
// client appends to.
var onMemory = Workload{Backend: workloads.Backend{TargetKind: "memory"}, NewLocker: func(_ context.Context, c Client) (Locker, error) {
	l, ok := memLocks.Load(c.History)
	if !ok {
		return nil, fmt.Errorf("no lock for history %s", c.History)
	}
	return l.(*memLock), nil
}}

func init() { workloads.Register[Params]("memory-lock", onMemory) }

// runLockOnMemory runs three lock clients against l, writing to a fenced
// resource, for d, and judges their history and the resource's log with
// the lock checker.
func runLockOnMemory(t *testing.T, l *memLock, d time.Duration) analysis.Result {
	t.Helper()
	dir := t.TempDir()
	clock := history.NewClock()
	log, err := history.OpenLines(filepath.Join(dir, "resource.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(resource.NewStore(true, clock, log).Handler())
	defer srv.Close()
	ps := &Params{Lease: plans.Duration{Duration: time.Second}, HoldMin: plans.Duration{Duration: 5 * time.Millisecond},
		HoldMax: plans.Duration{Duration: 20 * time.Millisecond}, Resource: "fenced"}
	fields, err := json.Marshal(ps)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "history.jsonl")
	memLocks.Store(path, l)
	defer memLocks.Delete(path)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 3 {
		cfg := workloads.Config{Process: i, Seed: 1, Resource: strings.TrimPrefix(srv.URL, "http://"), History: path,
			ClockStart: clock.Start, Workload: "memory-lock", Clients: 3, Fields: fields}
		wg.Go(func() {
			if err := workloads.RunClient(ctx, cfg); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	log.Close()
	ops, _, err := history.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := history.ReadResourceLog(filepath.Join(dir, "resource.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rep := analysis.Run(context.Background(), onMemory.Checkers(), analysis.Input{History: ops, Resource: res, ResourceMode: "fenced"})
	return rep.Results[0]
}

// TestWorkloadOnMemory: the lock workload's clients, on a lock that
// excludes, make a history the lock checker judges valid, every write
// accepted; on a lock that grants to anyone, two holders at once.
func TestWorkloadOnMemory(t *testing.T) {
	r := runLockOnMemory(t, newMemLock(false), 400*time.Millisecond)
	f, ok := analysis.FiguresOf[lockchecker.Figures](r)
	if r.Verdict != analysis.Valid || !ok || f.Holds < 5 || f.StaleWritesAccepted != 0 || !f.TokensStrictlyIncreasing {
		t.Errorf("excluding lock: %s %+v %v", r.Verdict, f, r.Findings)
	}
	r = runLockOnMemory(t, newMemLock(true), 400*time.Millisecond)
	f, ok = analysis.FiguresOf[lockchecker.Figures](r)
	if r.Verdict != analysis.Invalid || !ok || f.ExclusionViolations == 0 {
		t.Errorf("lock granted to anyone: %s %+v", r.Verdict, f)
	}
}
