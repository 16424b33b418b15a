// Package compare puts backends, versions and configurations side by side:
// from runs of one workload and one fault schedule, a row per backend,
// server version, settings and resource mode (fenced, unfenced) with what
// those runs measured (their verdicts and findings, latencies and ok
// rates in and out of faults, and for locks what the lock checker
// counted), each row naming the runs it came from. Whether the runs do share one workload
// and schedule is checked from their plans, and said; runs that did not
// finish cleanly are left out and named.
package compare

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/lock"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/runfolder"
)

// Table is a comparison of runs.
type Table struct {
	Rows []*Row
	// Groups are the runs' schedules, in the order in which they first
	// appear: one if the runs share theirs.
	Groups []*Group
	// Incomplete are the runs left out because they did not finish
	// cleanly: one cut short has not shown what the whole schedule does,
	// and counting it would pass it off as a clean run.
	Incomplete []LeftOut
}

// LeftOut is a run left out of the table, and why.
type LeftOut struct{ Run, Why string }

// Row is what the runs of one backend, version, settings, resource and
// read mode, made with one schedule, measured.
type Row struct {
	Target, Workload, Resource string
	// ReadMode is the register's read_mode, "" for a workload without one.
	ReadMode string
	// Version is what the servers reported, each version once.
	Version string
	// Config is the settings the servers ran with; Settings, those of
	// them that differ between the table's rows, as "key=value".
	Config   map[string]string
	Settings []string
	// Schedule is the label of the runs' schedule group when the table has
	// several, "" when it has one.
	Schedule string
	group    *Group
	Runs     []string // run folders
	// RunVerdicts and RunFindings are, for each of Runs in turn, its
	// verdict and how many findings its checkers counted (listed or not).
	RunVerdicts []analysis.Verdict
	RunFindings []int
	// Invalid and Unknown count the runs with each verdict; Findings
	// counts the findings the runs list, by kind, and Unlisted those past
	// the first few each checker lists (their kinds are not recorded).
	Invalid, Unknown int
	Findings         map[string]int
	Unlisted         int
	// OK, Failed and Indeterminate count the clients' completed
	// operations by outcome.
	OK, Failed, Indeterminate int
	// Lock is whether the runs were judged by the lock checker, whose
	// figures the fields below hold.
	Lock bool
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
	// Acquisitions and Seconds give the throughput: successful
	// acquisitions per second of the runs.
	Acquisitions int
	Seconds      float64
	// The figures below are of the row's measured operations: a lock's
	// acquisitions, or else every client operation. Latency is each ok
	// one's, from invocation to completion (for a lock, waiting included).
	Latency []time.Duration
	// LatencyByF is the latency of every ok client operation, by its f
	// (for a lock, releases and writes as well as acquisitions).
	LatencyByF map[string][]time.Duration
	// DuringFaults counts those that completed while a fault was in
	// force: ok, and all (ok, failed, unknown); OutsideFaults the others;
	// FaultSeconds is how long some fault was in force, of Seconds. What
	// faults cost is the difference of the ok rates, in and out of them.
	DuringFaultsOK, DuringFaults   int
	OutsideFaultsOK, OutsideFaults int
	FaultSeconds                   float64
}

// Build reads the run folders and groups them into rows, in the order in
// which their backends first appear.
func Build(dirs []string) (*Table, error) {
	t := &Table{}
	for _, dir := range dirs {
		f := runfolder.Folder(dir)
		info, err := f.ReadInfo()
		if err != nil {
			return nil, err
		}
		if why := info.Incomplete(); why != "" {
			t.Incomplete = append(t.Incomplete, LeftOut{dir, why})
			continue
		}
		a, err := f.ReadAnalysis()
		if err != nil {
			return nil, err
		}
		rep := a.Report
		ops, _, err := f.ReadHistory()
		if err != nil {
			return nil, err
		}
		sched, mode, _ := readSchedule(dir) // unreadable: the run's schedule is unknown
		var g *Group
		t.Groups, g = groupOf(t.Groups, sched)
		g.Runs = append(g.Runs, dir)
		version := strings.Join(slices.Compact(slices.Sorted(maps.Values(info.Servers))), ", ")
		i := slices.IndexFunc(t.Rows, func(r *Row) bool {
			return r.Target == info.Target && r.Workload == info.Workload && r.Resource == info.Resource && r.ReadMode == mode && r.group == g &&
				r.Version == version && maps.Equal(r.Config, info.Config)
		})
		if i < 0 {
			t.Rows = append(t.Rows, &Row{Target: info.Target, Workload: info.Workload, Resource: info.Resource, ReadMode: mode, group: g,
				Version: version, Config: info.Config, Findings: map[string]int{}, TokensIncreasing: true})
			i = len(t.Rows) - 1
		}
		t.Rows[i].add(dir, rep, ops)
	}
	if !t.Shared() {
		for _, r := range t.Rows {
			r.Schedule = r.group.Label
		}
	}
	t.settings()
	return t, nil
}

