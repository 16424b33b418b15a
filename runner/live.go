package runner

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/progress"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// live is the harness's view of the history as clients append to it: what
// the status line shows, and who holds the lock or leads right now (the
// "holder" role that a pause can target).
type live struct {
	mu     sync.Mutex
	counts map[history.Type]int
	// last and lastAt are the counts at the previous status line, for rates.
	last    map[history.Type]int
	lastAt  time.Duration
	holding map[int]bool
	// begun are the processes that have invoked an operation.
	begun map[int]bool
}

func newLive() *live {
	return &live{counts: map[history.Type]int{}, last: map[history.Type]int{}, holding: map[int]bool{}, begun: map[int]bool{}}
}

// waiting lists the clients (of n) none of whose processes has invoked an
// operation yet: those still setting up (connecting, waiting for a stream
// another client makes).
func (l *live) waiting(n int) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	begun := map[int]bool{}
	for p := range l.begun {
		begun[p%n] = true // a client's workers are p, p+n, p+2n, ...
	}
	var out []int
	for c := range n {
		if !begun[c] {
			out = append(out, c)
		}
	}
	return out
}

func (l *live) observe(op history.Op) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if op.Process < 0 { // the nemesis or the observer
		return
	}
	l.counts[op.Type]++
	if op.Type == history.Invoke {
		l.begun[op.Process] = true
	}
	switch {
	case (op.F == lockop.FAcquire || op.F == lockop.FCampaign) && op.Type == history.Ok:
		l.holding[op.Process] = true
	case (op.F == lockop.FRelease || op.F == lockop.FResign) && op.Type == history.Invoke:
		delete(l.holding, op.Process)
	}
}

// holders lists the client processes that hold the lock by their own account.
func (l *live) holders() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ps []int
	for p := range l.holding {
		ps = append(ps, p)
	}
	return ps
}

// status is the status line: elapsed time against the limit as a bar,
// operations completed per second by outcome since the last call, the
// total, and the faults in force.
func (l *live) status(elapsed, limit time.Duration, faults []string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := "none"
	if len(faults) > 0 {
		f = strings.Join(faults, ", ")
	}
	secs := max(elapsed-l.lastAt, time.Millisecond).Seconds()
	rate := func(t history.Type) float64 { return float64(l.counts[t]-l.last[t]) / secs }
	// The faults first after the time: on a narrow terminal the line is
	// cut at its end.
	line := fmt.Sprintf("%s %3.0fs/%.0fs | faults: %s | ok %.0f/s, fail %.0f/s, info %.0f/s | %d ops",
		progress.Bar(elapsed.Seconds()/max(limit.Seconds(), 1)), elapsed.Seconds(), limit.Seconds(), f, rate(history.Ok), rate(history.Fail), rate(history.Info), l.counts[history.Invoke])
	l.last, l.lastAt = maps.Clone(l.counts), elapsed
	return line
}
