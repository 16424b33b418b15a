package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/chaos-testing/chaos/nfqueue"
)

func init() { Register[ShareParams]("duplicate", Duplicate{}) }

// Duplicate delivers a share of the packets that reach a victim twice, as
// netem's duplicate does: the copy is sent into the victim's namespace by
// the harness right after the original.
type Duplicate struct{ queuedNemesis }

// Check checks the role and the probability.
func (Duplicate) Check(e *Entry[ShareParams], _ Setting) error { return checkShare(e) }

// Start queues what reaches the victims and copies some of it.
func (Duplicate) Start(ctx context.Context, w *World, e Entry[ShareParams], rng *rand.Rand) (Injected, error) {
	return startQueued(ctx, w, pickVictims(ctx, w, e.Schedule, rng), duplicateFate(e.Params), rng)
}

type duplicateFate ShareParams

func (d duplicateFate) fate(p nfqueue.Packet, rng *rand.Rand) fate {
	if rng.Float64() < d.Probability && len(p.Payload) > 0 && p.Payload[0]>>4 == 4 {
		return fate{copies: 1}
	}
	return fate{}
}

func (d duplicateFate) describe() string {
	return fmt.Sprintf("gets %s of what reaches it twice", percent(d.Probability))
}

// Explore duplicates 5% to 30% of what reaches one node or the leader.
func (Duplicate) Explore(rng *rand.Rand, _ int) Entry[ShareParams] {
	return explored(drawRole(rng, "nodes", "leader"), ShareParams{Probability: drawShare(rng, 0.3)})
}
