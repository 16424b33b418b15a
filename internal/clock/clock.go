// Package clock is the time that status lines and the fault schedule keep:
// the system's (Real), or a Fake that a test moves, so that no test sleeps
// to wait for a redraw or a fault.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock tells the time and waits on it.
type Clock interface {
	Now() time.Time
	// Tick delivers the time every d until stop is called.
	Tick(d time.Duration) (c <-chan time.Time, stop func())
	// After delivers the time once d has passed.
	After(d time.Duration) <-chan time.Time
	// WithDeadline is context.WithDeadline on this clock's time.
	WithDeadline(ctx context.Context, t time.Time) (context.Context, context.CancelFunc)
}

// Real is the system's clock.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (realClock) Tick(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

func (realClock) WithDeadline(ctx context.Context, t time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, t)
}

// Fake is a clock that moves only when Advance is called.
type Fake struct {
	mu      sync.Mutex
	changed *sync.Cond
	now     time.Time
	timers  map[*timer]bool
}

// timer is a tick (every > 0, delivered before Advance goes on), an After
// (c buffered), or a deadline (f).
type timer struct {
	at    time.Time
	every time.Duration
	c     chan time.Time
	f     func()
}

// NewFake is a fake clock at now.
func NewFake(now time.Time) *Fake {
	f := &Fake{now: now, timers: map[*timer]bool{}}
	f.changed = sync.NewCond(&f.mu)
	return f
}

// Now is the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *Fake) add(t *timer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.timers[t] = true
	f.changed.Broadcast()
}

func (f *Fake) remove(t *timer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.timers, t)
}

// Tick delivers each tick that Advance passes, in Advance's goroutine: a
// tick is received before Advance goes on.
func (f *Fake) Tick(d time.Duration) (<-chan time.Time, func()) {
	t := &timer{at: f.Now().Add(d), every: d, c: make(chan time.Time)}
	f.add(t)
	return t.c, func() { f.remove(t) }
}

// After delivers the time once Advance has passed d from now.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	t := &timer{at: f.Now().Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- f.Now()
		return t.c
	}
	f.add(t)
	return t.c
}

// WithDeadline ends the context once Advance reaches t.
func (f *Fake) WithDeadline(ctx context.Context, at time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if !at.After(f.Now()) {
		cancel()
		return ctx, cancel
	}
	t := &timer{at: at, f: cancel}
	f.add(t)
	return ctx, func() { f.remove(t); cancel() }
}

// Advance moves the clock by d, firing on the way the ticks, Afters and
// deadlines due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	end := f.now.Add(d)
	f.mu.Unlock()
	for {
		f.mu.Lock()
		var due *timer
		for t := range f.timers {
			if !t.at.After(end) && (due == nil || t.at.Before(due.at)) {
				due = t
			}
		}
		if due == nil {
			f.now = end
			f.mu.Unlock()
			return
		}
		f.now = due.at
		if due.every > 0 {
			due.at = due.at.Add(due.every)
		} else {
			delete(f.timers, due)
		}
		at := f.now
		f.mu.Unlock()
		switch {
		case due.f != nil:
			due.f()
		default:
			due.c <- at
		}
	}
}

// BlockUntil waits until n Afters are pending: until that many
// goroutines wait on the clock, having done what they do before they wait.
func (f *Fake) BlockUntil(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.afters() < n {
		f.changed.Wait()
	}
}

func (f *Fake) afters() int {
	n := 0
	for t := range f.timers {
		if t.every == 0 && t.f == nil {
			n++
		}
	}
	return n
}
