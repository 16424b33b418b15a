// Package lock is the lock workload: each client takes the lock, holds it
// for a while as if working, writes to the protected resource while it
// believes it holds the lock, and releases it. Backends plug in a Locker.
package lock

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	lockcheck "github.com/chaos-testing/chaos/analysis/lock"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/resource"
	"github.com/chaos-testing/chaos/workloads"
)

// Name of the one lock every client contends for.
const Name = "chaos-lock"

// opTimeout bounds one operation. A longer silence is an unknown outcome.
const opTimeout = 5 * time.Second

// Locker is a lock service's client, bound to one client process.
type Locker interface {
	// Acquire takes the lock. It returns ErrNotAcquired when the service
	// answered that it was not taken; any other error leaves it unknown.
	Acquire(ctx context.Context) (Held, error)
}

// Held is a lock this client believes it holds.
type Held interface {
	// Token is the fencing token that came with the lock, or nil.
	Token() *int64
	// Release lets the lock go. It returns ErrNotHeld when the service
	// answered that the lock was no longer this client's.
	Release(ctx context.Context) error
}

// Loser is a Held that learns when it lost the lock or leadership against
// its will (its session expired): a leader stops acting then.
type Loser interface {
	Lost() <-chan struct{}
}

// Outcomes a Locker reports with certainty.
var (
	ErrNotAcquired = fmt.Errorf("lock not acquired (%w)", workloads.ErrNotApplied)
	ErrNotHeld     = fmt.Errorf("lock was no longer held (%w)", workloads.ErrNotApplied)
	// errRejected is the fenced resource's refusal of a write.
	errRejected = fmt.Errorf("write rejected (%w)", workloads.ErrNotApplied)
)

// Workload runs lock clients against one backend.
type Workload struct {
	workloads.Backend
	// NewLocker connects one client process to the lock service.
	NewLocker func(ctx context.Context, c Client) (Locker, error)
	// Election makes the clients leader candidates: they campaign, write
	// to the resource every actEvery while they lead (for a tenure of
	// hold_min to hold_max, which may outlast the lease: a leader's
	// session is kept alive), and resign. A Held that is also a Loser
	// stops leading when it learns it lost.
	Election bool
}

// actEvery is how often a leader acts.
const actEvery = 300 * time.Millisecond

// Checkers judge lock histories, or elections for split brain.
func (w Workload) Checkers() []analysis.Checker {
	if w.Election {
		return []analysis.Checker{lockcheck.SplitBrain}
	}
	return []analysis.Checker{lockcheck.Checker{}}
}

// names are the operations of the workload's history.
func (w Workload) names() (acquire, release string) {
	if w.Election {
		return lockop.FCampaign, lockop.FResign
	}
	return lockop.FAcquire, lockop.FRelease
}

// ResourceModes of the protected resource.
var ResourceModes = []string{"fenced", "unfenced"}

// Params are a lock or election workload's own fields.
type Params struct {
	// Lease is the lock's lease, or the session's timeout.
	Lease plans.Duration `yaml:"lease" json:"lease"`
	// A holder keeps the lock for a random time in [HoldMin, HoldMax],
	// then writes to the resource and releases.
	HoldMin plans.Duration `yaml:"hold_min" json:"hold_min"`
	HoldMax plans.Duration `yaml:"hold_max" json:"hold_max"`
	// Resource is "fenced" or "unfenced": whether the protected resource
	// rejects writes carrying a token older than one it has accepted.
	Resource string `yaml:"resource" json:"resource"`
}

// Client is one client process of a lock or election workload.
type Client = workloads.Client[Params]

// Check checks the lease and hold times and the resource mode.
func (w Workload) Check(wl *Params, _ workloads.Setting) error {
	if wl.Lease.Duration <= 0 {
		return plans.Fieldf("lease", "missing or not positive; expected a duration such as 3s")
	}
	if wl.HoldMax.Duration == 0 {
		wl.HoldMax.Duration = wl.Lease.Duration / 2
	}
	if wl.HoldMin.Duration < 0 || wl.HoldMin.Duration > wl.HoldMax.Duration {
		return plans.Fieldf("hold_min", "%s: expected between 0 and hold_max (%s)", wl.HoldMin, wl.HoldMax)
	}
	if wl.HoldMax.Duration >= wl.Lease.Duration && !w.Election {
		return plans.Fieldf("hold_max", "%s: a holder must mean to finish within its lease (%s)", wl.HoldMax, wl.Lease)
	}
	if wl.Resource == "" {
		wl.Resource = "unfenced"
	}
	if !slices.Contains(ResourceModes, wl.Resource) {
		return plans.Fieldf("resource", "%q: expected one of %s", wl.Resource, strings.Join(ResourceModes, ", "))
	}
	return nil
}

