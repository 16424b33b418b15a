// What the oracle comparisons (TestOracle*, FuzzOracle*) share: how many
// histories a test draws, where each one comes from, how a disagreement is
// reported so that it can be reproduced.

package analysistest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/internal/randhistory"
)

// A Comparison is how one kind of small history is drawn, checked
// with a production checker and with its oracle, and shown.
type Comparison[H any] struct {
	Draw func(r randhistory.Rand) H
	// Diff says how the checker and the oracle differ on h, or else what
	// both said (labels to tally: the verdict, kinds of finding).
	Diff func(h H) (labels []string, err error)
	// Show renders h as its files are written, to reproduce a failure.
	Show func(h H) string
}

// once compares the checker with the oracle on one history drawn from r.
func (c Comparison[H]) once(r randhistory.Rand) ([]string, error) {
	h := c.Draw(r)
	labels, err := c.Diff(h)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, c.Show(h))
	}
	return labels, nil
}

// A PCGSeed is the seed of history i of a comparison: it is drawn from
// rand.NewPCG(seed(i)).
type PCGSeed func(i uint64) (uint64, uint64)

// Indexed seeds history i with rand.NewPCG(i, stream).
func Indexed(stream uint64) PCGSeed {
	return func(i uint64) (uint64, uint64) { return i, stream }
}

// OracleN is how many random histories a comparison draws: env
// CHAOS_ORACLE_N, else def.
func OracleN(t testing.TB, def int) int {
	t.Helper()
	s := os.Getenv("CHAOS_ORACLE_N")
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		t.Fatalf("CHAOS_ORACLE_N=%q: want a count", s)
	}
	return n
}

// Test compares on OracleN(t, def) histories, history i drawn from
// rand.NewPCG(seed(i)), and logs what they were judged. Each disagreement
// is reported with its seed and the history; the third ends the test.
func (c Comparison[H]) Test(t *testing.T, def int, seed PCGSeed) {
	t.Helper()
	n := OracleN(t, def)
	start := time.Now()
	tally := map[string]int{}
	failures := 0
	for i := range n {
		hi, lo := seed(uint64(i))
		labels, err := c.once(rand.New(rand.NewPCG(hi, lo)))
		if err != nil {
			t.Errorf("history %d (rand.NewPCG(%d, %d)): %v", i, hi, lo, err)
			if failures++; failures == 3 {
				t.FailNow()
			}
			continue
		}
		for _, l := range labels {
			tally[l]++
		}
	}
	t.Logf("%d histories agree in %s: %s", n, time.Since(start).Round(time.Millisecond), analysis.DescribeCounts(tally))
}

// Fuzz compares on histories drawn from the fuzzer's bytes, starting from
// the corpus seeds.
func (c Comparison[H]) Fuzz(f *testing.F, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := c.once((*randhistory.FuzzBytes)(&b)); err != nil {
			t.Fatal(err)
		}
	})
}

// JSONLines renders es one JSON object a line, as history.jsonl and
// resource.jsonl are written.
func JSONLines[E any](es []E) string {
	var b strings.Builder
	for _, e := range es {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}
