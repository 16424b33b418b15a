package runner

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/targets"
)

// checkMembers, at the end of a run whose faults change the cluster's
// members, asks the cluster which members it has and records them in the
// history ("final-members"): each heal must have brought back the members
// the cluster started with, and a run whose cluster ended with others did
// not finish cleanly. A cluster that just took a member back may not list
// it everywhere yet: it is asked again for up to 30 s.
func checkMembers(ctx context.Context, env *faultEnv, h *history.Appender) error {
	const f = "final-members"
	if _, err := h.Invoke(f, nil); err != nil {
		return err
	}
	var want []string
	for _, n := range env.servers() {
		want = append(want, n.Container.Name)
	}
	slices.Sort(want)
	m := env.target.(targets.Membered) // validation refused a plan without it
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var got []string
	var err error
	for {
		if got, err = m.Members(ctx, env.dataServers(true)); err == nil && !slices.Equal(got, want) {
			err = fmt.Errorf("the cluster ended with members %v, not its original %v", got, want)
		}
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}
	if _, herr := h.Complete(history.Info, f, got, err); herr != nil {
		return herr
	}
	return err
}
