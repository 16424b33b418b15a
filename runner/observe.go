package runner

import (
	"context"
	"time"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/roleop"
	"github.com/chaos-testing/chaos/targets"
	"github.com/chaos-testing/chaos/workloads"
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
func observe(env *faultEnv, target targets.Target, histPath string, clock history.Clock) (stop func(), err error) {
	rr, ok := target.(targets.RoleReporter)
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
			// Not a node killed and not back: a node restarted
			// meanwhile may have its old address.
			for _, n := range env.servers(true) {
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

// poll asks one server and records the question and its answer; one not
// answered in time is unknown (info): nothing was learnt.
func poll(rr targets.RoleReporter, n cluster.Node, h *history.Appender) error {
	q := roleop.Value{Node: n.Container.Name}
	_, err := workloads.Record(context.Background(), h, workloads.Op[roleop.Value]{F: roleop.FRole, Value: q, Timeout: pollTimeout,
		Call: func(ctx context.Context) (roleop.Value, error) {
			v := q
			var err error
			v.Role, v.Accepts, err = rr.Role(ctx, n)
			return v, err
		},
		Completion: func(v roleop.Value, _ error) any { return v }})
	return err
}
