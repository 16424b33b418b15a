package nemesis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/plans"
)

func init() { Register[PartitionParams]("partition", Partition{}) }

// Partition cuts the network between nodes with iptables rules in the
// nodes' own network namespaces, in Jepsen's shapes, each in a chain of
// its own (chainState): partitions in force at once cut the union of
// their cuts, and a heal removes its own chain alone. Clients keep
// reaching the node they are bound to: a partition splits the cluster,
// not a client from its node, but for the one partition that cuts a
// client off: isolate-one with target holder, which isolates the client
// holding the lock from every node. For the isolate shapes, a fault's
// count is how many servers the isolated side holds (default 1).
type Partition struct{}

// PartitionParams are a partition's own fields.
type PartitionParams struct {
	// Shape is one of Shapes.
	Shape string `yaml:"shape"`
	// OneWay, for the isolate shapes, cuts one direction only: the side
	// cut off hears nothing from the others, while what it sends still
	// reaches them (a leader whose heartbeats arrive but whose
	// followers' answers do not).
	OneWay bool `yaml:"one_way"`
	// Grudge, for the shape grudge, is the cut itself: which node (or
	// client) drops the traffic of which, by name, as the history records
	// a partition ("n1 -x- n2,n3"). A replay cuts what a run recorded.
	Grudge map[string][]string `yaml:"grudge,omitempty"`
}

// Shapes of partition, as Jepsen names them.
var Shapes = []string{"isolate-one", "isolate-leader", "halves", "majorities-ring", "bridge"}

// grudgeShape is the shape of a partition that names its cut (Grudge).
const grudgeShape = "grudge"

// Check checks the shape and that the cluster is big enough for it.
func (Partition) Check(e *Entry[PartitionParams], s Setting) error {
	pp := e.Params
	shape := pp.Shape
	if shape == grudgeShape || len(pp.Grudge) > 0 {
		return checkGrudge(e, s)
	}
	if !slices.Contains(Shapes, shape) {
		return plans.Fieldf("shape", "%q: expected one of %s, or grudge", shape, strings.Join(Shapes, ", "))
	}
	least := map[string]int{"majorities-ring": 4, "bridge": 3}[shape]
	if least == 0 {
		least = 2
	}
	if strings.HasPrefix(shape, "isolate-") {
		// count is the size of the side cut off: the leader or a server,
		// and count-1 servers of its kind.
		least = e.Count + 1
	}
	if pp.OneWay && !strings.HasPrefix(shape, "isolate-") {
		return plans.Fieldf("one_way", "a %s partition has no side cut off: only the isolate shapes cut one way", shape)
	}
	if e.Target != "" {
		if e.Target != "holder" || shape != "isolate-one" || e.Count > 1 {
			return plans.Fieldf("target", "%q: a partition targets nodes (no target), or the holder alone with shape isolate-one", e.Target)
		}
		least = 1
	}
	if s.Nodes < least {
		return plans.Fieldf("shape", "%s needs at least %d nodes; the target has %d", shape, least, s.Nodes)
	}
	return nil
}

// Start computes the shape's grudge (which node drops traffic from which)
// and installs it.
func (Partition) Start(ctx context.Context, w *World, e Entry[PartitionParams], rng *rand.Rand) (Injected, error) {
	nodes := w.Candidates(ctx, "nodes")
	slices.SortFunc(nodes, func(a, b Process) int { return strings.Compare(a.Name, b.Name) })
	var isolated []string
	switch e.Params.Shape {
	case grudgeShape:
		return cutGrudge(ctx, w, nodes, e.Params.Grudge)
	case "isolate-leader":
		ls := pickVictims(ctx, w, plans.Schedule{Target: "leader", Count: 1}, rng)
		if len(ls) == 0 {
			return Injected{}, nil // no leader now: nothing to isolate
		}
		isolated = isolate(nodes, ls[0], e.Count, rng)
	case "isolate-one":
		if e.Target == "holder" {
			return cutHolder(ctx, w, e, rng, nodes)
		}
		servers := slices.DeleteFunc(slices.Clone(nodes), func(p Process) bool { return p.Kind != "" })
		isolated = isolate(nodes, servers[rng.IntN(len(servers))], e.Count, rng)
	}
	return cutOff(ctx, w, e.Params, rng, nodes, isolated)
}

