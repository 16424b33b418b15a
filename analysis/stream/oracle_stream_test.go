package stream

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/analysis/stream/oracle"
	"github.com/chaos-testing/chaos/history"
)

// streamComparison draws stream histories for TestOracleStream and
// FuzzOracleStream.
var streamComparison = analysistest.Comparison[[]history.Op]{Draw: oracle.RandomStreamHistory, Diff: diffStreamOracle, Show: analysistest.JSONLines[history.Op]}

// TestOracleStream compares the stream-order checker with the brute-force
// oracle on random small histories.
func TestOracleStream(t *testing.T) { streamComparison.Test(t, 50000, analysistest.Indexed(0x57e)) }

// FuzzOracleStream turns fuzz bytes into a small stream history and
// compares the checker with the oracle on it.
func FuzzOracleStream(f *testing.F) {
	streamComparison.Fuzz(f, []byte{},
		[]byte{3, 9, 0, 1, 2, 0, 0, 1, 1, 3, 2, 0, 1, 0, 2, 2, 1, 0, 0, 3, 1, 2, 0, 1, 1},
		[]byte("stream-order against oracle: forks, skips, lost and moved messages"))
}

// diffStreamOracle says how the checker's result on h differs from the
// oracle's, or else the verdict both gave and the kinds of the checker's
// findings.
func diffStreamOracle(h []history.Op) ([]string, error) {
	want, err := oracle.CheckStream(h)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	got := OrderChecker{}.Check(context.Background(), analysis.Input{History: h})
	var diffs []string
	differ := func(what string, g, w any) {
		if fmt.Sprint(g) != fmt.Sprint(w) {
			diffs = append(diffs, fmt.Sprintf("%s: checker %v, oracle %v", what, g, w))
		}
	}
	differ("verdict", got.Verdict, want.Verdict)
	if want.Verdict != "unknown" {
		differ("stats[reads]", got.Stats["reads"], want.Reads)
		differ("stats[duplicates]", got.Stats["duplicates"], want.Duplicates)
		// The reads no log could return alone are those the checker finds
		// skipping or out of order (the first entry of such a finding is
		// the read's invocation).
		var alone []int
		for _, f := range got.Findings {
			if f.Kind == "stream-skipped-sequence" || f.Kind == "stream-unordered-read" {
				alone = append(alone, f.Ops[0].Index)
			}
		}
		slices.Sort(alone)
		differ("reads impossible alone", slices.Compact(alone), want.Impossible)
		// Pairs of reads: the checker reports each way a pair breaks the
		// guarantee once.
		differ("stream-fork findings", got.Kinds["stream-fork"], want.Forks)
		differ("stream-lost-message findings", got.Kinds["stream-lost-message"], want.Lost)
		differ("stream-moved-message findings", got.Kinds["stream-moved-message"], want.Moved)
		differ("stats[acknowledged_sequences]", got.Stats["acknowledged_sequences"], want.Acks)
		differ("stream-ack-mismatch findings", got.Kinds["stream-ack-mismatch"], want.AckMismatch)
		differ("stream-ack-lost findings", got.Kinds["stream-ack-lost"], want.AckLost)
		differ("stream-ack-future findings", got.Kinds["stream-ack-future"], want.AckFuture)
		differ("stream-ack-order findings", got.Kinds["stream-ack-order"], want.AckOrder)
	}
	if len(got.Findings) != got.FindingsTotal {
		diffs = append(diffs, fmt.Sprintf("%d findings listed of %d; a small history lists them all", len(got.Findings), got.FindingsTotal))
	}
	if diffs != nil {
		return nil, fmt.Errorf("checker and oracle differ:\n\t%s\nchecker findings %+v", strings.Join(diffs, "\n\t"), got.Findings)
	}
	labels := []string{want.Verdict}
	for kind := range got.Kinds {
		labels = append(labels, kind)
	}
	return labels, nil
}
