package txn

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
	"github.com/chaos-testing/chaos/targets/nats"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/traffic"
)

// TestApply: a read sees the list the transaction began with and its own
// earlier appends, not its later ones; the appended keys come back with
// their new lists, and the lists it began with are left alone.
func TestApply(t *testing.T) {
	state := map[string][]int64{"x": {1, 2}}
	steps := []Step{{F: FRead, Key: "x"}, {F: FAppend, Key: "x", Value: 3}, {F: FRead, Key: "x"}, {F: FRead, Key: "y"}, {F: FAppend, Key: "y", Value: 9}}
	written := Apply(steps, state)
	want := [][]int64{{1, 2}, nil, {1, 2, 3}, {}, nil}
	for i, s := range steps {
		if s.F == FRead && !slices.Equal(s.List, want[i]) {
			t.Errorf("step %d read %v; want %v", i, s.List, want[i])
		}
	}
	if !slices.Equal(written["x"], []int64{1, 2, 3}) || !slices.Equal(written["y"], []int64{9}) || len(written) != 2 {
		t.Errorf("written = %v; want x [1 2 3], y [9]", written)
	}
	if !slices.Equal(state["x"], []int64{1, 2}) {
		t.Errorf("the state began with changed to %v", state["x"])
	}
}

// TestApplyRegister: a write replaces the key's value; a read sees the
// value the transaction began with or its own last write.
func TestApplyRegister(t *testing.T) {
	steps := []Step{{F: FRead, Key: "x"}, {F: FWrite, Key: "x", Value: 3}, {F: FWrite, Key: "x", Value: 4}, {F: FRead, Key: "x"}, {F: FRead, Key: "y"}}
	written := Apply(steps, map[string][]int64{"x": {1}})
	for i, want := range map[int][]int64{0: {1}, 3: {4}, 4: {}} {
		if !slices.Equal(steps[i].List, want) {
			t.Errorf("step %d read %v; want %v", i, steps[i].List, want)
		}
	}
	if !slices.Equal(written["x"], []int64{4}) || len(written) != 1 {
		t.Errorf("written = %v; want x [4]", written)
	}
}

// TestHistory: steps are history.TxnSteps; a read not done has no value;
// a list read is its list, a register read its value or null.
func TestHistory(t *testing.T) {
	for _, c := range []struct {
		m     Model
		steps []Step
		want  string
	}{
		{ListAppend, []Step{{F: FAppend, Key: "k1", Value: 5}, {F: FRead, Key: "k2"}, {F: FRead, Key: "k1", List: []int64{}}, {F: FRead, Key: "k1", List: []int64{5, 7}}},
			`[{"f":"append","key":"k1","value":5},{"f":"r","key":"k2"},{"f":"r","key":"k1","value":[]},{"f":"r","key":"k1","value":[5,7]}]`},
		{RWRegister, []Step{{F: FWrite, Key: "k1", Value: 5}, {F: FRead, Key: "k2"}, {F: FRead, Key: "k1", List: []int64{}}, {F: FRead, Key: "k1", List: []int64{7}}},
			`[{"f":"w","key":"k1","value":5},{"f":"r","key":"k2"},{"f":"r","key":"k1"},{"f":"r","key":"k1","value":7}]`},
	} {
		b, err := json.Marshal(c.m.History(c.steps))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%s: got %s; want %s", c.m.Name, b, c.want)
		}
	}
}

// TestListEncoding: a list survives its stored form; a value that is not
// a list is an error.
func TestListEncoding(t *testing.T) {
	l := []int64{3, 1 << 40, 7}
	got, err := DecodeList([]byte(EncodeList(l)))
	if err != nil || !slices.Equal(got, l) {
		t.Errorf("round trip of %v: %v, %v", l, got, err)
	}
	if got, err := DecodeList(nil); err != nil || len(got) != 0 {
		t.Errorf("empty value: %v, %v", got, err)
	}
	if _, err := DecodeList([]byte("1 x")); err == nil {
		t.Error("a value that is not a list: no error")
	}
}

