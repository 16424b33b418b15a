// Package traffic shapes what a workload's clients send: which kinds of
// operation in what mix, and how fast. It is the part of Jepsen's
// generators that a plan sets; the workload decides what each kind does.
package traffic

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/plans"
)

// Kind is a kind of operation and its default weight.
type Kind struct {
	Name   string
	Weight int
}

// Pace is how fast each client sends and how many operations it has in
// flight, in the workload's own section.
type Pace struct {
	// Rate caps each client's operations per second (shared among its
	// workers); 0 sends the next operation as soon as the last one ends.
	Rate float64 `yaml:"rate" json:"rate,omitempty"`
	// Concurrency is how many operations each client process has in
	// flight, each worker a history process of its own (default 1).
	Concurrency int `yaml:"concurrency" json:"concurrency,omitempty"`
}

// Check checks the pace and fills its defaults.
func (pc *Pace) Check() error {
	if pc.Concurrency == 0 {
		pc.Concurrency = 1
	}
	if pc.Concurrency < 1 || pc.Concurrency > 64 {
		return plans.Fieldf("concurrency", "%d: expected 1 to 64 operations in flight per client", pc.Concurrency)
	}
	if pc.Rate < 0 {
		return plans.Fieldf("rate", "%g: expected operations per second per client, or 0 for no limit", pc.Rate)
	}
	return nil
}

// Pacer keeps one worker of a client to its share of the rate.
type Pacer struct {
	every time.Duration
	next  time.Time
}

// Pacer is a pacer for one worker of a client.
func (pc Pace) Pacer() *Pacer {
	if pc.Rate <= 0 {
		return &Pacer{}
	}
	return &Pacer{every: time.Duration(float64(time.Second) * float64(max(pc.Concurrency, 1)) / pc.Rate)}
}

// Wait waits until the rate allows another operation; false once ctx has
// ended.
func (pr *Pacer) Wait(ctx context.Context) bool {
	if pr.every > 0 {
		now := time.Now()
		if wait := pr.next.Sub(now); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return false
			case <-t.C:
			}
			now = pr.next
		}
		pr.next = now.Add(pr.every)
	}
	return ctx.Err() == nil
}

// Spec is the traffic a plan asks of each client: a mix of kinds of
// operation, at a pace.
type Spec struct {
	// Mix weighs the kinds of operation: {read: 2, write: 1, cas: 1} reads
	// half the time. Kinds left out keep their default weight; 0 turns a
	// kind off.
	Mix  map[string]int `yaml:"mix" json:"mix,omitempty"`
	Pace `yaml:",inline"`
}

// Check checks s against the workload's kinds and their default weights,
// and fills the mix.
func (s *Spec) Check(kinds []Kind) error {
	var names []string
	full := map[string]int{}
	for _, k := range kinds {
		names = append(names, k.Name)
		full[k.Name] = k.Weight
	}
	total := 0
	for _, k := range kinds {
		w, given := s.Mix[k.Name]
		if !given {
			w = k.Weight
		}
		if w < 0 {
			return plans.Fieldf("mix", "%s: %d: expected a weight of 0 or more", k.Name, w)
		}
		full[k.Name] = w
		total += w
	}
	for k := range s.Mix {
		if !slices.Contains(names, k) {
			return plans.Fieldf("mix", "%q: not an operation of this workload; expected %s", k, strings.Join(names, ", "))
		}
	}
	if total == 0 {
		return plans.Fieldf("mix", "every weight is 0: the clients would send nothing")
	}
	s.Mix = full
	return s.Pace.Check()
}

// Generator draws one client's operations: their kinds, at the spec's
// rate.
type Generator struct {
	kinds []string
	// cum are the cumulative weights, in the workload's order of kinds.
	cum   []int
	rng   *rand.Rand
	pacer *Pacer
}

// Generator is a generator of s's traffic for one worker of a client
// (its share of the rate), drawing with rng. kinds gives the order in
// which weights add up, so that a plan's traffic is the same draw for
// draw whatever the order of its mix.
func (s Spec) Generator(kinds []Kind, rng *rand.Rand) *Generator {
	g := &Generator{rng: rng, pacer: s.Pacer()}
	total := 0
	for _, k := range kinds {
		if w := s.Mix[k.Name]; w > 0 {
			total += w
			g.kinds = append(g.kinds, k.Name)
			g.cum = append(g.cum, total)
		}
	}
	if total == 0 {
		panic("traffic: generator of a mix that Check did not fill")
	}
	return g
}

// Next waits until the rate allows another operation and draws its kind;
// false once ctx has ended.
func (g *Generator) Next(ctx context.Context) (string, bool) {
	if !g.pacer.Wait(ctx) {
		return "", false
	}
	r := g.rng.IntN(g.cum[len(g.cum)-1])
	i, _ := slices.BinarySearch(g.cum, r+1)
	return g.kinds[i], true
}

// Key is the key a client works on at time now. Keys change every period,
// so each key's history stays short enough to check quickly, while the
// clients that share a period contend on the same few keys.
func Key(now time.Duration, rng *rand.Rand, period time.Duration, perPeriod int) string {
	return "r" + strconv.FormatInt(int64(now/period)*int64(perPeriod)+rng.Int64N(int64(perPeriod)), 10)
}
