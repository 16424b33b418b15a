package set

import (
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/plans"
)

// TestPadRoundTrip: a padded message has the size asked for, at least its
// number's, and gives its number back.
func TestPadRoundTrip(t *testing.T) {
	for _, c := range []struct {
		v          int64
		size, want int
	}{{7, 0, 1}, {4_000_000_123, 5, 10}, {4_000_000_123, 11, 10}, {4_000_000_123, 12, 12}, {42, 4096, 4096}} {
		b := pad(c.v, c.size)
		if len(b) != c.want {
			t.Errorf("pad(%d, %d) is %d bytes; want %d", c.v, c.size, len(b), c.want)
		}
		if v, err := unpad(b); err != nil || v != c.v {
			t.Errorf("unpad(pad(%d, %d)) = %d, %v", c.v, c.size, v, err)
		}
	}
	if _, err := unpad([]byte("x1 ...")); err == nil {
		t.Error("unpad of a message that does not begin with a number: no error")
	}
}

// TestPayloadRefused: a payload for a backend that stores numbers alone,
// or out of range, is refused at the field.
func TestPayloadRefused(t *testing.T) {
	for _, c := range []struct {
		w       Workload
		payload int
	}{{Workload{}, 100}, {Workload{Pads: true}, -1}, {Workload{Pads: true}, 1<<20 + 1}} {
		p := &plans.Plan{File: "p.yaml", Workload: plans.Workload{Kind: "some-set", Spec: &Params{Payload: c.payload}}}
		if err := c.w.CheckPlan(p); err == nil || !strings.Contains(err.Error(), "workload.payload") {
			t.Errorf("payload %d, pads %v: %v; want an error at workload.payload", c.payload, c.w.Pads, err)
		}
	}
	p := &plans.Plan{File: "p.yaml", Workload: plans.Workload{Kind: "nats-stream", Spec: &Params{Payload: 4096}}}
	if err := (Workload{Pads: true}).CheckPlan(p); err != nil {
		t.Errorf("payload 4096 on a backend that pads: %v", err)
	}
}

// TestReplicasRefused: replicas for a backend that does not replicate,
// or more than the cluster's servers or the backend's limit, are refused
// at the field; 3 of 5 is taken.
func TestReplicasRefused(t *testing.T) {
	for _, c := range []struct {
		w               Workload
		replicas, nodes int
	}{{Workload{}, 3, 5}, {Workload{Replicates: true}, -1, 5}, {Workload{Replicates: true}, 4, 3}, {Workload{Replicates: true}, 6, 7}} {
		p := &plans.Plan{File: "p.yaml", Target: plans.Target{Nodes: c.nodes}, Workload: plans.Workload{Kind: "some-set", Spec: &Params{Replicas: c.replicas}}}
		if err := c.w.CheckPlan(p); err == nil || !strings.Contains(err.Error(), "workload.replicas") {
			t.Errorf("replicas %d of %d, replicates %v: %v; want an error at workload.replicas", c.replicas, c.nodes, c.w.Replicates, err)
		}
	}
	p := &plans.Plan{File: "p.yaml", Target: plans.Target{Nodes: 5}, Workload: plans.Workload{Kind: "nats-stream", Spec: &Params{Replicas: 3}}}
	if err := (Workload{Replicates: true}).CheckPlan(p); err != nil {
		t.Errorf("replicas 3 of 5 on a backend that replicates: %v", err)
	}
}

// TestSeqRanges: holes print as ranges, single numbers alone, empty ranges
// left out.
func TestSeqRanges(t *testing.T) {
	var r seqRanges
	r.add(5, 4)
	if !r.empty() {
		t.Fatalf("after an empty range: %v", r)
	}
	r.add(2, 2)
	r.add(7, 9)
	if got := r.String(); got != "2, 7-9" {
		t.Errorf("String() = %q; want \"2, 7-9\"", got)
	}
}
