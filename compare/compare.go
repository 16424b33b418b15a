// Package compare puts lock backends side by side: from runs of one
// workload and one fault schedule on several backends, a row per backend
// and resource mode (fenced, unfenced) with what those runs measured, each
// row naming the runs it came from.
package compare

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/runner"
)

// Row is what the runs of one backend and resource mode measured.
type Row struct {
	Target, Workload, Resource string
	Runs                       []string // run folders
	// StaleRuns counts runs in which the resource accepted a stale write:
	// the damage a paused holder did. TwoHolderRuns counts runs in which
	// two clients held the lock at once by their own account.
	StaleRuns, TwoHolderRuns int
	StaleAccepted            int
	StaleRejected            int
	// Tokens is whether the backend handed out fencing tokens, and
	// TokensIncreasing whether they grew in every run.
	Tokens, TokensIncreasing bool
	// Failover is, for each holder that a fault hit, the time from the
	// fault to the next acquisition by another client.
	Failover []time.Duration
	// Acquire is every successful acquisition's latency.
	Acquire []time.Duration
	// Acquisitions and Seconds give the throughput: successful
	// acquisitions per second of the runs.
	Acquisitions int
	Seconds      float64
	// DuringFaults counts acquisitions that completed while a fault was
	// in force: ok, and all (ok, failed, unknown).
	DuringFaultsOK, DuringFaults int
}

// Build reads the run folders and groups them into rows, in the order in
// which their backends first appear.
func Build(dirs []string) ([]*Row, error) {
	var rows []*Row
	for _, dir := range dirs {
		info, err := runner.ReadRunInfo(dir)
		if err != nil {
			return nil, err
		}
		var rep analysis.Report
		b, err := os.ReadFile(filepath.Join(dir, "analysis.json"))
		if err != nil {
			return nil, fmt.Errorf("%s has no analysis (chaos check analyzes it): %w", dir, err)
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "analysis.json"), err)
		}
		ops, _, err := history.Read(filepath.Join(dir, "history.jsonl"))
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(rows, func(r *Row) bool {
			return r.Target == info.Target && r.Workload == info.Workload && r.Resource == info.Resource
		})
		if i < 0 {
			rows = append(rows, &Row{Target: info.Target, Workload: info.Workload, Resource: info.Resource, TokensIncreasing: true})
			i = len(rows) - 1
		}
		if err := rows[i].add(dir, rep, ops); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func (r *Row) add(dir string, rep analysis.Report, ops []history.Op) error {
	k := slices.IndexFunc(rep.Results, func(res analysis.Result) bool { return res.Checker == "lock" })
	if k < 0 {
		return fmt.Errorf("%s: not a lock run (no lock checker result)", dir)
	}
	st := rep.Results[k].Stats
	r.Runs = append(r.Runs, dir)
	accepted := stat(st, "stale_writes_accepted")
	r.StaleAccepted += accepted
	r.StaleRejected += stat(st, "stale_writes_rejected")
	if accepted > 0 {
		r.StaleRuns++
	}
	if stat(st, "mutual_exclusion_violations") > 0 {
		r.TwoHolderRuns++
	}
	if stat(st, "tokens_seen") > 0 {
		r.Tokens = true
		if inc, ok := st["tokens_strictly_increasing"].(bool); ok && !inc {
			r.TokensIncreasing = false
		}
	}
	faults := history.FaultWindows(ops)
	acquires := history.Pairs(ops, func(op *history.Op) bool { return op.Process >= 0 && op.F == history.FAcquire })
	for _, a := range acquires {
		if a.Done == nil {
			continue
		}
		ok := a.Done.Type == history.Ok
		if ok {
			r.Acquisitions++
			r.Acquire = append(r.Acquire, a.Done.Time-a.Inv.Time)
		}
		for _, f := range faults {
			if a.Done.Time >= f.Start && a.Done.Time <= f.End {
				r.DuringFaults++
				if ok {
					r.DuringFaultsOK++
				}
				break
			}
		}
	}
	if len(ops) > 0 {
		r.Seconds += ops[len(ops)-1].Time.Seconds()
	}
	r.Failover = append(r.Failover, failovers(faults, acquires)...)
	return nil
}

// failovers measures, for each fault that hit a client (c0 is process 0),
// the time from the fault's start to the next successful acquisition by
// another process.
func failovers(faults []history.FaultWindow, acquires []history.Pair) []time.Duration {
	var out []time.Duration
	for _, f := range faults {
		for _, v := range f.Victims {
			var p int
			if _, err := fmt.Sscanf(v, "c%d", &p); err != nil {
				continue
			}
			for _, a := range acquires {
				if a.Done != nil && a.Done.Type == history.Ok && a.Done.Process != p && a.Done.Time > f.Start {
					out = append(out, a.Done.Time-f.Start)
					break
				}
			}
		}
	}
	return out
}

func stat(m map[string]any, k string) int {
	switch v := m[k].(type) {
	case float64:
		return int(v)
	case int:
		return v
	}
	return 0
}

// percentile is the p-th percentile (0-100) of ds, or 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(p/100*float64(len(s))))]
}
