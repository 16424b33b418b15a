// Package lock is the lock workload: each client takes the lock, holds it
// for a while as if working, writes to the protected resource while it
// believes it holds the lock, and releases it. Backends plug in a Locker.
package lock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/history"
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

// Outcomes a Locker reports with certainty.
var (
	ErrNotAcquired = errors.New("lock not acquired")
	ErrNotHeld     = errors.New("lock was no longer held")
)

// Workload runs lock clients against one backend.
type Workload struct {
	// TargetKind is the cluster kind the backend runs on.
	TargetKind string
	// NewLocker connects one client process to the lock service.
	NewLocker func(cfg workloads.Config) (Locker, error)
}

// Checkers judge lock histories.
func (w Workload) Checkers() []string { return []string{"lock"} }

// Target is the cluster kind the backend needs.
func (w Workload) Target() string { return w.TargetKind }

// ResourceModes of the protected resource.
var ResourceModes = []string{"fenced", "unfenced"}

// CheckPlan checks the lease and hold times and the resource mode.
func (w Workload) CheckPlan(p *plans.Plan) error {
	wl := &p.Workload
	if wl.Lease.Duration <= 0 {
		return p.Errorf("workload.lease", "missing or not positive; expected a duration such as 3s")
	}
	if wl.HoldMax.Duration == 0 {
		wl.HoldMax.Duration = wl.Lease.Duration / 2
	}
	if wl.HoldMin.Duration < 0 || wl.HoldMin.Duration > wl.HoldMax.Duration {
		return p.Errorf("workload.hold_min", "%s: expected between 0 and hold_max (%s)", wl.HoldMin, wl.HoldMax)
	}
	if wl.HoldMax.Duration >= wl.Lease.Duration {
		return p.Errorf("workload.hold_max", "%s: a holder must mean to finish within its lease (%s)", wl.HoldMax, wl.Lease)
	}
	if wl.Resource == "" {
		wl.Resource = "unfenced"
	}
	if !slices.Contains(ResourceModes, wl.Resource) {
		return p.Errorf("workload.resource", "%q: expected one of %s", wl.Resource, strings.Join(ResourceModes, ", "))
	}
	return nil
}

// Run loops acquire, hold, write, release until ctx ends.
func (w Workload) Run(ctx context.Context, cfg workloads.Config, h *history.Appender) error {
	locker, err := w.NewLocker(cfg)
	if err != nil {
		return err
	}
	c := &client{cfg: cfg, h: h, locker: locker,
		res: resource.NewClient(cfg.Resource, opTimeout),
		rng: rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(cfg.Process)))}
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
	cfg    workloads.Config
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
	if _, err := c.h.Invoke(history.FAcquire, history.LockValue{Lock: Name}); err != nil {
		return false, err
	}
	held, err := withTimeout(ctx, func(ctx context.Context) (Held, error) { return c.locker.Acquire(ctx) })
	if err != nil {
		_, herr := c.h.Complete(certain(err, ErrNotAcquired), history.FAcquire, history.LockValue{Lock: Name}, err)
		return false, herr
	}
	lv := history.LockValue{Lock: Name, Session: session, Token: held.Token()}
	if _, err := c.h.Complete(history.Ok, history.FAcquire, lv, nil); err != nil {
		return true, err
	}

	// Work while holding the lock. A pause (SIGSTOP) landing here outlives
	// the lease; like most lock users, the client does not check again
	// before writing (and a check would only narrow the window).
	w := c.cfg.Workload
	time.Sleep(w.HoldMin.Duration + time.Duration(c.rng.Int64N(int64(w.HoldMax.Duration-w.HoldMin.Duration)+1)))
	if err := c.write(ctx, session, held.Token()); err != nil {
		return true, err
	}

	if _, err := c.h.Invoke(history.FRelease, lv); err != nil {
		return true, err
	}
	_, err = withTimeout(ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, held.Release(ctx) })
	typ := history.Ok
	if err != nil {
		typ = certain(err, ErrNotHeld)
	}
	_, herr := c.h.Complete(typ, history.FRelease, lv, err)
	return true, herr
}

func (c *client) write(ctx context.Context, session int, token *int64) error {
	wv := history.WriteValue{Key: Name, Value: fmt.Sprintf("p%d-s%d", c.cfg.Process, session), Session: session, Token: token}
	if _, err := c.h.Invoke(history.FWrite, wv); err != nil {
		return err
	}
	resp, err := withTimeout(ctx, func(ctx context.Context) (resource.Response, error) {
		return c.res.Write(ctx, resource.Request{Client: c.cfg.Process, WriteValue: wv})
	})
	switch {
	case err != nil:
		_, err = c.h.Complete(history.Info, history.FWrite, wv, err)
	case resp.Accepted:
		_, err = c.h.Complete(history.Ok, history.FWrite, wv, nil)
	default:
		_, err = c.h.Complete(history.Fail, history.FWrite, wv, errors.New(resp.Reason))
	}
	return err
}

// certain maps an error to Fail when it is the service's definite answer
// (sentinel), and to Info otherwise: a timeout or a lost connection after
// the request left may or may not have taken effect.
func certain(err, sentinel error) history.Type {
	if errors.Is(err, sentinel) {
		return history.Fail
	}
	return history.Info
}

func withTimeout[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return f(ctx)
}
