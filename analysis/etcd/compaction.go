package etcd

import (
	"math"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// compactedFrom is the earliest a compaction can have removed old
// revisions in the history: when the nemesis first began one, or a watch
// was first canceled because its start had been compacted; from the start
// when the members compact on their own (etcd's auto-compaction, set by a
// retention other than 0) or their settings are not known; never
// (math.MaxInt64) otherwise. A watch asked for previous keys gets each one
// unless a compaction removed it (etcd's watch API: "If the previous KV is
// already compacted, nothing will be returned").
func compactedFrom(in analysis.Input, watches []watchOp) time.Duration {
	if in.Config == nil {
		return 0
	}
	if r, ok := in.Config["auto-compaction-retention"]; ok && r != "0" && r != "" {
		return 0
	}
	from := time.Duration(math.MaxInt64)
	for _, f := range history.FaultWindows(in.History) {
		if f.Kind == "compact" {
			from = min(from, f.Start)
		}
	}
	for _, w := range watches {
		for _, r := range w.res.Responses {
			if r.Compacted > 0 {
				from = min(from, r.Time)
			}
		}
	}
	return from
}
