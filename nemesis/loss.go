package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/chaos-testing/chaos/plans"
)

func init() { Register[ShareParams]("loss", Loss{}) }

// Loss drops a share of the packets that reach each victim, drawn packet
// by packet: a lossy link into the node, from the other nodes and from
// clients alike. The rule is iptables' statistic match in the node's own
// network namespace, in a chain of its own (chainState), so that it
// composes with partitions; netem would do the same where the kernel has
// it, and this machine's has not.
type Loss struct{}

// ShareParams are the fields of a fault that hits a share of the packets
// (loss, duplicate, corrupt).
type ShareParams struct {
	// Probability is the share of packets hit, above 0 and at most 1.
	Probability float64 `yaml:"probability"`
}

// Check checks the role and the probability.
func (Loss) Check(e *Entry[ShareParams], _ Setting) error { return checkShare(e) }

// percent renders a probability for the history: 0.15 as "15%", not as
// the "15.000000000000002%" that 100*0.15 is in floating point.
func percent(p float64) string { return fmt.Sprintf("%.4g%%", 100*p) }

// checkShare checks a packet fault's role and its probability.
func checkShare(e *Entry[ShareParams]) error {
	if err := checkRole(e, "nodes", "leader"); err != nil {
		return err
	}
	if pr := e.Params.Probability; !(pr > 0 && pr <= 1) {
		return plans.Fieldf("probability", "%g: expected the share of packets to hit, above 0 and at most 1", pr)
	}
	return nil
}

// Start installs the drop on the victims.
func (Loss) Start(ctx context.Context, w *World, e Entry[ShareParams], rng *rand.Rand) (Injected, error) {
	victims := pickVictims(ctx, w, e.Schedule, rng)
	if len(victims) == 0 {
		return Injected{}, nil
	}
	pr := e.Params.Probability
	hit := map[string]bool{}
	var targets []string
	for _, v := range victims {
		hit[v.Name] = true
		targets = append(targets, fmt.Sprintf("%s drops %s of what reaches it", v.Name, percent(pr)))
	}
	match := []string{"!", "-i", "lo", "-m", "statistic", "--mode", "random", "--probability", strconv.FormatFloat(pr, 'f', -1, 64)}
	st := chainState{chain: fmt.Sprintf("chaos-loss-%d", w.newID()), nodes: victims,
		match: func(_ *World, n Process) []string {
			if !hit[n.Name] {
				return nil
			}
			return match
		}}
	return Injected{Targets: targets, State: st}, st.install(context.WithoutCancel(ctx), w, false)
}

// Reinstall puts the drop back on a victim that restarted, in its new
// network namespace.
func (Loss) Reinstall(ctx context.Context, w *World, in Injected) error {
	return in.State.(chainState).install(ctx, w, true)
}

// Stop removes the drop.
func (Loss) Stop(ctx context.Context, w *World, in Injected) error {
	return in.State.(chainState).remove(ctx, w)
}

// Explore drops 5% to 50% of what reaches one node or the leader.
func (Loss) Explore(rng *rand.Rand, _ int) Entry[ShareParams] {
	return explored(drawRole(rng, "nodes", "leader"), ShareParams{Probability: drawShare(rng, 0.5)})
}
