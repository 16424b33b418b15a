package traffic

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/plans"
)

var kinds = []Kind{{"read", 2}, {"write", 1}, {"cas", 1}}

func TestCheck(t *testing.T) {
	s := Spec{Mix: map[string]int{"cas": 0}}
	if err := s.Check(kinds); err != nil {
		t.Fatal(err)
	}
	if s.Mix["read"] != 2 || s.Mix["write"] != 1 || s.Mix["cas"] != 0 {
		t.Errorf("mix %v, want the defaults for kinds not given and cas off", s.Mix)
	}
	for _, c := range []struct {
		s           Spec
		field, want string
	}{
		{Spec{Mix: map[string]int{"delete": 1}}, "mix", `"delete": not an operation of this workload; expected read, write, cas`},
		{Spec{Mix: map[string]int{"read": -1}}, "mix", "read: -1: expected a weight of 0 or more"},
		{Spec{Mix: map[string]int{"read": 0, "write": 0, "cas": 0}}, "mix", "every weight is 0"},
		{Spec{Pace: Pace{Rate: -2}}, "rate", "-2: expected operations per second"},
	} {
		err := c.s.Check(kinds)
		if e, ok := errors.AsType[*plans.FieldError](err); !ok || e.Field != c.field || !strings.Contains(e.Msg, c.want) {
			t.Errorf("Check(%+v) = %v, want %q on %s", c.s, err, c.want, c.field)
		}
	}
}

// The default mix reads half the time; a kind of weight 0 never comes.
func TestGeneratorMix(t *testing.T) {
	s := Spec{Mix: map[string]int{"read": 2, "write": 1, "cas": 1}}
	g := s.Generator(kinds, rand.New(rand.NewPCG(1, 2)))
	n := map[string]int{}
	for range 40000 {
		k, ok := g.Next(context.Background())
		if !ok {
			t.Fatal("no operation without a limit")
		}
		n[k]++
	}
	if n["read"] < 19000 || n["read"] > 21000 || n["write"] < 9000 || n["cas"] < 9000 {
		t.Errorf("draws %v, want about 20000, 10000, 10000", n)
	}
	s.Mix["cas"] = 0
	g = s.Generator(kinds, rand.New(rand.NewPCG(1, 2)))
	for range 1000 {
		if k, _ := g.Next(context.Background()); k == "cas" {
			t.Fatal("a kind of weight 0 was drawn")
		}
	}
}

// With a rate, operations are spaced at least 1/rate apart, and a wait is
// cut short when the context ends.
func TestGeneratorRate(t *testing.T) {
	g := Spec{Mix: map[string]int{"read": 1}, Pace: Pace{Rate: 50}}.Generator(kinds, rand.New(rand.NewPCG(1, 2)))
	start := time.Now()
	for range 6 {
		g.Next(context.Background())
	}
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("6 operations at 50/s took %s, want at least 100ms", took)
	}
	g = Spec{Mix: map[string]int{"read": 1}, Pace: Pace{Rate: 0.001}}.Generator(kinds, rand.New(rand.NewPCG(1, 2)))
	g.Next(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := g.Next(ctx); ok {
		t.Error("an operation after the context ended")
	}
}
