package runner

import (
	"context"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/nemesis"
)

// faultEnv is what the nemesis may act on in a run: its nodes and clients.
type faultEnv struct {
	run     *containers.Run
	nodes   []nemesis.Process
	clients []nemesis.Process // index = history process number
	live    *live
}

func (e *faultEnv) Candidates(role string) []nemesis.Process {
	switch role {
	case "nodes":
		return append([]nemesis.Process(nil), e.nodes...)
	case "clients":
		return append([]nemesis.Process(nil), e.clients...)
	case "holder":
		var ps []nemesis.Process
		for _, p := range e.live.holders() {
			if p < len(e.clients) {
				ps = append(ps, e.clients[p])
			}
		}
		return ps
	}
	return nil
}

func (e *faultEnv) Signal(ctx context.Context, p nemesis.Process, sig string) error {
	return e.run.Signal(ctx, p.Container, sig)
}

func process(c containers.Container) nemesis.Process {
	return nemesis.Process{Name: c.Name, Role: c.Role, Container: c}
}
