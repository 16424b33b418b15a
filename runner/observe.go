package runner

import (
	"context"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/targets"
)

const (
	// pollEvery is how often the observer asks every data server its role.
	pollEvery = 250 * time.Millisecond
	// pollTimeout bounds one question: a paused server must not hold up
	// the others' for long.
	pollTimeout = 500 * time.Millisecond
)

// observe starts the observer, if the target can report roles: until the
// returned function is called, it asks every data server which role it
// claims and whether it takes a write, from the host, outside the run's
// network faults, and records each answer in the history as process
// history.Observer. The questions go one at a time, so the observer has
// one operation in flight, as every process of a history.
func observe(env *faultEnv, histPath string, clock history.Clock) (stop func(), err error) {
	rr, ok := env.target.(targets.RoleReporter)
	if !ok {
		return func() {}, nil
	}
	h, err := history.OpenAppender(histPath, clock, history.Observer)
	if err != nil {
		return nil, err
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer h.Close()
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		for {
			for _, n := range env.servers() {
				if poll(rr, n, h) != nil {
					return // the history is gone: nothing more to record
				}
			}
			select {
			case <-quit:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}, nil
}

// poll asks one server and records the question and its answer.
func poll(rr targets.RoleReporter, n targets.Node, h *history.Appender) error {
	v := history.RoleValue{Node: n.Container.Name}
	if _, err := h.Invoke(history.FRole, v); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
	defer cancel()
	role, accepts, err := rr.Role(ctx, n)
	typ := history.Ok
	if err != nil {
		typ = history.Info // no answer in time: nothing known
	}
	v.Role, v.Accepts = role, accepts
	_, err = h.Complete(typ, history.FRole, v, err)
	return err
}
