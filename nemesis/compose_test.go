package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
)

// steps drives faults by hand, one start or stop at a time, through a
// Schedule: what each recorded, and what reached the cluster.
type steps struct {
	t *testing.T
	s *Schedule
	c *fakeCluster
}

func newSteps(t *testing.T, c *fakeCluster) *steps {
	h, err := history.OpenAppender(filepath.Join(t.TempDir(), "h.jsonl"), history.NewClock(), history.Nemesis)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return &steps{t, NewSchedule(c, c.target(), h, nil, 1), c}
}

// bind is a fault of kind on the cluster, scheduled as s (one victim if
// s gives no count) with its own fields params (nil: none given), bound
// as a plan's fault is.
func (st *steps) bind(kind string, s plans.Schedule, params any) *Fault {
	st.t.Helper()
	if s.Count == 0 {
		s.Count = 1
	}
	return bindFault(st.t, kind, s, params, st.c.setting())
}

// onNode is a fault of kind, with no fields of its own, on node.
func (st *steps) onNode(kind, node string) *Fault {
	st.t.Helper()
	return st.bind(kind, onlyNode(node), nil)
}

// onlyNode is the schedule of a fault on node alone, by name.
func onlyNode(node string) plans.Schedule {
	return plans.Schedule{Target: "nodes", Nodes: []string{node}}
}

// start starts f as fault i and returns its targets as the history has
// them.
func (st *steps) start(i int, f *Fault) []string {
	st.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := st.s.start(ctx, i, f, plans.Rand(1, plans.FaultStream(i))); err != nil {
		st.t.Fatalf("start of fault %d (%s): %v", i, f.Kind, err)
	}
	st.s.mu.Lock()
	defer st.s.mu.Unlock()
	if a := st.s.active[i]; a != nil {
		return a.fault.Targets
	}
	return nil // nobody was hit
}

func (st *steps) stop(i int) {
	st.t.Helper()
	if err := st.s.stop(context.Background(), i); err != nil {
		st.t.Fatalf("stop of fault %d: %v", i, err)
	}
}

// acts runs f and returns what it did to the cluster.
func (st *steps) acts(f func()) []string {
	from := len(st.c.actsSince(0))
	f()
	return st.c.actsSince(from)
}

func (st *steps) want(what string, got, want []string) {
	st.t.Helper()
	if !slices.Equal(got, want) {
		st.t.Errorf("%s: %q, want %q", what, got, want)
	}
	if ill := st.c.illegalActs(); len(ill) > 0 {
		st.t.Fatalf("illegal acts: %q", ill)
	}
}

// A member removed while a kill holds it down too: whichever heals first,
// the last heal adds it back (to the cluster as it is then), restarts it
// and holds it until it has joined; with the removal alone, its own heal
// does.
func TestRemoveMemberComposesWithKills(t *testing.T) {
	st := newSteps(t, newFakeCluster(3, 0))
	st.want("removal", st.acts(func() { st.start(0, st.onNode("remove-member", "n1")) }), []string{"KILL n1", "REMOVE n1"})
	st.want("heal", st.acts(func() { st.stop(0) }), []string{"ADD n1", "RESTART n1", "JOINED n1"})
	for _, firstHealed := range []int{0, 1} {
		st.want("removal", st.acts(func() { st.start(0, st.onNode("remove-member", "n2")) }), []string{"KILL n2", "REMOVE n2"})
		st.want("kill", st.acts(func() { st.start(1, st.onNode("kill", "n2")) }), nil)
		if firstHealed == 0 {
			st.want("removal's heal", st.acts(func() { st.stop(0) }), nil)
			st.want("kill's heal", st.acts(func() { st.stop(1) }), []string{"ADD n2", "RESTART n2", "JOINED n2"})
		} else {
			st.want("kill's heal", st.acts(func() { st.stop(1) }), nil)
			st.want("removal's heal", st.acts(func() { st.stop(0) }), []string{"ADD n2", "RESTART n2", "JOINED n2"})
		}
	}
	// Joined once, a node restarts as any other.
	st.start(1, st.onNode("kill", "n2"))
	st.want("a later kill's heal", st.acts(func() { st.stop(1) }), []string{"RESTART n2"})
}

