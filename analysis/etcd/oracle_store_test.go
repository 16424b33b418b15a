package etcd

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/analysis/etcd/oracle"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/randhistory"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// etcdCheckers are the checkers the oracle stands for together: a history
// is invalid by the oracle exactly when one of them should find it so.
var etcdCheckers = []string{"etcd-kv", "etcd-watch", "etcd-serializable"}

// TestOracleEtcdStore compares the etcd checkers with the brute-force
// oracle of etcd's documented guarantees on random small histories from
// a true store, half of them perturbed (oracle.Perturbations). A checker
// finding invalid what the oracle finds valid is a false alarm, and fails
// the test; so does the oracle finding an unperturbed history invalid,
// and etcd-kv finding valid what the oracle finds invalid in a history
// without watches and serializable reads (both then decide the same
// thing: whether the KV operations and leases linearize).
// The checkers all finding valid what the oracle finds invalid is a miss:
// the checkers promise to be sound, not complete, so misses are counted
// by perturbation and logged (CHAOS_ORACLE_SHOW=N logs the first N of
// each kind, shrunk). CHAOS_ORACLE_FROM=K starts at the K-th history, to
// go on past an earlier count or to look at one history again.
func TestOracleEtcdStore(t *testing.T) {
	n := analysistest.OracleN(t, 5000)
	from, _ := strconv.Atoi(os.Getenv("CHAOS_ORACLE_FROM"))
	start := time.Now()
	tally := map[string]int{}
	shown := map[string]int{}
	show, _ := strconv.Atoi(os.Getenv("CHAOS_ORACLE_SHOW"))
	misses := map[string]int{}
	failures := 0
	for i := from; i < from+n; i++ {
		c := oracle.RandomHistory(rand.New(rand.NewPCG(uint64(i), 0xe7c5)))
		kind := analysis.CmpOr(c.Kind, "none")
		o, got, err := judgeBoth(c.History)
		if err != nil {
			t.Fatalf("history %d: %v\n%s", i, err, dumpOps(c.History))
		}
		verdict := combined(got)
		if bad := failure(c, o, got); bad != "" {
			// The first three are shown; all are counted, by class.
			if failures++; failures <= 3 {
				small := shrink(c.History, func(h []history.Op) bool { return disagree(h) == bad[:10] })
				t.Errorf("history %d (rand.NewPCG(%d, 0xe7c5)), %s: %s\n%s\nshrunk:\n%s", i, i, kind, bad, dumpOps(c.History), dumpOps(small))
			}
			tally[kind+": DISAGREE "+disagreement(got)]++
			continue
		}
		if kvOnly(c.History) {
			tally["(of which without watch or serializable read) "+map[bool]string{true: "valid", false: "invalid"}[o.Valid]]++
		}
		switch {
		case verdict == analysis.Unknown:
			tally[kind+": unknown"]++
		case o.Valid:
			tally[kind+": valid"]++
		case verdict == analysis.Invalid:
			tally[kind+": invalid"]++
		default:
			tally[kind+": MISSED"]++
			misses[o.Rule()]++
			if shown[o.Rule()] < show {
				shown[o.Rule()]++
				small := shrink(c.History, func(h []history.Op) bool { return missed(h, o.Rule()) })
				res, _ := oracle.Check(small)
				t.Logf("missed (%s), history %d, shrunk; the oracle: %s\n%s", kind, i, res.Why, dumpOps(small))
			}
		}
	}
	if failures > 0 {
		t.Errorf("%d disagreements", failures)
	}
	t.Logf("%d histories in %s: %s", n, time.Since(start).Round(time.Millisecond), analysis.DescribeCounts(tally))
	t.Logf("misses by the rule the oracle found broken: %s", analysis.DescribeCounts(misses))
}

// kvOnly says whether h has no watch and no ok serializable range: then
// etcd-kv, a search for a linearization, decides all the oracle does.
func kvOnly(h []history.Op) bool {
	return !slices.ContainsFunc(h, func(op history.Op) bool {
		return op.F == etcdop.FWatch || op.F == etcdop.FRangeSerializable && op.Type == history.Ok
	})
}

// failure says how the checkers and the oracle disagree on c in a way
// that fails the comparison, or "".
func failure(c oracle.Case, o oracle.Result, got map[string]analysis.Result) string {
	switch {
	case len(crashed(got)) > 0:
		return fmt.Sprintf("crashed: %v; %s", crashed(got), describeResults(got))
	case o.Valid && combined(got) == analysis.Invalid:
		return fmt.Sprintf("false alarm: the oracle finds it valid; %s", describeResults(got))
	case !o.Valid && kvOnly(c.History) && got["etcd-kv"].Verdict == analysis.Valid:
		return fmt.Sprintf("missed by etcd-kv, which is complete where there is no watch and no serializable read: %s", o.Why)
	case !o.Valid && (c.Kind == "" || c.Kind == "to-info"):
		return fmt.Sprintf("the oracle finds a history from a true store invalid (%s): %s", analysis.CmpOr(c.Kind, "none"), o.Why)
	}
	return ""
}

// FuzzOracleEtcdStore turns fuzz bytes into a small etcd history and
// compares the checkers with the oracle on it, failing as
// TestOracleEtcdStore does.
func FuzzOracleEtcdStore(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("two watchers, a lost put, a revoke of a lease, a stale read"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := oracle.RandomHistory((*randhistory.FuzzBytes)(&b))
		o, got, err := judgeBoth(c.History)
		if err != nil {
			t.Fatal(err)
		}
		if bad := failure(c, o, got); bad != "" {
			t.Fatalf("%s\n%s", bad, dumpOps(c.History))
		}
	})
}

