package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/plans"
)

func init() { Nemeses.Register("partition", Partition{}) }

// Partition cuts the network between nodes with iptables rules in the
// nodes' own network namespaces, in Jepsen's shapes, and heals by removing
// every rule. Clients keep reaching the node they are bound to: a partition
// splits the cluster, not a client from its node. For the isolate shapes, a
// fault's count is how many servers the isolated side holds (default 1).
type Partition struct{}

// Shapes of partition, as Jepsen names them.
var Shapes = []string{"isolate-one", "isolate-leader", "halves", "majorities-ring", "bridge"}

// CheckFault checks the shape and that the cluster is big enough for it.
func (Partition) CheckFault(p *plans.Plan, i int) error {
	f := p.Nemesis[i]
	if !slices.Contains(Shapes, f.Shape) {
		return p.Errorf(plans.FaultField(i, "shape"), "%q: expected one of %s", f.Shape, strings.Join(Shapes, ", "))
	}
	least := map[string]int{"majorities-ring": 4, "bridge": 3}[f.Shape]
	if least == 0 {
		least = 2
	}
	if strings.HasPrefix(f.Shape, "isolate-") {
		// count is the size of the side cut off: the leader or a server,
		// and count-1 servers of its kind.
		least = f.Count + 1
	}
	if p.Target.Nodes < least {
		return p.Errorf(plans.FaultField(i, "shape"), "%s needs at least %d nodes; the target has %d", f.Shape, least, p.Target.Nodes)
	}
	return nil
}

// Start computes the shape's grudge (which node drops traffic from which)
// and installs it.
func (Partition) Start(ctx context.Context, env Env, f plans.Fault, rng *rand.Rand) (Injected, error) {
	nodes := env.Candidates("nodes")
	slices.SortFunc(nodes, func(a, b Process) int { return strings.Compare(a.Name, b.Name) })
	var isolated []string
	switch f.Shape {
	case "isolate-leader":
		ls := pickVictims(ctx, env, plans.Fault{Target: "leader", Count: 1}, rng)
		if len(ls) == 0 {
			return Injected{}, nil // no leader now: nothing to isolate
		}
		isolated = isolate(nodes, ls[0], f.Count, rng)
	case "isolate-one":
		servers := slices.DeleteFunc(slices.Clone(nodes), func(p Process) bool { return p.Kind != "" })
		isolated = isolate(nodes, servers[rng.IntN(len(servers))], f.Count, rng)
	}
	grudge := Grudge(f.Shape, names(nodes), isolated, rng)
	cut := partitionState{nodes: nodes, grudge: grudge}
	return Injected{Targets: describe(grudge), State: cut}, cut.install(context.WithoutCancel(ctx), env)
}

// isolate is the side an isolate shape cuts off: first, and count-1 other
// nodes of its kind drawn with rng (the primary and a replica, not a
// sentinel).
func isolate(nodes []Process, first Process, count int, rng *rand.Rand) []string {
	var others []string
	for _, n := range nodes {
		if n.Kind == first.Kind && n.Name != first.Name {
			others = append(others, n.Name)
		}
	}
	rng.Shuffle(len(others), func(a, b int) { others[a], others[b] = others[b], others[a] })
	return append([]string{first.Name}, others[:min(max(count-1, 0), len(others))]...)
}

// partitionState is a partition in force: the nodes and who drops whom.
type partitionState struct {
	nodes  []Process
	grudge map[string][]string
}

// install adds the DROP rules, addressing each node where it is now.
func (c partitionState) install(ctx context.Context, env Env) error {
	byName := map[string]Process{}
	for _, n := range c.nodes {
		byName[n.Name] = n
	}
	var errs []error
	for _, n := range c.nodes {
		drop := c.grudge[n.Name]
		if len(drop) == 0 {
			continue
		}
		var ips []string
		for _, d := range drop {
			ips = append(ips, env.Address(byName[d]))
		}
		errs = append(errs, env.NetExec(ctx, n, "iptables", "-w", "-A", "INPUT", "-s", strings.Join(ips, ","), "-j", "DROP"))
	}
	return errors.Join(errs...)
}

// Reinstall puts a partition back after a node restarted: the node came
// back with a network namespace of its own, without its rules, and maybe
// at another address that the others' rules do not name.
func (p Partition) Reinstall(ctx context.Context, env Env, in Injected) error {
	if err := p.Stop(ctx, env, in); err != nil {
		return err
	}
	return in.State.(partitionState).install(ctx, env)
}

// Stop removes every rule the partition added, on every node.
func (Partition) Stop(ctx context.Context, env Env, in Injected) error {
	var errs []error
	for _, n := range in.State.(partitionState).nodes {
		errs = append(errs, env.NetExec(ctx, n, "iptables", "-w", "-F", "INPUT"))
	}
	return errors.Join(errs...)
}

// Grudge says, for a shape, which nodes each node drops traffic from.
// nodes must be sorted; isolated is the side the isolate shapes cut off.
// Every grudge is symmetric except that a bridge node drops nothing.
func Grudge(shape string, nodes []string, isolated []string, rng *rand.Rand) map[string][]string {
	ring := slices.Clone(nodes)
	rng.Shuffle(len(ring), func(a, b int) { ring[a], ring[b] = ring[b], ring[a] })
	switch shape {
	case "isolate-one", "isolate-leader":
		return cut(isolated, slices.DeleteFunc(slices.Clone(nodes), func(n string) bool { return slices.Contains(isolated, n) }))
	case "halves":
		return cut(ring[:len(ring)/2], ring[len(ring)/2:])
	case "bridge":
		// Two halves that only the middle node joins.
		mid := len(ring) / 2
		return cut(ring[:mid], ring[mid+1:])
	case "majorities-ring":
		// Each node sees its neighbours within a majority's half-width on
		// the ring: a majority, and no two nodes see the same one.
		n := len(ring)
		reach := (n/2 + 1) / 2 // 2*reach+1 nodes, the node included, make a majority
		g := map[string][]string{}
		for i, a := range ring {
			for j, b := range ring {
				if d := min((i-j+n)%n, (j-i+n)%n); d > reach {
					g[a] = append(g[a], b)
				}
			}
			slices.Sort(g[a])
		}
		return g
	}
	panic("nemesis: unknown partition shape " + shape) // CheckFault refused it
}

// cut makes every node of a drop every node of b, and the other way round.
func cut(a, b []string) map[string][]string {
	g := map[string][]string{}
	for _, x := range a {
		g[x] = append(g[x], b...)
		slices.Sort(g[x])
	}
	for _, y := range b {
		g[y] = append(g[y], a...)
		slices.Sort(g[y])
	}
	return g
}

// describe renders a grudge for the history: "n1 -x- n3,n4" means n1 drops
// what n3 and n4 send it.
func describe(g map[string][]string) []string {
	var out []string
	for n, drop := range g {
		if len(drop) > 0 {
			out = append(out, fmt.Sprintf("%s -x- %s", n, strings.Join(drop, ",")))
		}
	}
	slices.Sort(out)
	return out
}