// Two pauses of one process: it is stopped once, and stays stopped until
// the last of them heals, whichever heals first.
func TestPausesCompose(t *testing.T) {
	for _, firstHealed := range []int{0, 1} {
		st := newSteps(t, newFakeCluster(0, 1))
		pause := st.bind("pause", plans.Schedule{Target: "clients"}, nil)
		var targets [2][]string
		acts := st.acts(func() { targets[0], targets[1] = st.start(0, pause), st.start(1, pause) })
		st.want("acts of two pauses", acts, []string{"STOP c0"})
		st.want("targets of the first", targets[0], []string{"c0"})
		st.want("targets of the second", targets[1], []string{"c0 (already paused)"})
		st.want("first heal", st.acts(func() { st.stop(firstHealed) }), nil)
		if s := st.c.stateOf("c0"); s != "stopped" {
			t.Errorf("c0 is %s while a pause holds it", s)
		}
		st.want("last heal", st.acts(func() { st.stop(1 - firstHealed) }), []string{"CONT c0"})
	}
}

// Two kills of one node (a kill of nodes and a kill of the leader picked
// the same one): one SIGKILL, recorded as such; the node stays down until
// the last kill heals, and is restarted once.
func TestKillsCompose(t *testing.T) {
	st := newSteps(t, newFakeCluster(3, 0))
	var second []string
	acts := st.acts(func() { st.start(0, st.onNode("kill", "n2")); second = st.start(1, st.onNode("kill", "n2")) })
	st.want("acts of two kills", acts, []string{"KILL n2"})
	st.want("targets of the second", second, []string{"n2 (already down)"})
	st.want("first heal", st.acts(func() { st.stop(0) }), nil)
	st.want("last heal", st.acts(func() { st.stop(1) }), []string{"RESTART n2"})
	if s := st.c.stateOf("n2"); s != "running" {
		t.Errorf("n2 is %s after both heals", s)
	}
}

// Two cpu faults on one node: the fewer CPUs are in force while both
// are, whichever came first; a kill between does not lift the limit (the
// container keeps it), and the last heal puts back the limit the node had
// before, read from it, here a quota of its own over a period of its own.
func TestCPUFaultsCompose(t *testing.T) {
	for _, firstHealed := range []int{0, 1} {
		c := newFakeCluster(3, 0)
		c.cpu["n1"] = containers.CPULimit{Quota: 150_000, Period: 50_000}
		st := newSteps(t, c)
		cpu := func(cpus float64) *Fault { return st.bind("cpu", onlyNode("n1"), &CPUParams{CPUs: cpus}) }
		var targets []string
		st.want("half a CPU", st.acts(func() { targets = st.start(0, cpu(0.5)) }), []string{"CPU n1 25000/50000"})
		st.want("its targets", targets, []string{"n1 (0.5 CPU)"})
		st.want("a twentieth", st.acts(func() { st.start(1, cpu(0.05)) }), []string{"CPU n1 2500/50000"})
		st.want("a kill and its heal", st.acts(func() { st.start(2, st.onNode("kill", "n1")); st.stop(2) }), []string{"KILL n1", "RESTART n1"})
		want := map[int]string{0: "CPU n1 2500/50000", 1: "CPU n1 25000/50000"}[firstHealed]
		st.want("first heal", st.acts(func() { st.stop(firstHealed) }), []string{want})
		st.want("last heal", st.acts(func() { st.stop(1 - firstHealed) }), []string{"CPU n1 150000/50000"})
		st.want("a heal again (an abort's)", st.acts(func() { st.stop(firstHealed) }), nil)
		if got := c.cpu["n1"]; got != (containers.CPULimit{Quota: 150_000, Period: 50_000}) {
			t.Errorf("n1's limit after the heals: %+v", got)
		}
	}
}

// A maintenance action runs on a node that is up; one that is down is
// left alone, and one that cannot answer (paused) is recorded as failed:
// the fault was the asking. Its heal does nothing.
func TestAdminActs(t *testing.T) {
	st := newSteps(t, newFakeCluster(3, 0))
	var targets []string
	st.want("compact", st.acts(func() { targets = st.start(0, st.onNode("compact", "n2")) }), []string{"COMPACT n2"})
	st.want("its targets", targets, []string{"n2 (did compact)"})
	st.want("its heal", st.acts(func() { st.stop(0) }), nil)
	st.start(1, st.onNode("kill", "n1"))
	st.want("defrag of a node down", st.acts(func() { targets = st.start(2, st.onNode("defrag", "n1")) }), nil)
	st.want("its targets", targets, []string{"n1 (down)"})
	st.start(3, st.onNode("pause", "n3"))
	if got := st.start(4, st.onNode("defrag", "n3")); len(got) != 1 || !strings.HasPrefix(got[0], "n3 (defrag failed: ") {
		t.Errorf("defrag of a paused node: targets %q", got)
	}
}