// Needs are the resource, holders, and time for a last acquisition, hold,
// write and release.
func (w Workload) Needs(ps Params) workloads.Needs {
	finish := 3*opTimeout + ps.HoldMax.Duration
	if w.Election {
		finish += ps.HoldMax.Duration + ps.Lease.Duration // a candidate's wait
	}
	return workloads.Needs{Resource: ps.Resource, Holders: true, Finish: finish}
}

// Run loops acquire, hold, write, release until ctx ends.
func (w Workload) Run(ctx context.Context, cfg Client, h *history.Appender) error {
	locker, err := w.NewLocker(ctx, cfg)
	if err != nil && ctx.Err() != nil {
		return nil // faults kept the client from the cluster all run long: it did nothing
	}
	if err != nil {
		return err
	}
	c := &client{w: w, cfg: cfg, h: h, locker: locker,
		res: resource.NewClient(cfg.Resource, opTimeout),
		rng: plans.Rand(cfg.Seed, plans.ClientStream(cfg.Process))}
	for session := 1; ctx.Err() == nil; {
		ok, err := c.cycle(session)
		if err != nil {
			return err
		}
		if ok {
			session++
		} else {
			time.Sleep(time.Duration(50+c.rng.IntN(150)) * time.Millisecond)
		}
	}
	return nil
}

type client struct {
	w      Workload
	cfg    Client
	h      *history.Appender
	locker Locker
	res    *resource.Client
	rng    *rand.Rand
}

// cycle is one acquisition. It runs to its end even when the client is
// being stopped, so that no lock is left held by a client that exited.
// It reports whether the lock was acquired; errors are the history's only.
func (c *client) cycle(session int) (bool, error) {
	ctx := context.Background()
	acquire, release := c.w.names()
	w := c.cfg.Params
	wait := opTimeout
	if c.w.Election {
		// A candidate waits out the leader's tenure, or its lease.
		wait += w.HoldMax.Duration + w.Lease.Duration
	}
	got, err := workloads.Record(ctx, c.h, workloads.Op[Held]{F: acquire, Value: lockop.Value{Lock: Name}, Timeout: wait,
		Call: c.locker.Acquire,
		Completion: func(held Held, err error) any {
			if err != nil {
				return lockop.Value{Lock: Name}
			}
			return lockop.Value{Lock: Name, Session: session, Token: held.Token()}
		}})
	if err != nil || got.Err != nil {
		return false, err
	}
	held := got.Result

	// Work while holding the lock. A pause (SIGSTOP) landing here outlives
	// the lease; like most lock users, the client does not check again
	// before writing (and a check would only narrow the window).
	hold := w.HoldMin.Duration + time.Duration(c.rng.Int64N(int64(w.HoldMax.Duration-w.HoldMin.Duration)+1))
	if err := c.work(ctx, held, session, hold); err != nil {
		return true, err
	}
	_, err = workloads.Record(ctx, c.h, workloads.Op[struct{}]{F: release, Timeout: opTimeout,
		Value: lockop.Value{Lock: Name, Session: session, Token: held.Token()},
		Call:  func(ctx context.Context) (struct{}, error) { return struct{}{}, held.Release(ctx) }})
	return true, err
}

// work is what a holder does for hold: a lock holder writes once, at the
// end; a leader writes every actEvery, and stops early if it learns that
// it lost the leadership.
func (c *client) work(ctx context.Context, held Held, session int, hold time.Duration) error {
	if !c.w.Election {
		time.Sleep(hold)
		return c.write(ctx, session, 0, held.Token())
	}
	var lost <-chan struct{}
	if l, ok := held.(Loser); ok {
		lost = l.Lost()
	}
	end := time.After(hold)
	tick := time.NewTicker(actEvery)
	defer tick.Stop()
	for act := 1; ; act++ {
		if err := c.write(ctx, session, act, held.Token()); err != nil {
			return err
		}
		select {
		case <-lost:
			return nil
		case <-end:
			return nil
		case <-tick.C:
		}
	}
}

// write sends one write to the resource; act numbers a leader's writes.
func (c *client) write(ctx context.Context, session, act int, token *int64) error {
	value := fmt.Sprintf("p%d-s%d", c.cfg.Process, session)
	if act > 0 {
		value += fmt.Sprintf("-a%d", act)
	}
	wv := lockop.WriteValue{Key: Name, Value: value, Session: session, Token: token}
	_, err := workloads.Record(ctx, c.h, workloads.Op[struct{}]{F: lockop.FWrite, Value: wv, Timeout: opTimeout,
		Call: func(ctx context.Context) (struct{}, error) {
			resp, err := c.res.Write(ctx, resource.Request{Client: c.cfg.Process, WriteValue: wv})
			if err == nil && !resp.Accepted {
				err = fmt.Errorf("%w: %s", errRejected, resp.Reason)
			}
			return struct{}{}, err
		}})
	return err
}