// TestDraw: transactions have 1 to MaxSteps steps on the period's keys,
// and every written value is new.
func TestDraw(t *testing.T) {
	ps := &Params{Keys: 3, MaxSteps: 4, Pace: traffic.Pace{Concurrency: 1}}
	ps.KeyPeriod.Duration = time.Second
	rng := rand.New(rand.NewPCG(1, 2))
	next := int64(7) << 32
	seen := map[int64]bool{}
	lengths := map[int]bool{}
	for i := range 1000 {
		m := []Model{ListAppend, RWRegister}[i%2]
		steps := draw(rng, ps, m, 1500*time.Millisecond, &next)
		lengths[len(steps)] = true
		for _, s := range steps {
			if !slices.Contains([]string{"r3", "r4", "r5"}, s.Key) {
				t.Fatalf("key %s outside the period's r3..r5", s.Key)
			}
			if s.F != FRead && s.F != m.Write {
				t.Fatalf("%s step in a %s transaction", s.F, m.Name)
			}
			if s.F != FRead {
				if seen[s.Value] {
					t.Fatalf("value %d written twice", s.Value)
				}
				seen[s.Value] = true
			}
		}
	}
	if len(lengths) != 4 || len(seen) == 0 {
		t.Errorf("lengths drawn %v, %d writes; want 1 to 4 steps and some writes", lengths, len(seen))
	}
}

// TestCheck: defaults are filled; a read mode the backend lacks, or a
// count out of range, is refused at its field (of the workload's
// section: a plan places it at workload.<field>).
func TestCheck(t *testing.T) {
	w := Workload{Backend: workloads.Backend{TargetKind: "etcd"}, ReadModes: []string{"linearizable", "serializable"}}
	setting := workloads.Setting{Workload: "etcd-list-append", Clients: 3, TargetKind: "etcd", Nodes: 3}
	ps := &Params{}
	if err := w.Check(ps, setting); err != nil {
		t.Fatal(err)
	}
	if ps.ReadMode != "linearizable" || ps.Keys != 4 || ps.MaxSteps != 4 || ps.KeyPeriod.Duration != 5*time.Second || ps.Concurrency != 1 {
		t.Errorf("defaults: %+v", ps)
	}
	for field, bad := range map[string]Params{
		"read_mode":  {ReadMode: "checked"},
		"keys":       {Keys: -1},
		"max_steps":  {MaxSteps: 33},
		"key_period": {KeyPeriod: plans.Duration{Duration: time.Millisecond}},
	} {
		err := w.Check(&bad, setting)
		if e, ok := errors.AsType[*plans.FieldError](err); !ok || e.InPlan || e.Field != field {
			t.Errorf("%+v: %v; want an error at workload.%s", bad, err, field)
		}
	}
}

// TestNATSNeedsAtomicBatches: NATS transactions are refused before
// v2.12.0, whose servers have no atomic batch publish; the default
// version and later ones are accepted.
func TestNATSNeedsAtomicBatches(t *testing.T) {
	for _, kind := range []string{"nats-list-append", "nats-rw-register"} {
		w, ok := workloads.Workloads.Lookup(kind)
		if !ok {
			t.Fatalf("%s is not registered", kind)
		}
		for version, refused := range map[string]bool{"": false, "v2.12.1": false, "2.14.0": false, "v2.11.9": true, "v2.10.22": true} {
			target, err := nats.Kind{}.Bind(&targets.Spec[struct{}]{Nodes: 3, Version: version})
			if err != nil {
				t.Fatal(err)
			}
			_, err = w.Bind(3, &Params{}, workloads.Setting{Workload: kind, Clients: 3, Target: target, TargetKind: "nats", Nodes: 3})
			fe, _ := errors.AsType[*plans.FieldError](err)
			if refused != (fe != nil && fe.InPlan && fe.Field == "target.version" && strings.Contains(fe.Msg, "atomic batch") &&
				strings.Contains(fe.Msg, kind+" needs") && strings.Contains(fe.Msg, "which nats has from v2.12.0 on")) || !refused && err != nil {
				t.Errorf("%s on %q: %v; want refused %v", kind, version, err, refused)
			}
		}
	}
}