// A kill ends the pause of its victim: the restart comes back running, and
// the pause's heal sends nothing. A pause of a node that is down does
// nothing, and says so.
func TestKillEndsPause(t *testing.T) {
	st := newSteps(t, newFakeCluster(3, 0))
	acts := st.acts(func() { st.start(0, st.onNode("pause", "n1")); st.start(1, st.onNode("kill", "n1")) })
	st.want("pause then kill", acts, []string{"STOP n1", "KILL n1"})
	var down []string
	st.want("pause of a node down", st.acts(func() { down = st.start(2, st.onNode("pause", "n1")) }), nil)
	st.want("its targets", down, []string{"n1 (down)"})
	st.want("kill heal", st.acts(func() { st.stop(1) }), []string{"RESTART n1"})
	st.want("heals of the pauses", st.acts(func() { st.stop(0); st.stop(2) }), nil)
	if s := st.c.stateOf("n1"); s != "running" {
		t.Errorf("n1 is %s", s)
	}
	// A new pause finds it running, not "already paused".
	var again []string
	st.want("a new pause", st.acts(func() { again = st.start(3, st.onNode("pause", "n1")) }), []string{"STOP n1"})
	st.want("its targets", again, []string{"n1"})
	st.stop(3)
}

// The leader is a node that is up: while a kill holds the node that the
// others still name leader, a fault on the leader finds none.
func TestLeaderIsUp(t *testing.T) {
	c := newFakeCluster(3, 0)
	c.roles["leader"] = []string{"n1"} // as the survivors say, for a while
	st := newSteps(t, c)
	st.start(0, st.onNode("kill", "n1"))
	var got []string
	st.want("pause of the leader", st.acts(func() { got = st.start(1, st.bind("pause", plans.Schedule{Target: "leader"}, nil)) }), nil)
	if len(got) != 0 {
		t.Errorf("pause of the leader hit %q, the node down", got)
	}
	st.stop(0)
	st.want("pause of the leader once up", st.acts(func() { st.start(2, st.bind("pause", plans.Schedule{Target: "leader"}, nil)) }), []string{"STOP n1"})
	st.stop(2)
}

// grudgeOf is what each node drops by a partition's targets ("n1 -x-
// n2,n3"), addressed as the cluster addresses nodes now.
func grudgeOf(c *fakeCluster, targets ...[]string) map[string][]string {
	g := map[string][]string{}
	for _, ts := range targets {
		for _, t := range ts {
			n, drop, _ := strings.Cut(t, " -x- ")
			for _, d := range strings.Split(drop, ",") {
				g[n] = append(g[n], c.Address(Process{Name: d}))
			}
		}
	}
	for n := range g {
		slices.Sort(g[n])
		g[n] = slices.Compact(g[n])
	}
	return g
}

func wantDrops(t *testing.T, c *fakeCluster, want map[string][]string) {
	t.Helper()
	for _, n := range c.roles["nodes"] {
		if got := c.drops(n); !slices.Equal(got, want[n]) {
			t.Errorf("%s drops %q, want %q", n, got, want[n])
		}
	}
	if ill := c.illegalActs(); len(ill) > 0 {
		t.Fatalf("illegal acts: %q", ill)
	}
}

// Partitions in force together cut the union of their cuts; healing one
// leaves the other's in force, and healing both leaves no rule behind.
func TestPartitionsCompose(t *testing.T) {
	c := newFakeCluster(5, 0)
	st := newSteps(t, c)
	a := st.start(0, st.bind("partition", plans.Schedule{}, &PartitionParams{Shape: "isolate-one"}))
	b := st.start(1, st.bind("partition", plans.Schedule{}, &PartitionParams{Shape: "majorities-ring"}))
	wantDrops(t, c, grudgeOf(c, a, b))
	st.stop(0)
	wantDrops(t, c, grudgeOf(c, b))
	st.stop(1)
	wantDrops(t, c, nil)
	if n := c.chains(); n != 0 {
		t.Errorf("%d chains left after both heals", n)
	}
}

