package plans

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Schedule is the fields every fault has: whom it hits and when. It is
// injected first after FirstAfter, then every Interval, each time lasting
// Duration.
type Schedule struct {
	// Target is the role whose processes are picked: nodes (every
	// server of the cluster, a Redis Sentinel's sentinels too), leader,
	// clients, holder (a client holding the lock) or all (every node at
	// once); each kind of fault says which it accepts.
	Target string `yaml:"target"`
	Count  int    `yaml:"count"`
	// Nodes, if given, are the only nodes (by name: n1, n2, ...) a fault
	// on nodes may pick its victims from; a fault on the leader waits
	// until the leader is one of them.
	Nodes      []string `yaml:"nodes"`
	FirstAfter Duration `yaml:"first_after"`
	Interval   Duration `yaml:"interval"`
	Duration   Duration `yaml:"duration"`
	// Times is how many times the fault is injected; 0, until the run
	// ends. A replay injects each fault it recorded once (times 1).
	Times int `yaml:"times,omitempty"`
}

// Limits are what a plan's faults are checked against: its time limit,
// and what its target and workload have.
type Limits struct {
	TimeLimit time.Duration
	// Nodes and Clients are how many the target and the workload have.
	Nodes, Clients int
	// Workload is the workload's kind, and Holders whether its clients
	// hold something (a lock, the leadership) that role holder picks.
	Workload string
	Holders  bool
}

// Resolve checks the schedule of a fault against l and returns it with
// its defaults: count 1, an interval of the duration. A *FieldError names
// the field at fault, in the fault's section.
func (s Schedule) Resolve(l Limits) (Schedule, error) {
	if s.Count == 0 {
		s.Count = 1
	}
	if s.Interval.Duration == 0 {
		s.Interval = s.Duration
	}
	switch {
	case s.Count < 1:
		return s, Fieldf("count", "%d: expected at least 1", s.Count)
	case s.Target == "clients" && s.Count > l.Clients:
		return s, Fieldf("count", "%d: the workload has only %d clients", s.Count, l.Clients)
	case s.Duration.Duration <= 0:
		return s, Fieldf("duration", "missing or not positive; expected a duration such as 5s")
	case s.Times < 0:
		return s, Fieldf("times", "%d: expected 0 (until the run ends) or more", s.Times)
	case s.Interval.Duration < s.Duration.Duration:
		return s, Fieldf("interval", "%s: shorter than the fault's duration (%s); faults of one kind do not overlap", s.Interval, s.Duration)
	case s.FirstAfter.Duration < 0 || s.FirstAfter.Duration > l.TimeLimit-s.Duration.Duration:
		return s, Fieldf("first_after", "%s: the first fault (lasting %s) must end within the time limit (%s)", s.FirstAfter, s.Duration, Duration{l.TimeLimit})
	case s.Target == "holder" && !l.Holders:
		return s, Fieldf("target", "holder: the clients of workload %s hold nothing", l.Workload)
	case s.Target == "nodes" && s.Count > l.Nodes:
		return s, Fieldf("count", "%d: the target has only %d nodes", s.Count, l.Nodes)
	}
	return s, s.checkNodes(l)
}

// checkNodes checks that a fault's nodes are nodes the target has,
// enough for its count, on a fault whose victims are nodes or the leader
// (which it hits only while the leader is one of them), or clients the
// workload has (c0, c1, ...) on a fault whose victims are clients.
func (s Schedule) checkNodes(l Limits) error {
	if len(s.Nodes) == 0 {
		return nil
	}
	prefix, first, last := "n", 1, l.Nodes
	switch s.Target {
	case "nodes", "leader":
	case "clients":
		prefix, first, last = "c", 0, l.Clients-1
	default:
		return Fieldf("nodes", "only a fault with target nodes, leader or clients picks among given names (target is %q)", s.Target)
	}
	for _, n := range s.Nodes {
		k, err := strconv.Atoi(strings.TrimPrefix(n, prefix))
		if !strings.HasPrefix(n, prefix) || err != nil || k < first || k > last {
			return Fieldf("nodes", "%q: expected names %s%d to %s%d", n, prefix, first, prefix, last)
		}
	}
	if s.Count > len(s.Nodes) {
		return Fieldf("count", "%d: more than the %d given", s.Count, len(s.Nodes))
	}
	return nil
}

// DefaultClients is how many client processes a workload runs when its
// plan gives no number.
const DefaultClients = 3

// ClientCount is the number of clients the workload runs, checked.
func (w Workload) ClientCount() (int, error) {
	n := w.Clients
	if n == 0 {
		n = DefaultClients
	}
	if n < 1 {
		return n, Fieldf("clients", "%d: expected at least 1", n)
	}
	return n, nil
}

// FaultPath is the path of the plan's i-th fault, for Errorf.
func FaultPath(i int) string { return fmt.Sprintf("nemesis[%d]", i) }
