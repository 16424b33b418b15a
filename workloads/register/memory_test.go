package register

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/traffic"
)

// memory is an in-memory register service, shared by the clients of a
// test: linearizable, or, with stale set, answering every other read with
// the value before the last write.
type memory struct {
	mu     sync.Mutex
	v, old map[string]int64
	stale  bool
	reads  int
}

type memStore struct{ m *memory }

func (s memStore) Read(_ context.Context, key string) (*int64, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	s.m.reads++
	vs := s.m.v
	if s.m.stale && s.m.reads%2 == 0 {
		vs = s.m.old
	}
	v, ok := vs[key]
	if !ok {
		return nil, nil
	}
	return &v, nil
}

func (s memStore) set(key string, v int64) {
	if cur, ok := s.m.v[key]; ok {
		s.m.old[key] = cur
	}
	s.m.v[key] = v
}

func (s memStore) Write(_ context.Context, key string, v int64) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	s.set(key, v)
	return nil
}

func (s memStore) Cas(_ context.Context, key string, from, to int64) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if cur, ok := s.m.v[key]; !ok || cur != from {
		return fmt.Errorf("%w: %s is not %d", workloads.ErrNotApplied, key, from)
	}
	s.set(key, to)
	return nil
}

func (memStore) Close() error { return nil }

// memories are the services of the runs on memory under way, by their
// history file: RunClient finds the workload by name, registered once,
// and each run has a service of its own.
var memories sync.Map // history path → *memory

// onMemory is the register workload on the service of the run whose
// history its client appends to.
var onMemory = Workload{Backend: workloads.Backend{TargetKind: "memory"}, Open: func(_ context.Context, c Client) (Store, error) {
	m, ok := memories.Load(c.History)
	if !ok {
		return nil, fmt.Errorf("no memory for history %s", c.History)
	}
	return memStore{m.(*memory)}, nil
}}

func init() { workloads.Register[Params]("memory-register", onMemory) }

// runOnMemory runs the register workload's clients against m for d, and
// judges their history with the workload's checker.
func runOnMemory(t *testing.T, m *memory, d time.Duration, concurrency int) (analysis.Report, []history.Op) {
	t.Helper()
	ps := &Params{Values: 3, Keys: 2, KeyPeriod: plans.Duration{Duration: time.Second},
		Spec: traffic.Spec{Mix: map[string]int{registerop.FRead: 2, registerop.FWrite: 1, registerop.FCas: 1}, Pace: traffic.Pace{Rate: 500, Concurrency: concurrency}}}
	fields, err := json.Marshal(ps)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "history.jsonl")
	memories.Store(path, m)
	defer memories.Delete(path)
	clock := history.NewClock()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 3 {
		cfg := workloads.Config{Process: i, Seed: 1, Nodes: []string{"memory"}, History: path, ClockStart: clock.Start,
			Workload: "memory-register", Clients: 3, Fields: fields}
		wg.Go(func() {
			if err := workloads.RunClient(ctx, cfg); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	ops, _, err := history.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return analysis.Run(context.Background(), onMemory.Checkers(), analysis.Input{History: ops}), ops
}

// TestWorkloadOnMemory: the register workload's clients, on a service
// that keeps its promise, make a history of every kind of operation that
// its checker judges valid; on one that serves stale reads, invalid.
func TestWorkloadOnMemory(t *testing.T) {
	rep, ops := runOnMemory(t, &memory{v: map[string]int64{}, old: map[string]int64{}}, 300*time.Millisecond, 1)
	kinds := map[string]int{}
	for _, op := range ops {
		if op.Type == history.Ok {
			kinds[op.F]++
		}
	}
	if kinds[registerop.FRead] == 0 || kinds[registerop.FWrite] == 0 || kinds[registerop.FCas] == 0 {
		t.Errorf("operations that succeeded: %v; want reads, writes and cases", kinds)
	}
	if rep.Verdict != analysis.Valid {
		t.Errorf("linearizable memory: %s %+v", rep.Verdict, rep.Results)
	}
	rep, _ = runOnMemory(t, &memory{v: map[string]int64{}, old: map[string]int64{}, stale: true}, 300*time.Millisecond, 1)
	if rep.Verdict != analysis.Invalid {
		t.Errorf("memory serving stale reads: %s, want invalid", rep.Verdict)
	}
}

// TestWorkersOnMemory: with two operations in flight per client, each
// worker is a history process of its own, one operation at a time, and
// the history stays valid.
func TestWorkersOnMemory(t *testing.T) {
	rep, ops := runOnMemory(t, &memory{v: map[string]int64{}, old: map[string]int64{}}, 300*time.Millisecond, 2)
	inFlight := map[int]bool{}
	for _, op := range ops {
		if op.Type == history.Invoke {
			if inFlight[op.Process] {
				t.Fatalf("process %d invoked %+v with an operation in flight", op.Process, op)
			}
		}
		inFlight[op.Process] = op.Type == history.Invoke
	}
	if len(inFlight) != 6 {
		t.Errorf("processes %v, want 0 to 5: 3 clients of 2 workers", inFlight)
	}
	if rep.Verdict != analysis.Valid {
		t.Errorf("linearizable memory: %s %+v", rep.Verdict, rep.Results)
	}
}