// A loss and a partition in force together: each heal takes its own rule
// away, a restart of the lossy node puts its loss back, and the heals
// leave no chain behind.
func TestLossComposesWithPartitions(t *testing.T) {
	c := newFakeCluster(3, 0)
	st := newSteps(t, c)
	a := st.start(0, st.bind("partition", plans.Schedule{}, &PartitionParams{Shape: "halves"}))
	st.start(1, st.bind("loss", onlyNode("n1"), &ShareParams{Probability: 0.25}))
	want := grudgeOf(c, a)
	want["n1"] = append(slices.Clone(want["n1"]), "random 0.25")
	slices.Sort(want["n1"])
	wantDrops(t, c, want)
	st.start(2, st.onNode("kill", "n1"))
	st.stop(2)
	st.stop(0)
	wantDrops(t, c, map[string][]string{"n1": {"random 0.25"}})
	st.stop(1)
	wantDrops(t, c, nil)
	if n := c.chains(); n != 0 {
		t.Errorf("%d chains left after the heals", n)
	}
}

// Two packet faults and a partition in force together on one node: each
// has its own chain and queue, a restart of the node binds its queues
// anew in its new namespace and puts their rules back, and the heals
// leave no chain, no queue and no mark bit taken.
func TestPacketFaultsComposeWithPartitions(t *testing.T) {
	c := newFakeCluster(3, 0)
	st := newSteps(t, c)
	a := st.start(0, st.bind("partition", plans.Schedule{}, &PartitionParams{Shape: "halves"}))
	st.start(1, st.bind("delay", onlyNode("n1"), &DelayParams{Delay: plans.Duration{Duration: time.Millisecond}, Distribution: "uniform"}))
	st.start(2, st.bind("duplicate", onlyNode("n1"), &ShareParams{Probability: 0.1}))
	want := func() map[string][]string {
		w := grudgeOf(c, a) // addressed anew after a restart
		w["n1"] = append(slices.Clone(w["n1"]), "queue 1000", "queue 1001")
		slices.Sort(w["n1"])
		return w
	}
	wantDrops(t, c, want())
	if n := c.openQueues(); n != 2 {
		t.Errorf("%d queues open, want 2", n)
	}
	st.start(3, st.onNode("kill", "n1"))
	st.stop(3)
	wantDrops(t, c, want())
	if n := c.openQueues(); n != 2 {
		t.Errorf("%d queues open after the restart, want 2 (the old namespace's closed)", n)
	}
	st.stop(1)
	st.stop(0)
	wantDrops(t, c, map[string][]string{"n1": {"queue 1001"}})
	st.stop(2)
	wantDrops(t, c, nil)
	if n := c.chains(); n != 0 {
		t.Errorf("%d chains left after the heals", n)
	}
	if n := c.openQueues(); n != 0 {
		t.Errorf("%d queues open after the heals", n)
	}
	if st.s.world.marks != 0 {
		t.Errorf("mark bits %#x still taken after the heals", st.s.world.marks)
	}
	if ill := c.illegalActs(); len(ill) != 0 {
		t.Errorf("illegal acts: %q", ill)
	}
}

// A node killed and restarted while partitions are in force comes back
// without their rules and at another address: healing the kill puts every
// partition back, addressed anew, and the heals then remove everything.
func TestKillHealReinstallsPartitions(t *testing.T) {
	c := newFakeCluster(5, 0)
	st := newSteps(t, c)
	a := st.start(0, st.bind("partition", plans.Schedule{}, &PartitionParams{Shape: "halves"}))
	b := st.start(1, st.bind("partition", plans.Schedule{Count: 2}, &PartitionParams{Shape: "isolate-one"}))
	st.start(2, st.onNode("kill", "n3"))
	st.stop(2)
	if c.Address(Process{Name: "n3"}) != "ip-n3'" {
		t.Fatal("the restarted node kept its address; the test needs a new one")
	}
	wantDrops(t, c, grudgeOf(c, a, b))
	st.stop(1)
	wantDrops(t, c, grudgeOf(c, a))
	st.stop(0)
	wantDrops(t, c, nil)
	if n := c.chains(); n != 0 {
		t.Errorf("%d chains left after the heals", n)
	}
	if got := st.s.Active(); len(got) != 0 {
		t.Errorf("active faults %v", got)
	}
}

// A partition healed while a restart's reinstall is under way is not put
// back by it: the reinstall took its list of faults in force before the
// heal.
func TestHealedPartitionStaysHealed(t *testing.T) {
	c := newFakeCluster(3, 0)
	st := newSteps(t, c)
	st.start(0, st.bind("partition", plans.Schedule{}, &PartitionParams{Shape: "halves"}))
	st.s.mu.Lock()
	listed := st.s.active[0] // as the reinstall lists it
	st.s.mu.Unlock()
	st.stop(0)
	if err := st.s.reinstallOne(context.Background(), listed); err != nil {
		t.Fatal(err)
	}
	wantDrops(t, c, nil)
	if n := c.chains(); n != 0 {
		t.Errorf("%d chains after the heal", n)
	}
}

