// Package lock is the lock checker, and the split-brain checker that judges
// leader elections as it judges locks: what it judges, and its verdict,
// notes and stats. The scan is in scan.go, the two kinds of finding in
// exclusion.go and stale.go.
package lock

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// Checker judges histories of the lock workload, where clients loop
// acquire -> write to a protected resource -> release. It finds two kinds of
// anomaly, "mutual-exclusion" and "stale-write", and checks that fencing
// tokens grow ("token-order"). Every relation in time is decided by the
// recorded times (Op.Time); line order counts only within one process's
// entries and within the resource's log, whose order is the resource's.
//
//   - A hold is a process's tenure of the lock by its own account: from an
//     acquire's ok completion, included, to the process's next acquire or
//     release invocation (a release naming another session does not end
//     it), excluded; with neither, to the process's last entry, included.
//     An acquire that failed, is info or never completed starts no hold.
//   - mutual-exclusion: two holds of different processes overlap (one holds
//     the lock at the other's start). One finding per hold that overlaps a
//     hold coming before it (earlier start, or the same start and a lower
//     process number), naming the two.
//   - A write's acquisition is the latest acquire ok of its process before
//     it with the write's session (an absent session is session 0) or, if
//     there is none, the hold the process is in when it invokes the write.
//     An acquisition is newer than another if its ok is later.
//   - stale-write: with a resource log, an accepted write whose acquisition
//     is older than that of an accepted write of another process on an
//     earlier line (log entries are tied to acquisitions by client and
//     session). Without one, an ok write whose acquisition is older than
//     that of an ok write of another process that completed before it was
//     invoked. One finding per stale write.
//   - A grant is an acquire ok with a token; acquire oks of one process,
//     lock, session and token report one grant, whose first report counts.
//     token-order: per lock, a grant whose token is lower than that of a
//     grant completed before it was invoked, or equal to that of another
//     grant that came first (earlier ok, then lower process number). One
//     finding per such grant.
//
// The zero value judges locks; registered as "split-brain", it judges
// leader elections with the words of elections (vocab.go).
type Checker struct{ v *vocab }

func init() { analysis.Register(Checker{}) }

func (c Checker) vocab() *vocab {
	if c.v == nil {
		return lockVocab
	}
	return c.v
}

// Name is how plans refer to this checker.
func (c Checker) Name() string { return c.vocab().checker }

// Check implements analysis.Checker.
func (c Checker) Check(ctx context.Context, in analysis.Input) analysis.Result {
	lh := scanLock(c.vocab(), in.History)
	for i := range in.History {
		lh.see(&in.History[i], i)
	}
	return lh.judge(ctx, in)
}

// Parts implements analysis.BatchChecker: the lock's history does not divide, but
// the checker keeps a digest of each entry, not the entry, so it can be
// given as a stream of operations.
func (c Checker) Parts() history.PartOf {
	return func(*history.Op) string { return "" }
}

// Begin implements analysis.BatchChecker.
func (c Checker) Begin(ctx context.Context, in analysis.Input) analysis.Batches {
	return &lockBatches{ctx: ctx, in: in, lh: scanLock(c.vocab(), nil)}
}

// lockBatches is a lock check of a history given as a stream. Its
// findings' operations are digests (lockHistory.opsAt), which RunStream
// fills in.
type lockBatches struct {
	ctx context.Context
	in  analysis.Input
	lh  *lockHistory
}

func (b *lockBatches) Add(batch []history.Op) {
	for i := range batch {
		b.lh.see(&batch[i], batch[i].Index)
	}
}

func (b *lockBatches) Result() analysis.Result { return b.lh.judge(b.ctx, b.in) }

func (b *lockBatches) DigestsOnly() {}

