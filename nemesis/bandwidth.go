package nemesis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"

	"github.com/chaos-testing/chaos/plans"
)

func init() { Register[BandwidthParams]("bandwidth", Bandwidth{}) }

// Bandwidth caps what a victim sends at a rate, as a slow link would: a
// token bucket (tc's tbf) on the node's interface in its network
// namespace, that lets bursts of 10 ms of the rate by and queues the rest
// up to a second, dropping beyond. Bandwidth faults compose: a node sends
// at the lowest rate of those in force on it.
type Bandwidth struct{}

// BandwidthParams are a bandwidth fault's own fields.
type BandwidthParams struct {
	// Rate is the cap, as tc writes it: 8mbit, 500kbit, 1gbit.
	Rate string `yaml:"rate"`
}

var rateSyntax = regexp.MustCompile(`^([0-9]+)(bit|kbit|mbit|gbit)$`)

// bitsPerSecond reads a rate written as tc writes it; 0 if it is not one.
func bitsPerSecond(rate string) uint64 {
	m := rateSyntax.FindStringSubmatch(rate)
	if m == nil {
		return 0
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		return 0
	}
	return n * map[string]uint64{"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}[m[2]]
}

// Check checks the role and the rate.
func (Bandwidth) Check(e *Entry[BandwidthParams], _ Setting) error {
	if err := checkRole(e, "nodes", "leader"); err != nil {
		return err
	}
	// A rate under 10 kbit/s would make a burst of 10 ms smaller than
	// one packet.
	if r := e.Params.Rate; bitsPerSecond(r) < 10_000 {
		return plans.Fieldf("rate", "%q: expected a rate of at least 10kbit, such as 8mbit or 500kbit", r)
	}
	return nil
}

// shaping is one bandwidth fault in force.
type shaping struct {
	id      int
	bps     uint64
	victims []Process
}

// Start caps the victims' rate.
func (Bandwidth) Start(ctx context.Context, w *World, e Entry[BandwidthParams], rng *rand.Rand) (Injected, error) {
	victims := pickVictims(ctx, w, e.Schedule, rng)
	if len(victims) == 0 {
		return Injected{}, nil
	}
	s := shaping{id: w.newID(), bps: bitsPerSecond(e.Params.Rate), victims: victims}
	var targets []string
	var errs []error
	for _, v := range victims {
		targets = append(targets, fmt.Sprintf("%s sends at most %s", v.Name, e.Params.Rate))
		errs = append(errs, w.shape(context.WithoutCancel(ctx), v, s.id, s.bps))
	}
	return Injected{Targets: targets, State: s}, errors.Join(errs...)
}

// Reinstall puts the caps back on a victim that restarted, in its new
// network namespace.
func (Bandwidth) Reinstall(ctx context.Context, w *World, in Injected) error {
	s := in.State.(shaping)
	var errs []error
	for _, v := range s.victims {
		errs = append(errs, w.shape(ctx, v, s.id, s.bps))
	}
	return errors.Join(errs...)
}

// Stop takes the fault's cap off; another bandwidth fault's stays.
func (Bandwidth) Stop(ctx context.Context, w *World, in Injected) error {
	s := in.State.(shaping)
	var errs []error
	for _, v := range s.victims {
		errs = append(errs, w.unshape(ctx, v, s.id))
	}
	return errors.Join(errs...)
}

// shape holds p to bps for fault id, and sets the node's cap to the lowest
// rate held.
func (w *World) shape(ctx context.Context, p Process, id int, bps uint64) error {
	h := w.lock(p)
	defer h.mu.Unlock()
	if h.rates == nil {
		h.rates = map[int]uint64{}
	}
	h.rates[id] = bps
	return w.applyRate(ctx, p, h)
}

// unshape releases fault id's cap on p, and takes the node's cap off when
// it was the last.
func (w *World) unshape(ctx context.Context, p Process, id int) error {
	h := w.lock(p)
	defer h.mu.Unlock()
	if _, ok := h.rates[id]; !ok {
		return nil
	}
	delete(h.rates, id)
	return w.applyRate(ctx, p, h)
}

// applyRate puts p's lowest rate held on its interface, or takes the cap
// off if none is. A node down has no interface: its restart reinstalls.
func (w *World) applyRate(ctx context.Context, p Process, h *holds) error {
	if len(h.rates) == 0 {
		return inNamespace(ctx, w, p, func() error {
			return w.NetExec(ctx, p, "tc", "qdisc", "del", "dev", nodeInterface, "root")
		})
	}
	bps := slices.Min(slices.Collect(maps.Values(h.rates)))
	burst := max(bps/8/100, 16<<10) // 10 ms of the rate, at least a few packets' worth
	return inNamespace(ctx, w, p, func() error {
		return w.NetExec(ctx, p, "tc", "qdisc", "replace", "dev", nodeInterface, "root", "tbf",
			"rate", fmt.Sprintf("%dbit", bps), "burst", strconv.FormatUint(burst, 10), "latency", "1s")
	})
}

// nodeInterface is a node's interface on the run's network, as Docker
// names it in the container.
const nodeInterface = "eth0"

// Explore caps one node or the leader at 100 kbit/s, 1 or 10 Mbit/s.
func (Bandwidth) Explore(rng *rand.Rand, _ int) Entry[BandwidthParams] {
	return explored(drawRole(rng, "nodes", "leader"), BandwidthParams{Rate: drawRole(rng, "100kbit", "1mbit", "10mbit")})
}
