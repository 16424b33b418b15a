package workloads

import (
	"context"
	"errors"
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
	F     string // history.FRead, ...
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
	res, err := op.Call(cctx)
	cancel()
	d := Done[T]{Result: res, Err: err, Type: Outcome(err, op.ReadOnly)}
	v := op.Value
	if op.Completion != nil {
		v = op.Completion(res, err)
	}
	_, herr := h.Complete(d.Type, op.F, v, err)
	return d, herr
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
