package workloads

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// ErrNotApplied marks an error after which an operation certainly did not
// take effect (the service said so, or the request never left). Any other
// error leaves its outcome unknown.
var ErrNotApplied = errors.New("not applied")

// Op is one operation of a client, recorded as Jepsen's client contract
// has it: its invocation, the call under a timeout, and its completion.
type Op[T any] struct {
	F     string // registerop.FRead, ...
	Value any    // the invocation's value
	// Timeout bounds the call: a longer silence leaves the outcome unknown.
	Timeout time.Duration
	// ReadOnly marks an operation that changes nothing: whatever its
	// error, it certainly did not take effect.
	ReadOnly bool
	Call     func(ctx context.Context) (T, error)
	// Completion is the completion's value given the call's result; nil
	// keeps the invocation's value.
	Completion func(T, error) any
}

// Done is how a recorded operation ended.
type Done[T any] struct {
	Result T
	Err    error // the call's
	Type   history.Type
}

// Record is the one path by which clients record operations: it appends
// op's invocation to h, makes the call within ctx and op's timeout, and
// appends its completion: ok if the call succeeded, fail if it certainly
// did not take effect (ErrNotApplied, or a read-only operation), info
// otherwise. Its error is h's, which ends the client.
func Record[T any](ctx context.Context, h *history.Appender, op Op[T]) (Done[T], error) {
	if _, err := h.Invoke(op.F, op.Value); err != nil {
		return Done[T]{Err: err, Type: history.Info}, err
	}
	cctx, cancel := context.WithTimeout(ctx, op.Timeout)
	res, err := call(cctx, op.Call)
	cancel()
	d := Done[T]{Result: res, Err: err, Type: Outcome(err, op.ReadOnly)}
	v := op.Value
	if op.Completion != nil {
		v = op.Completion(res, err)
	}
	_, herr := h.Complete(d.Type, op.F, v, err)
	return d, herr
}

// abandonAfter is how long a call may run past its context's end before
// Record stops waiting: a client library that does not heed its context
// (a fetch whose channel never ends) must not stall its process, and with
// it the run, for good.
const abandonAfter = time.Second

// errAbandoned marks a call that had not returned abandonAfter past its
// context's end. Its outcome is unknown, as any timeout's.
var errAbandoned = errors.New("the call had not returned a second past its deadline, and was abandoned")

// call runs f within ctx, and gives up on it abandonAfter past ctx's end;
// an abandoned call runs on, and its result is dropped.
func call[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
	}
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(abandonAfter):
		var zero T
		return zero, fmt.Errorf("%w: %w", errAbandoned, ctx.Err())
	}
}

// Outcome is how an operation that ended with err is recorded: ok, fail
// if it certainly did not take effect, info (unknown) otherwise.
func Outcome(err error, readOnly bool) history.Type {
	switch {
	case err == nil:
		return history.Ok
	case readOnly || errors.Is(err, ErrNotApplied):
		return history.Fail
	}
	return history.Info
}
