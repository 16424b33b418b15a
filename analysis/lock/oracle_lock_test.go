package lock

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/analysis/lock/oracle"
)

// lockComparison draws lock and election histories for TestOracleLock and
// FuzzOracleLock.
var lockComparison = analysistest.Comparison[oracle.LockCase]{Draw: oracle.RandomLockHistory, Diff: diffLockOracle, Show: describeLockCase}

// TestOracleLock compares the lock and split-brain checkers with the
// brute-force oracle on random small histories: verdict, counts, and each
// finding against one the definitions call for.
func TestOracleLock(t *testing.T) { lockComparison.Test(t, 20000, analysistest.Indexed(0x10c)) }

// FuzzOracleLock turns fuzz bytes into a small lock history and compares
// the checker with the oracle on it.
func FuzzOracleLock(f *testing.F) {
	lockComparison.Fuzz(f, []byte{}, []byte("two holders, one token, a stale write"),
		[]byte{0, 1, 3, 2, 0, 0, 1, 0, 2, 1, 1, 0, 0, 2, 2, 1, 0, 1, 2, 0, 1, 1, 1})
}

// diffLockOracle checks c with the production checker and the oracle, and
// says how they differ, or else the verdict both gave and the kinds of the
// oracle's findings, which the checker's match.
func diffLockOracle(c oracle.LockCase) ([]string, error) {
	want, err := oracle.Lock(c.History, c.Resource, c.Names())
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	ch := Checker{}
	if c.Election {
		ch = Checker{v: electionVocab}
	}
	v := ch.vocab()
	r := ch.Check(context.Background(), analysis.Input{History: c.History, Resource: c.Resource, ResourceMode: c.Mode})

	verdict := analysis.Valid
	switch {
	case !want.AcquiredOnce:
		verdict = analysis.Unknown
	case len(want.Findings) > 0:
		verdict = analysis.Invalid
	}
	byKind := map[string]int{}
	for _, f := range want.Findings {
		byKind[f.Kind]++
	}
	unmatched := slices.ContainsFunc(r.Notes, func(n string) bool {
		return strings.HasPrefix(n, fmt.Sprintf("%d accepted resource writes match no", want.Unmatched))
	})
	var errs []string
	for _, d := range []struct {
		what      string
		got, want any
	}{
		{"verdict", r.Verdict, verdict},
		{"findings", r.FindingsTotal, len(want.Findings)},
		{v.exclusion, r.Stats[strings.ReplaceAll(v.exclusion, "-", "_")+"_violations"], byKind[oracle.LockExclusion]},
		{v.stale, r.Stats["stale_writes_accepted"], byKind[oracle.LockStale]},
		{"holds", r.Stats["holds"], want.Holds},
		{"tokens seen", r.Stats["tokens_seen"], want.Grants},
		{"rejected", r.Stats["stale_writes_rejected"], want.Rejected},
		{"unmatched note", unmatched, want.Unmatched > 0},
	} {
		if d.got != d.want {
			errs = append(errs, fmt.Sprintf("%s: checker %v, oracle %v", d.what, d.got, d.want))
		}
	}
	if len(errs) == 0 {
		errs = matchLockFindings(r.Findings, want.Findings, map[string]string{
			v.exclusion: oracle.LockExclusion, v.stale: oracle.LockStale, "token-order": oracle.LockTokens,
		})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s\nchecker: %s\noracle: %s", strings.Join(errs, "; "), describeLockFindings(r.Findings), describeOracleFindings(want.Findings))
	}
	labels := []string{string(verdict)}
	for _, f := range want.Findings {
		labels = append(labels, f.Kind)
	}
	return labels, nil
}

// matchLockFindings pairs each listed finding with a distinct oracle finding
// of its kind that has a proof naming exactly its entries and lines
// (augmenting paths: a finding may fit more than one).
func matchLockFindings(got []analysis.Finding, want []oracle.LockFinding, kinds map[string]string) []string {
	fits := make([][]int, len(got))
	for i, f := range got {
		p := oracle.LockProof{Ops: slices.Sorted(slices.Values(analysistest.Indices(f.Ops))), Lines: f.ResourceLines}
		p.Ops = slices.Compact(p.Ops)
		for j, w := range want {
			if w.Kind == kinds[f.Kind] && slices.ContainsFunc(w.Proofs, func(q oracle.LockProof) bool {
				return slices.Equal(q.Ops, p.Ops) && slices.Equal(q.Lines, p.Lines)
			}) {
				fits[i] = append(fits[i], j)
			}
		}
	}
	owner := make([]int, len(want))
	for j := range owner {
		owner[j] = -1
	}
	var assign func(i int, seen []bool) bool
	assign = func(i int, seen []bool) bool {
		for _, j := range fits[i] {
			if seen[j] {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || assign(owner[j], seen) {
				owner[j] = i
				return true
			}
		}
		return false
	}
	var errs []string
	for i, f := range got {
		if !assign(i, make([]bool, len(want))) {
			errs = append(errs, fmt.Sprintf("checker's finding %d (%s, ops %v, lines %v) is none the definitions call for", i, f.Kind, analysistest.Indices(f.Ops), f.ResourceLines))
		}
	}
	return errs
}

func describeLockFindings(fs []analysis.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n  %s %v lines %v: %s", f.Kind, analysistest.Indices(f.Ops), f.ResourceLines, f.Explanation)
	}
	return b.String()
}

func describeOracleFindings(fs []oracle.LockFinding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n  %s, proved by any of %v", f.Kind, f.Proofs)
	}
	return b.String()
}

// describeLockCase renders a case as its files are written: history.jsonl,
// then resource.jsonl, to reproduce a failure.
func describeLockCase(c oracle.LockCase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "election %v, resource %q\nhistory.jsonl:\n%s", c.Election, c.Mode, analysistest.JSONLines(c.History))
	if c.Resource != nil {
		b.WriteString("resource.jsonl:\n" + analysistest.JSONLines(c.Resource))
	}
	return b.String()
}
