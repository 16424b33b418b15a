package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/chaos-testing/chaos/nfqueue"
)

func init() { Register[ShareParams]("corrupt", Corrupt{}) }

// Corrupt flips one random bit in a share of the packets that reach a
// victim, past the IP header, as netem's corrupt does on the wire: the
// receiver's checksum (TCP, UDP) finds most of them, and the sender must
// send again. (Bits flipped in a disk's files are bitflip's.)
type Corrupt struct{ queuedNemesis }

// Check checks the role and the probability.
func (Corrupt) Check(e *Entry[ShareParams], _ Setting) error { return checkShare(e) }

// Start queues what reaches the victims and garbles some of it.
func (Corrupt) Start(ctx context.Context, w *World, e Entry[ShareParams], rng *rand.Rand) (Injected, error) {
	return startQueued(ctx, w, pickVictims(ctx, w, e.Schedule, rng), corruptFate(e.Params), rng)
}

type corruptFate ShareParams

func (c corruptFate) fate(p nfqueue.Packet, rng *rand.Rand) fate {
	if rng.Float64() >= c.Probability || len(p.Payload) == 0 {
		return fate{}
	}
	from := 0
	if p.Payload[0]>>4 == 4 {
		from = int(p.Payload[0]&0x0f) * 4 // past the IPv4 header
	}
	if from >= len(p.Payload) {
		return fate{}
	}
	b := append([]byte(nil), p.Payload...)
	at := from + rng.IntN(len(b)-from)
	b[at] ^= 1 << rng.IntN(8)
	return fate{payload: b}
}

func (c corruptFate) describe() string {
	return fmt.Sprintf("gets %s of what reaches it with a bit flipped", percent(c.Probability))
}

// Explore garbles 5% to 30% of what reaches one node or the leader.
func (Corrupt) Explore(rng *rand.Rand, _ int) Entry[ShareParams] {
	return explored(drawRole(rng, "nodes", "leader"), ShareParams{Probability: drawShare(rng, 0.3)})
}