// settings fills each row's Settings: the settings of its target whose
// value is not the same in every row of that target (absent counts).
func (t *Table) settings() {
	for _, r := range t.Rows {
		keys := map[string]bool{}
		for _, o := range t.Rows {
			if o.Target == r.Target {
				for k := range o.Config {
					keys[k] = true
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			v, ok := r.Config[k]
			same := true
			for _, o := range t.Rows {
				w, ok2 := o.Config[k]
				same = same && (o.Target != r.Target || (ok == ok2 && v == w))
			}
			if !same && ok {
				r.Settings = append(r.Settings, k+"="+v)
			}
		}
	}
}

// LockTable says whether every row is of lock runs: the table then shows
// what the lock checker counted.
func (t *Table) LockTable() bool {
	return len(t.Rows) > 0 && !slices.ContainsFunc(t.Rows, func(r *Row) bool { return !r.Lock })
}

func (r *Row) add(dir string, rep analysis.Report, ops []history.Op) {
	r.Runs = append(r.Runs, dir)
	r.RunVerdicts = append(r.RunVerdicts, rep.Verdict)
	found := 0
	for _, res := range rep.Results {
		found += max(res.FindingsTotal, len(res.Findings))
	}
	r.RunFindings = append(r.RunFindings, found)
	switch rep.Verdict {
	case analysis.Invalid:
		r.Invalid++
	case analysis.Unknown:
		r.Unknown++
	}
	for _, res := range rep.Results {
		for _, f := range res.Findings {
			r.Findings[f.Kind]++
		}
		r.Unlisted += max(0, res.FindingsTotal-len(res.Findings))
	}
	for _, op := range ops {
		if op.Process < 0 {
			continue
		}
		switch op.Type {
		case history.Ok:
			r.OK++
		case history.Fail:
			r.Failed++
		case history.Info:
			r.Indeterminate++
		}
	}
	if len(ops) > 0 {
		r.Seconds += ops[len(ops)-1].Time.Seconds()
	}
	// The lock checker's figures, found by their type: a run judged by
	// it is a lock run.
	var lf lock.Figures
	lockRun := false
	for _, res := range rep.Results {
		if f, ok := analysis.FiguresOf[lock.Figures](res); ok {
			lf, lockRun = f, true
			break
		}
	}
	measured := history.Pairs(ops, func(op *history.Op) bool {
		return op.Process >= 0 && (!lockRun || op.F == lockop.FAcquire)
	})
	faults := history.FaultWindows(ops)
	r.measure(measured, faults)
	r.latencyByF(ops)
	r.FaultSeconds += faultTime(faults).Seconds()
	if !lockRun {
		return
	}
	r.Lock = true
	r.StaleAccepted += lf.StaleWritesAccepted
	r.StaleRejected += lf.StaleWritesRejected
	if lf.StaleWritesAccepted > 0 {
		r.StaleRuns++
	}
	if lf.ExclusionViolations > 0 {
		r.TwoHolderRuns++
	}
	if lf.TokensSeen > 0 {
		r.Tokens = true
		r.TokensIncreasing = r.TokensIncreasing && lf.TokensStrictlyIncreasing
	}
	for _, a := range measured {
		if a.Done != nil && a.Done.Type == history.Ok {
			r.Acquisitions++
		}
	}
	r.Failover = append(r.Failover, failovers(faults, measured)...)
}

// measure adds the completed operations' latencies (ok ones) and counts
// them by outcome and by whether a fault was in force at completion.
func (r *Row) measure(pairs []history.Pair, faults []history.FaultWindow) {
	for _, p := range pairs {
		if p.Done == nil {
			continue
		}
		ok := p.Done.Type == history.Ok
		if ok {
			r.Latency = append(r.Latency, p.Done.Time-p.Inv.Time)
		}
		during := slices.ContainsFunc(faults, func(f history.FaultWindow) bool {
			return p.Done.Time >= f.Start && p.Done.Time <= f.End
		})
		if during {
			r.DuringFaults++
			if ok {
				r.DuringFaultsOK++
			}
		} else {
			r.OutsideFaults++
			if ok {
				r.OutsideFaultsOK++
			}
		}
	}
}

// latencyByF adds the latency of every ok client operation under its f.
func (r *Row) latencyByF(ops []history.Op) {
	for _, p := range history.Pairs(ops, func(op *history.Op) bool { return op.Process >= 0 }) {
		if p.Done == nil || p.Done.Type != history.Ok {
			continue
		}
		if r.LatencyByF == nil {
			r.LatencyByF = map[string][]time.Duration{}
		}
		r.LatencyByF[p.Inv.F] = append(r.LatencyByF[p.Inv.F], p.Done.Time-p.Inv.Time)
	}
}

// RunsWithFindings counts the row's runs whose checkers found something.
func (r *Row) RunsWithFindings() int {
	n := 0
	for _, f := range r.RunFindings {
		if f > 0 {
			n++
		}
	}
	return n
}

// FindingsCounted is every finding of the row's runs, listed or not.
func (r *Row) FindingsCounted() int {
	n := 0
	for _, f := range r.RunFindings {
		n += f
	}
	return n
}

// faultTime is how long some fault was in force: the length of the
// union of the windows, which overlap when faults do.
// faults are in order of start, as history.FaultWindows gives them.
func faultTime(faults []history.FaultWindow) time.Duration {
	var total, end time.Duration
	for _, w := range faults {
		start := max(w.Start, end)
		if w.End > start {
			total += w.End - start
		}
		end = max(end, w.End)
	}
	return total
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

// percentile is the p-th percentile (0-100) of ds, or 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(p/100*float64(len(s))))]
}