// judge ends the pass and judges what it found.
func (lh *lockHistory) judge(ctx context.Context, in analysis.Input) analysis.Result {
	lh.finish()
	res := analysis.Result{Verdict: analysis.Valid, Stats: map[string]any{}}
	v := lh.v
	if err := ctx.Err(); err != nil {
		return analysis.UnknownResult("check cancelled: " + err.Error())
	}

	me := mutualExclusion(lh)
	order := tokenOrder(lh)
	var stale analysis.FindingList
	var rejected, unmatched int
	switch {
	case len(in.Resource) > 0:
		stale, rejected, unmatched = lh.staleFromResource(in.Resource)
	case len(lh.writes) > 0:
		stale = lh.staleFromHistory()
		res.Notes = append(res.Notes, "no resource log: stale writes were judged from the history alone, which sees only writes whose success a client observed")
	}
	if err := ctx.Err(); err != nil {
		return analysis.UnknownResult("check cancelled: " + err.Error())
	}

	// Stale writes first: they are the damage done.
	res.Findings = pickFindings(append(stale.List, order.List...), me.List)
	res.FindingsTotal = me.Total + stale.Total + order.Total
	res.Kinds = map[string]int{}
	for _, l := range []analysis.FindingList{stale, order, me} {
		for k, n := range l.Kinds {
			res.Kinds[k] += n
		}
	}
	switch {
	case lh.counts[v.acquire+"s_ok"] == 0:
		res.Verdict = analysis.Unknown
		res.Notes = append(res.Notes, "no "+v.acquire+" succeeded, so there was never a holder to judge")
	case res.FindingsTotal > 0:
		res.Verdict = analysis.Invalid
	}
	if in.ResourceMode == "fenced" && len(lh.grants) == 0 {
		res.Notes = append(res.Notes, "the lock service handed out no fencing token (Redlock has none), so the fenced resource had nothing to check")
	}
	if unmatched > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d accepted resource writes match no successful acquire in the history (by client and session); they were not judged", unmatched))
	}
	if lh.bad.N > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d entries had unreadable values and were judged without them; first: %v", lh.bad.N, lh.bad.First))
	}

	res.Stats[v.acquire+"s_attempted"] = lh.counts[v.acquire+"s_attempted"]
	for _, f := range []string{v.acquire, v.act, v.release} {
		for _, t := range []history.Type{history.Ok, history.Fail, history.Info} {
			res.Stats[f+"s_"+string(t)] = lh.counts[f+"s_"+string(t)]
		}
	}
	res.Figures = v.figures(Figures{Holds: len(lh.holds), StaleWritesAccepted: stale.Total, StaleWritesRejected: rejected,
		ExclusionViolations: me.Total, TokensSeen: len(lh.grants), TokensStrictlyIncreasing: order.Total == 0})
	res.Stats["holds"] = len(lh.holds)
	res.Stats["stale_writes_accepted"] = stale.Total
	res.Stats["stale_writes_rejected"] = rejected
	res.Stats[strings.ReplaceAll(v.exclusion, "-", "_")+"_violations"] = me.Total
	res.Stats["tokens_seen"] = len(lh.grants)
	if len(lh.grants) > 0 {
		// Per lock, each token greater than every token granted before it
		// was asked for, and no token handed to two grants.
		res.Stats["tokens_strictly_increasing"] = order.Total == 0
	}
	holdTimes := make([]time.Duration, len(lh.holds))
	for i, h := range lh.holds {
		holdTimes[i] = h.stop - h.start
	}
	addPercentiles(res.Stats, "hold_time", holdTimes)
	addPercentiles(res.Stats, "acquire_latency", lh.latencies)
	return res
}

// pickFindings lists a's findings then b's; under a cap
// (analysis.FindingsCap) it gives each at least half the room when both
// have more, so that one flood does not hide the other kind.
func pickFindings(a, b []analysis.Finding) []analysis.Finding {
	limit := analysis.FindingsCap
	if limit <= 0 {
		return append(a[:len(a):len(a)], b...)
	}
	na := min(len(a), max(limit-len(b), limit/2))
	nb := min(len(b), limit-na)
	return append(a[:na:na], b[:nb]...)
}

// addPercentiles records p50, p99 and max of ds in seconds (nearest rank).
func addPercentiles(stats map[string]any, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) float64 {
		i := max(int(math.Ceil(p*float64(len(s))))-1, 0)
		return s[i].Seconds()
	}
	stats[name+"_p50_s"] = rank(0.50)
	stats[name+"_p99_s"] = rank(0.99)
	stats[name+"_max_s"] = s[len(s)-1].Seconds()
}
