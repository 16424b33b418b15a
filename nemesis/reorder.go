package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/chaos-testing/chaos/nfqueue"
	"github.com/chaos-testing/chaos/plans"
)

func init() { Register[ReorderParams]("reorder", Reorder{}) }

// Reorder holds back a share of the packets that reach a victim for a
// gap, and lets the others through at once: the packets that come during
// the gap overtake the ones held, as with netem's reorder.
type Reorder struct{ queuedNemesis }

// ReorderParams are a reorder's own fields.
type ReorderParams struct {
	// Probability is the share of packets held back.
	Probability float64 `yaml:"probability"`
	// Gap is how long they are held back; 20ms if not given.
	Gap plans.Duration `yaml:"gap"`
}

// Check checks the role, the probability and the gap.
func (Reorder) Check(e *Entry[ReorderParams], _ Setting) error {
	if err := checkRole(e, "nodes", "leader"); err != nil {
		return err
	}
	rp := &e.Params
	if pr := rp.Probability; !(pr > 0 && pr < 1) {
		return plans.Fieldf("probability", "%g: expected the share of packets to hold back, above 0 and below 1", pr)
	}
	if rp.Gap.Duration == 0 {
		rp.Gap.Duration = defaultReorderGap
	}
	if rp.Gap.Duration < 0 {
		return plans.Fieldf("gap", "%s: expected how long to hold a packet back, such as 20ms", rp.Gap)
	}
	return nil
}

const defaultReorderGap = 20 * time.Millisecond

// Start queues what reaches the victims and holds some of it back.
func (Reorder) Start(ctx context.Context, w *World, e Entry[ReorderParams], rng *rand.Rand) (Injected, error) {
	return startQueued(ctx, w, pickVictims(ctx, w, e.Schedule, rng), reorderFate(e.Params), rng)
}

type reorderFate ReorderParams

func (r reorderFate) fate(_ nfqueue.Packet, rng *rand.Rand) fate {
	if rng.Float64() < r.Probability {
		return fate{hold: r.Gap.Duration}
	}
	return fate{}
}

func (r reorderFate) describe() string {
	return fmt.Sprintf("holds %s of what reaches it back %s", percent(r.Probability), r.Gap)
}

// Explore holds back 5% to 50% of what reaches one node or the leader,
// by 5 to 50 ms.
func (Reorder) Explore(rng *rand.Rand, _ int) Entry[ReorderParams] {
	return explored(drawRole(rng, "nodes", "leader"),
		ReorderParams{Probability: drawShare(rng, 0.5), Gap: plans.Duration{Duration: time.Duration(5+rng.IntN(46)) * time.Millisecond}})
}
