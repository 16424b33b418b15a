package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/chaos-testing/chaos/nfqueue"
	"github.com/chaos-testing/chaos/plans"
)

func init() { Register[DelayParams]("delay", Delay{}) }

// Delay holds each packet that reaches a victim, from other nodes and
// from clients, for the fault's delay give or take its jitter, drawn
// packet by packet, as netem's delay does: with jitter, packets overtake
// one another. The packets go through the harness (see queuedFault).
type Delay struct{ queuedNemesis }

// DelayParams are a delay's own fields.
type DelayParams struct {
	// Delay is how long each packet is held on average.
	Delay plans.Duration `yaml:"delay"`
	// Jitter is how far a packet's hold may stray from Delay: at most
	// that far (uniform), or that far as one standard deviation (normal).
	Jitter plans.Duration `yaml:"jitter"`
	// Distribution is how the holds spread around Delay: uniform (the
	// default) or normal.
	Distribution string `yaml:"distribution"`
}

// distributions draw one hold around d with jitter j; never below zero.
var distributions = map[string]func(d, j time.Duration, rng *rand.Rand) time.Duration{
	"uniform": func(d, j time.Duration, rng *rand.Rand) time.Duration {
		return d - j + time.Duration(rng.Int64N(int64(2*j)+1))
	},
	"normal": func(d, j time.Duration, rng *rand.Rand) time.Duration {
		return max(0, d+time.Duration(rng.NormFloat64()*float64(j)))
	},
}

// Check checks the role, the delay, the jitter and the distribution.
func (Delay) Check(e *Entry[DelayParams], _ Setting) error {
	if err := checkRole(e, "nodes", "leader"); err != nil {
		return err
	}
	return e.Params.check("packet")
}

// check checks the delay, the jitter and the distribution of holds of
// each what, filling in the distribution.
func (dp *DelayParams) check(what string) error {
	if dp.Delay.Duration <= 0 {
		return plans.Fieldf("delay", "%s: expected how long to hold each %s, such as 100ms", dp.Delay, what)
	}
	if dp.Distribution == "" {
		dp.Distribution = "uniform"
	}
	if distributions[dp.Distribution] == nil {
		return plans.Fieldf("distribution", "%q: expected uniform or normal", dp.Distribution)
	}
	if dp.Jitter.Duration < 0 || (dp.Distribution == "uniform" && dp.Jitter.Duration > dp.Delay.Duration) {
		return plans.Fieldf("jitter", "%s: expected 0 to the delay (%s)", dp.Jitter, dp.Delay)
	}
	return nil
}

// hold draws one hold.
func (dp DelayParams) hold(rng *rand.Rand) time.Duration {
	return distributions[dp.Distribution](dp.Delay.Duration, dp.Jitter.Duration, rng)
}

// Start queues what reaches the victims and holds it.
func (Delay) Start(ctx context.Context, w *World, e Entry[DelayParams], rng *rand.Rand) (Injected, error) {
	return startQueued(ctx, w, pickVictims(ctx, w, e.Schedule, rng), delayFate(e.Params), rng)
}

type delayFate DelayParams

func (d delayFate) fate(_ nfqueue.Packet, rng *rand.Rand) fate {
	return fate{hold: DelayParams(d).hold(rng)}
}

func (d delayFate) describe() string {
	if d.Jitter.Duration == 0 {
		return fmt.Sprintf("holds what reaches it %s", d.Delay)
	}
	return fmt.Sprintf("holds what reaches it %s ± %s (%s)", d.Delay, d.Jitter, d.Distribution)
}

// Explore holds what reaches one node, or the leader, 10 to 200 ms, with
// a jitter of up to half that, spread either way.
func (Delay) Explore(rng *rand.Rand, _ int) Entry[DelayParams] {
	d := time.Duration(10+rng.IntN(191)) * time.Millisecond
	return explored(drawRole(rng, "nodes", "leader"), DelayParams{Delay: plans.Duration{Duration: d},
		Jitter: plans.Duration{Duration: time.Duration(rng.Int64N(int64(d/2) + 1))}, Distribution: drawRole(rng, "uniform", "normal")})
}