// judgeBoth judges h with the oracle and the checkers.
func judgeBoth(h []history.Op) (oracle.Result, map[string]analysis.Result, error) {
	o, err := oracle.Check(h)
	if err != nil {
		return o, nil, fmt.Errorf("oracle: %w", err)
	}
	got := map[string]analysis.Result{}
	for _, name := range etcdCheckers {
		got[name] = runChecker(name, h)
	}
	return o, got, nil
}

// runChecker runs the checker registered as name on h; a crash is an
// unknown verdict with a note that starts "crashed".
func runChecker(name string, h []history.Op) (r analysis.Result) {
	defer func() {
		if p := recover(); p != nil {
			r = analysis.Result{Verdict: analysis.Unknown, Notes: []string{fmt.Sprintf("crashed: %v", p)}}
		}
	}()
	c, _ := analysis.Checkers.Lookup(name)
	return c.Check(context.Background(), analysis.Input{History: h, Config: map[string]string{}}) // etcd's defaults: no automatic compaction
}

// disagreement names a checker that crashed or found the history
// invalid, and its first finding's kind.
func disagreement(got map[string]analysis.Result) string {
	if names := crashed(got); len(names) > 0 {
		return names[0] + " crashed"
	}
	for _, name := range etcdCheckers {
		if r := got[name]; r.Verdict == analysis.Invalid && len(r.Findings) > 0 {
			return name + " " + r.Findings[0].Kind
		}
	}
	return "oracle"
}

// crashed names the checkers that crashed.
func crashed(got map[string]analysis.Result) []string {
	var names []string
	for _, name := range etcdCheckers {
		if slices.ContainsFunc(got[name].Notes, func(n string) bool { return strings.HasPrefix(n, "crashed") }) {
			names = append(names, name)
		}
	}
	return names
}

// combined is the checkers' verdict together: invalid when one finds it
// so, else unknown when one cannot decide.
func combined(got map[string]analysis.Result) analysis.Verdict {
	var vs []analysis.Verdict
	for _, r := range got {
		vs = append(vs, r.Verdict)
	}
	return analysis.Worst(vs...)
}

// disagree says how the checkers and the oracle differ on h: "crashed: ["
// (a checker crashed), "false alar" (a false alarm), "missed by " (etcd-kv
// missed what it decides), "missed", or "": the first ten bytes of what
// TestOracleEtcdStore reports.
func disagree(h []history.Op) string {
	o, got, err := judgeBoth(h)
	if err != nil {
		return ""
	}
	switch v := combined(got); {
	case len(crashed(got)) > 0:
		return "crashed: ["
	case o.Valid && v == analysis.Invalid:
		return "false alar"
	case !o.Valid && kvOnly(h) && got["etcd-kv"].Verdict == analysis.Valid:
		return "missed by "
	case !o.Valid && v == analysis.Valid:
		return "missed"
	}
	return ""
}

// missed says whether the checkers all find h valid where the oracle
// finds it breaks rule, and h still has a write that did not fail
// (etcd-watch judges no event of a history without one).
func missed(h []history.Op, rule string) bool {
	o, got, err := judgeBoth(h)
	writes := slices.ContainsFunc(history.Pairs(h, func(*history.Op) bool { return true }), func(p history.Pair) bool {
		return (p.Done == nil || p.Done.Type != history.Fail) && slices.Contains([]string{etcdop.FPut, etcdop.FDelete, etcdop.FLeaseRevoke}, p.Inv.F)
	})
	return err == nil && writes && !o.Valid && o.Rule() == rule && combined(got) == analysis.Valid
}

func describeResults(got map[string]analysis.Result) string {
	var parts []string
	for _, name := range etcdCheckers {
		r := got[name]
		s := fmt.Sprintf("%s %s %q", name, r.Verdict, r.Notes)
		for _, f := range r.Findings {
			s += fmt.Sprintf(" [%s: %s]", f.Kind, f.Explanation)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// shrink takes out of h whole operations (a process's entries), then
// single watch responses, while keep holds, to show a disagreement small.
func shrink(h []history.Op, keep func([]history.Op) bool) []history.Op {
	for changed := true; changed; {
		changed = false
		procs := map[int]bool{}
		for _, op := range h {
			procs[op.Process] = true
		}
		for p := range procs {
			smaller := slices.DeleteFunc(slices.Clone(h), func(op history.Op) bool { return op.Process == p })
			if keep(smaller) {
				h, changed = smaller, true
			}
		}
		for i, op := range h {
			for _, smaller := range shrinkWatch(op) {
				try := slices.Clone(h)
				try[i] = smaller
				if keep(try) {
					h, changed = try, true
					break
				}
			}
		}
	}
	return h
}

// shrinkWatch is a watch's completion with one response fewer, each way.
func shrinkWatch(op history.Op) []history.Op {
	var res etcdop.WatchResult
	if op.F != etcdop.FWatch || op.Type == history.Invoke || op.Decode(&res) != nil {
		return nil
	}
	var out []history.Op
	for i := range res.Responses {
		smaller := res
		smaller.Responses = slices.Delete(slices.Clone(res.Responses), i, i+1)
		o := op
		o.Value = history.MustValue(smaller)
		out = append(out, o)
	}
	return out
}