// A node restarted (at a new address) while a partition is being
// installed, too early for the restart's reinstall to see the partition:
// the partition puts itself back, naming the node where it is now.
func TestPartitionStartedDuringARestart(t *testing.T) {
	c := newFakeCluster(2, 0)
	st := newSteps(t, c)
	st.start(0, st.onNode("kill", "n2"))
	c.before("n1", "-N", func() { st.stop(0) }) // n2 restarts as n1's rules go in
	p := st.start(1, st.bind("partition", plans.Schedule{}, &PartitionParams{Shape: "halves"}))
	if c.Address(Process{Name: "n2"}) != "ip-n2'" {
		t.Fatal("n2 was not restarted during the partition's start")
	}
	wantDrops(t, c, grudgeOf(c, p))
	st.stop(1)
	wantDrops(t, c, nil)
}

// A node restarted in the middle of a partition's heal (down as its rules
// were flushed, up again in a new namespace without the chain as the jump
// to it was to go): the heal is complete, not an error.
func TestPartitionHealedAcrossARestart(t *testing.T) {
	c := newFakeCluster(2, 0)
	st := newSteps(t, c)
	st.start(0, st.bind("partition", plans.Schedule{}, &PartitionParams{Shape: "halves"}))
	st.start(1, st.onNode("kill", "n1"))
	kill := st.s.active[1].fault.State.(*holding)
	// The kill's heal restarts n1 (its reinstall would wait for the
	// partition's heal to end).
	c.before("n1", "-D", func() {
		if err := st.s.world.restart(context.Background(), kill.held[0], kill.id); err != nil {
			t.Error(err)
		}
	})
	st.stop(0)
	wantDrops(t, c, nil)
	if n := c.chains(); n != 0 {
		t.Errorf("%d chains after the heal", n)
	}
}

// Many pauses, kills and partitions on a small cluster, on random
// overlapping schedules: the schedule runs without an error, the cluster
// sees no illegal act (a SIGKILL to a node down, a restart of a node up),
// and at the end every process runs and no rule is left.
func TestRandomFaultsComposeOnFakeCluster(t *testing.T) {
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 7))
		c := newFakeCluster(5, 2)
		c.roles["leader"] = []string{"n1"}
		var faults []*Fault
		var drawn []string // the faults as drawn, for the failure message
		for range 6 {
			f := plans.Schedule{Count: 1 + rng.IntN(2),
				FirstAfter: plans.Duration{Duration: time.Duration(rng.IntN(20)) * time.Millisecond},
				Duration:   plans.Duration{Duration: time.Duration(5+rng.IntN(30)) * time.Millisecond}}
			f.Interval.Duration = f.Duration.Duration + time.Duration(rng.IntN(20))*time.Millisecond
			var kind string
			var params any
			switch rng.IntN(3) {
			case 0:
				kind, f.Target = "pause", []string{"nodes", "leader", "clients"}[rng.IntN(3)]
			case 1:
				kind, f.Target = "kill", []string{"nodes", "leader"}[rng.IntN(2)]
			case 2:
				kind, params = "partition", &PartitionParams{Shape: Shapes[rng.IntN(len(Shapes))]}
			}
			faults = append(faults, bindFault(t, kind, f, params, c.setting()))
			drawn = append(drawn, fmt.Sprintf("%s %+v %+v", kind, f, params))
		}
		h, err := history.OpenAppender(filepath.Join(t.TempDir(), "h.jsonl"), history.NewClock(), history.Nemesis)
		if err != nil {
			t.Fatal(err)
		}
		s := NewSchedule(c, c.target(), h, faults, int64(seed))
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		err = s.Run(ctx)
		cancel()
		h.Close()
		if err != nil {
			t.Errorf("seed %d: %v\nfaults %q", seed, err, drawn)
		}
		if ill := c.illegalActs(); len(ill) > 0 {
			t.Errorf("seed %d: illegal acts %q", seed, ill)
		}
		for p, state := range c.state {
			if state != "running" {
				t.Errorf("seed %d: %s is %s after the run", seed, p, state)
			}
		}
		if n := c.chains(); n != 0 {
			t.Errorf("seed %d: %d chains left", seed, n)
		}
	}
}