// Pin cuts what the history recorded ("n1 -x- n2,n3" for each node that
// dropped traffic), as a grudge: the same cut, whoever leads by then.
func (Partition) Pin(f Entry[PartitionParams], targets []string) (Entry[PartitionParams], error) {
	if len(targets) == 0 {
		return f, ErrNobodyHit
	}
	grudge := map[string][]string{}
	for _, t := range targets {
		n, drop, ok := strings.Cut(t, " -x- ")
		if !ok || n == "" || drop == "" {
			return f, fmt.Errorf("partition target %q: expected NODE -x- NODE,NODE", t)
		}
		grudge[n] = strings.Split(drop, ",")
	}
	f.Target, f.Count, f.Nodes = "", 1, nil
	f.Params = PartitionParams{Shape: grudgeShape, Grudge: grudge}
	return f, nil
}

// cutHolder cuts the client holding the lock off from every node. As with
// pauseHolders, the client picked may release in the moment before its
// cut lands (tens of milliseconds): once the rules are in and what it
// wrote has been read, a cut that caught no holder is lifted at once and
// a holder is picked again, until one is caught or ctx ends.
func cutHolder(ctx context.Context, w *World, f Entry[PartitionParams], rng *rand.Rand, nodes []Process) (Injected, error) {
	for {
		hs := pickVictims(ctx, w, f.Schedule, rng)
		if len(hs) == 0 {
			return Injected{}, nil // nobody held the lock
		}
		all := append(slices.Clone(nodes), hs[0])
		slices.SortFunc(all, func(a, b Process) int { return strings.Compare(a.Name, b.Name) })
		in, err := cutOff(ctx, w, f.Params, rng, all, []string{hs[0].Name})
		if err != nil {
			return in, err // Stop removes what went in
		}
		time.Sleep(followLag)
		if slices.Contains(names(w.Candidates(ctx, "holder")), hs[0].Name) {
			return in, nil
		}
		if err := in.State.(chainState).remove(context.WithoutCancel(ctx), w); err != nil || ctx.Err() != nil {
			return Injected{}, err
		}
	}
}

// cutOff installs the partition of pp's shape among nodes, with isolated
// the side an isolate shape cuts off.
func cutOff(ctx context.Context, w *World, pp PartitionParams, rng *rand.Rand, nodes []Process, isolated []string) (Injected, error) {
	grudge := Grudge(pp.Shape, names(nodes), isolated, rng)
	if pp.OneWay {
		grudge = oneWay(grudge, isolated)
	}
	return install(ctx, w, nodes, grudge)
}

// cutGrudge installs a cut named process by process; the clients it names
// are found among the clients. A name the cluster lacks is an error.
func cutGrudge(ctx context.Context, w *World, nodes []Process, grudge map[string][]string) (Injected, error) {
	named := map[string]bool{}
	for n, drop := range grudge {
		named[n] = true
		for _, d := range drop {
			named[d] = true
		}
	}
	for _, c := range w.Candidates(ctx, "clients") {
		if named[c.Name] {
			nodes = append(nodes, c)
		}
	}
	for _, p := range nodes {
		delete(named, p.Name)
	}
	if len(named) > 0 {
		return Injected{}, fmt.Errorf("the partition's grudge names %s, which the cluster does not have", strings.Join(slices.Sorted(maps.Keys(named)), ", "))
	}
	slices.SortFunc(nodes, func(a, b Process) int { return strings.Compare(a.Name, b.Name) })
	return install(ctx, w, nodes, grudge)
}

