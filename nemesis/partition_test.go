package nemesis

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/chaos-testing/chaos/plans"
)

func nodeNames(n int) []string {
	var ns []string
	for i := 1; i <= n; i++ {
		ns = append(ns, fmt.Sprintf("n%d", i))
	}
	return ns
}

// sees is the set of nodes a node still hears from, itself included.
func sees(g map[string][]string, nodes []string, n string) []string {
	return slices.DeleteFunc(slices.Clone(nodes), func(x string) bool { return slices.Contains(g[n], x) })
}

func symmetric(t *testing.T, g map[string][]string) {
	t.Helper()
	for a, drops := range g {
		for _, b := range drops {
			if !slices.Contains(g[b], a) {
				t.Errorf("%s drops %s but %s does not drop %s: %v", a, b, b, a, g)
			}
		}
	}
}

func TestGrudgeShapes(t *testing.T) {
	for _, n := range []int{3, 5} {
		nodes := nodeNames(n)
		rng := func() *rand.Rand { return rand.New(rand.NewPCG(7, uint64(n))) }
		t.Run(fmt.Sprintf("isolate-one/%d", n), func(t *testing.T) {
			g := Grudge("isolate-one", nodes, []string{"n1"}, rng())
			symmetric(t, g)
			isolated := 0
			for _, x := range nodes {
				if len(g[x]) == n-1 {
					isolated++
				} else if len(g[x]) != 1 {
					t.Errorf("%s drops %v; want the isolated node only", x, g[x])
				}
			}
			if isolated != 1 {
				t.Errorf("%d isolated nodes, want 1: %v", isolated, g)
			}
		})
		t.Run(fmt.Sprintf("isolate-leader/%d", n), func(t *testing.T) {
			g := Grudge("isolate-leader", nodes, []string{"n2"}, rng())
			symmetric(t, g)
			if s := sees(g, nodes, "n2"); !reflect.DeepEqual(s, []string{"n2"}) {
				t.Errorf("leader n2 still hears %v, want only itself", s)
			}
		})
		t.Run(fmt.Sprintf("halves/%d", n), func(t *testing.T) {
			g := Grudge("halves", nodes, nil, rng())
			symmetric(t, g)
			minority := 0
			for _, x := range nodes {
				if len(sees(g, nodes, x)) <= n/2 {
					minority++
				}
			}
			if minority != n/2 {
				t.Errorf("%d nodes in the minority, want %d: %v", minority, n/2, g)
			}
		})
		t.Run(fmt.Sprintf("bridge/%d", n), func(t *testing.T) {
			g := Grudge("bridge", nodes, nil, rng())
			symmetric(t, g)
			var bridges []string
			for _, x := range nodes {
				if len(g[x]) == 0 {
					bridges = append(bridges, x)
				}
			}
			if len(bridges) != 1 {
				t.Fatalf("bridge nodes %v, want exactly one: %v", bridges, g)
			}
			for _, x := range nodes {
				if x != bridges[0] && len(sees(g, nodes, x)) != n/2+1 {
					t.Errorf("%s sees %v; want its half and the bridge", x, sees(g, nodes, x))
				}
			}
		})
	}
	t.Run("majorities-ring/5", func(t *testing.T) {
		nodes := nodeNames(5)
		g := Grudge("majorities-ring", nodes, nil, rand.New(rand.NewPCG(1, 2)))
		symmetric(t, g)
		seen := map[string]bool{}
		for _, x := range nodes {
			s := sees(g, nodes, x)
			if len(s) != 3 {
				t.Errorf("%s sees %v; want a bare majority of 3", x, s)
			}
			if key := fmt.Sprint(s); seen[key] {
				t.Errorf("two nodes see the same majority %v", s)
			} else {
				seen[key] = true
			}
		}
	})
}

// TestOneWayIsolation: a one-way isolation has the side cut off drop what
// the others send, and nobody drop what it sends.
func TestOneWayIsolation(t *testing.T) {
	nodes := nodeNames(5)
	g := oneWay(Grudge("isolate-leader", nodes, []string{"n2", "n4"}, rand.New(rand.NewPCG(1, 1))), []string{"n2", "n4"})
	want := map[string][]string{"n2": {"n1", "n3", "n5"}, "n4": {"n1", "n3", "n5"}}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("grudge %v; want %v", g, want)
	}
	for _, c := range []struct {
		shape string
		ok    bool
	}{{"isolate-one", true}, {"isolate-leader", true}, {"halves", false}, {"majorities-ring", false}} {
		_, err := bind("partition", plans.Schedule{Count: 1}, &PartitionParams{Shape: c.shape, OneWay: true}, Setting{Nodes: 5})
		if (err == nil) != c.ok {
			t.Errorf("one-way %s: %v; want accepted %v", c.shape, err, c.ok)
		}
	}
}

func TestGrudgeSameSeedSameCut(t *testing.T) {
	nodes := nodeNames(5)
	for _, shape := range Shapes {
		a := Grudge(shape, nodes, []string{"n1"}, rand.New(rand.NewPCG(3, 4)))
		b := Grudge(shape, nodes, []string{"n1"}, rand.New(rand.NewPCG(3, 4)))
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: one seed gave %v and %v", shape, a, b)
		}
	}
}

// TestIsolateTakesServersOfTheLeadersKind: the primary and one replica are
// cut off, never a sentinel with them; count 1 is the leader alone.
func TestIsolateTakesServersOfTheLeadersKind(t *testing.T) {
	nodes := []Process{{Name: "n1"}, {Name: "n2"}, {Name: "n3"}, {Name: "s1", Kind: "sentinel"}, {Name: "s2", Kind: "sentinel"}, {Name: "s3", Kind: "sentinel"}}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		got := isolate(nodes, nodes[2], 2, rng)
		if len(got) != 2 || got[0] != "n3" || (got[1] != "n1" && got[1] != "n2") {
			t.Fatalf("seed %d: isolated %v; want n3 and one of n1, n2", seed, got)
		}
		g := Grudge("isolate-leader", names(nodes), got, rng)
		symmetric(t, g)
		if s := sees(g, names(nodes), "s1"); slices.Contains(s, "n3") || !slices.Contains(s, "s2") {
			t.Fatalf("seed %d: s1 hears %v", seed, s)
		}
	}
	if got := isolate(nodes, nodes[0], 1, rand.New(rand.NewPCG(1, 1))); !reflect.DeepEqual(got, []string{"n1"}) {
		t.Errorf("count 1 isolated %v", got)
	}
	if got := isolate(nodes, nodes[0], 9, rand.New(rand.NewPCG(1, 1))); len(got) != 3 {
		t.Errorf("count 9 of 3 servers isolated %v", got)
	}
}
