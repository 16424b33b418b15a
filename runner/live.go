package runner

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// live is the harness's view of the history as clients append to it: what
// the status line shows, and who holds the lock or leads right now (the
// "holder" role that a pause can target).
type live struct {
	mu      sync.Mutex
	counts  map[history.Type]int
	holding map[int]bool
}

func newLive() *live {
	return &live{counts: map[history.Type]int{}, holding: map[int]bool{}}
}

func (l *live) observe(op history.Op) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if op.Process < 0 { // the nemesis or the observer
		return
	}
	l.counts[op.Type]++
	switch {
	case (op.F == history.FAcquire || op.F == history.FCampaign) && op.Type == history.Ok:
		l.holding[op.Process] = true
	case (op.F == history.FRelease || op.F == history.FResign) && op.Type == history.Invoke:
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

func (l *live) status(elapsed, limit time.Duration, faults []string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := "none"
	if len(faults) > 0 {
		f = strings.Join(faults, ", ")
	}
	return fmt.Sprintf("[%3.0fs/%.0fs] ops %d: ok %d, fail %d, info %d | faults: %s",
		elapsed.Seconds(), limit.Seconds(), l.counts[history.Invoke],
		l.counts[history.Ok], l.counts[history.Fail], l.counts[history.Info], f)
}

// statusLine rewrites one terminal line in place; on a log (not a
// terminal) it writes a line every few seconds instead.
type statusLine struct {
	w        io.Writer
	terminal bool
	last     time.Time
	width    int
}

func (s *statusLine) show(line string) {
	if s.terminal {
		pad := max(0, s.width-len(line))
		fmt.Fprintf(s.w, "\r%s%s", line, strings.Repeat(" ", pad))
		s.width = len(line)
		return
	}
	if time.Since(s.last) >= 10*time.Second {
		fmt.Fprintln(s.w, line)
		s.last = time.Now()
	}
}

func (s *statusLine) done() {
	if s.terminal && s.width > 0 {
		fmt.Fprintln(s.w)
	}
}