// install puts grudge in force among nodes, in a chain of its own.
func install(ctx context.Context, w *World, nodes []Process, grudge map[string][]string) (Injected, error) {
	byName := map[string]Process{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	cut := chainState{chain: fmt.Sprintf("chaos-partition-%d", w.newID()), nodes: nodes,
		match: func(w *World, n Process) []string {
			drop := grudge[n.Name]
			if len(drop) == 0 {
				return nil
			}
			var ips []string
			for _, d := range drop {
				ips = append(ips, w.Address(byName[d]))
			}
			return []string{"-s", strings.Join(ips, ",")}
		}}
	return Injected{Targets: describe(grudge), State: cut}, cut.install(context.WithoutCancel(ctx), w, false)
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

// chainState is a network fault in force as iptables rules in the nodes'
// own network namespaces: on each node it touches, a chain of its own,
// which INPUT jumps to, holding one DROP rule. Faults in force at once
// drop the union of what each drops, and a heal removes its own chain
// alone.
type chainState struct {
	chain string
	nodes []Process
	// match is the match of node n's rule, nil for a node the fault
	// leaves alone; it addresses other nodes where they are now.
	match func(w *World, n Process) []string
	// target is what the rule does with what it matches: DROP if nil.
	target []string
}

// install puts the rules in the fault's chain on every node it touches.
// again says that the rules may be there already (a node restarted while
// the fault was in force): a node that has the chain gets its rule anew,
// one that has not (the restarted one, in a namespace of its own) the
// chain too.
func (c chainState) install(ctx context.Context, w *World, again bool) error {
	var errs []error
	for _, n := range c.nodes {
		match := c.match(w, n)
		if match == nil {
			continue
		}
		target := c.target
		if target == nil {
			target = []string{"DROP"}
		}
		rule := append(append(append([]string{"-A", c.chain}, match...), "-j"), target...)
		errs = append(errs, inNamespace(ctx, w, n, func() error {
			if again {
				if err := iptables(ctx, w, n, "-F", c.chain); err == nil {
					return iptables(ctx, w, n, rule...)
				} else if !noChain(err) {
					return err
				}
			}
			return iptablesSteps(ctx, w, n, []string{"-N", c.chain}, rule, []string{"-I", "INPUT", "-j", c.chain})
		}))
	}
	return errors.Join(errs...)
}

// remove takes the fault's chain, and the jump to it, off every node that
// has it: first its rule, so that traffic flows at once.
func (c chainState) remove(ctx context.Context, w *World) error {
	var errs []error
	for _, n := range c.nodes {
		if c.match(w, n) == nil {
			continue
		}
		errs = append(errs, inNamespace(ctx, w, n, func() error {
			if err := iptables(ctx, w, n, "-F", c.chain); noChain(err) {
				return nil // restarted since: its namespace never had the chain
			} else if err != nil {
				return err
			}
			return iptablesSteps(ctx, w, n, []string{"-D", "INPUT", "-j", c.chain}, []string{"-X", c.chain})
		}))
	}
	return errors.Join(errs...)
}

// Reinstall puts a partition back after a node restarted: the node came
// back with a network namespace of its own, without the chain, and maybe
// at another address that the others' rules do not name.
func (Partition) Reinstall(ctx context.Context, w *World, in Injected) error {
	return in.State.(chainState).install(ctx, w, true)
}

// Stop removes the partition's chains.
func (Partition) Stop(ctx context.Context, w *World, in Injected) error {
	return in.State.(chainState).remove(ctx, w)
}

// inNamespace runs steps, iptables commands in node n's network namespace,
// each of which enters the namespace anew. A node killed or restarted
// meanwhile has had some steps run in a namespace now gone and the others
// in a new one, which no longer holds what the first ones did: their
// failure is no error, and the restart's reinstall sets the node right.
func inNamespace(ctx context.Context, w *World, n Process, steps func() error) error {
	penv, ok := w.Env.(ProcessEnv)
	if !ok {
		return steps()
	}
	before, berr := penv.HostPID(ctx, n)
	err := steps()
	if err == nil {
		return nil
	}
	after, aerr := penv.HostPID(ctx, n)
	if errors.Is(berr, containers.ErrNotRunning) || errors.Is(aerr, containers.ErrNotRunning) || (berr == nil && aerr == nil && before != after) {
		return nil
	}
	return err
}

// iptables runs iptables with args in node n's network namespace.
func iptables(ctx context.Context, w *World, n Process, args ...string) error {
	return w.NetExec(ctx, n, append([]string{"iptables", "-w"}, args...)...)
}

// iptablesSteps runs iptables with each of steps' arguments in turn, until
// one fails.
func iptablesSteps(ctx context.Context, w *World, n Process, steps ...[]string) error {
	for _, args := range steps {
		if err := iptables(ctx, w, n, args...); err != nil {
			return err
		}
	}
	return nil
}

// checkGrudge checks a partition of shape grudge: a cut named node by
// node, among the target's nodes and the workload's clients, and nothing
// else that picks victims.
func checkGrudge(e *Entry[PartitionParams], s Setting) error {
	pp := e.Params
	switch {
	case pp.Shape != grudgeShape:
		return plans.Fieldf("grudge", "given for shape %q; a grudge is the cut of shape grudge", pp.Shape)
	case len(pp.Grudge) == 0:
		return plans.Fieldf("grudge", "missing; shape grudge names its cut, such as {n1: [n2, n3]}")
	case pp.OneWay || e.Target != "":
		return plans.Fieldf("shape", "grudge: the grudge names the cut; it takes no target and no one_way")
	}
	// Servers of other kinds than the data's (Redis's sentinels, s1, s2,
	// ...) have names of their own, which the cut is checked against
	// when it starts.
	valid := func(name string) bool {
		k, err := strconv.Atoi(name[min(1, len(name)):])
		switch {
		case err != nil || len(name) < 2 || name[0] < 'a' || name[0] > 'z':
			return false
		case name[0] == 'n':
			return k >= 1 && k <= s.Nodes
		case name[0] == 'c':
			return k >= 0 && k < s.Clients
		}
		return k >= 1
	}
	for _, n := range slices.Sorted(maps.Keys(pp.Grudge)) {
		for _, m := range append([]string{n}, pp.Grudge[n]...) {
			if !valid(m) {
				return plans.Fieldf("grudge", "%q: expected node names n1 to n%d, client names c0 to c%d, or names of the target's other servers (s1, ...)", m, s.Nodes, s.Clients-1)
			}
		}
	}
	return nil
}

// noChain reports whether iptables -F failed because the chain does not
// exist: its exit status is then 1 ("No chain/target/match by that name").
func noChain(err error) bool {
	var exit interface{ ExitCode() int }
	return errors.As(err, &exit) && exit.ExitCode() == 1
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
	panic("nemesis: unknown partition shape " + shape) // Check refused it
}

// oneWay keeps, of a grudge, what the side nodes drop: they hear nothing
// from the others, who still hear them.
func oneWay(g map[string][]string, side []string) map[string][]string {
	out := map[string][]string{}
	for _, n := range side {
		out[n] = g[n]
	}
	return out
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

// Explore draws a shape the cluster is big enough for, one way or not
// for the isolate shapes.
func (Partition) Explore(rng *rand.Rand, nodes int) Entry[PartitionParams] {
	shapes := slices.DeleteFunc(slices.Clone(Shapes), func(s string) bool {
		return (s == "majorities-ring" && nodes < 4) || (s == "bridge" && nodes < 3)
	})
	shape := shapes[rng.IntN(len(shapes))]
	return explored("", PartitionParams{Shape: shape, OneWay: strings.HasPrefix(shape, "isolate-") && rng.IntN(2) == 0})
}
