package set

import (
	"errors"
	"testing"

	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/workloads"
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
		err := c.w.Check(&Params{Payload: c.payload}, workloads.Setting{Workload: "some-set"})
		if !atField(err, "payload") {
			t.Errorf("payload %d, pads %v: %v; want an error at workload.payload", c.payload, c.w.Pads, err)
		}
	}
	if err := (Workload{Pads: true}).Check(&Params{Payload: 4096}, workloads.Setting{Workload: "nats-stream"}); err != nil {
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
		err := c.w.Check(&Params{Replicas: c.replicas}, workloads.Setting{Workload: "some-set", Nodes: c.nodes})
		if !atField(err, "replicas") {
			t.Errorf("replicas %d of %d, replicates %v: %v; want an error at workload.replicas", c.replicas, c.nodes, c.w.Replicates, err)
		}
	}
	if err := (Workload{Replicates: true}).Check(&Params{Replicas: 3}, workloads.Setting{Workload: "nats-stream", Nodes: 5}); err != nil {
		t.Errorf("replicas 3 of 5 on a backend that replicates: %v", err)
	}
}

// atField says whether err is a complaint about field of the workload's
// own section, which a plan places at workload.field.
func atField(err error, field string) bool {
	e, ok := errors.AsType[*plans.FieldError](err)
	return ok && !e.InPlan && e.Field == field
}
