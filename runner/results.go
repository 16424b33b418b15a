package runner

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/progress"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/report"
	"github.com/chaos-testing/chaos/runfolder"
	"github.com/chaos-testing/chaos/targets"
	"github.com/chaos-testing/chaos/workloads"
)

// recordEnd writes the end record of the run in dir: clean if runErr is nil.
func recordEnd(dir string, runErr error) error {
	end := &runfolder.End{At: time.Now()}
	if runErr != nil {
		end.Error = runErr.Error()
	}
	if err := runfolder.Folder(dir).UpdateInfo(func(i *runfolder.Info) { i.End = end }); err != nil {
		return fmt.Errorf("recording the end of the run: %w", err)
	}
	return nil
}

// writeRunInfo writes the run's run.json and the plan as it runs.
func writeRunInfo(dir, runID string, p *bind.Plan, started time.Time) error {
	plan, err := p.YAML()
	if err != nil {
		return err
	}
	info := runfolder.Info{RunID: runID, Plan: p.Name, Target: p.Target.Kind, Nodes: p.Target.Nodes, PlanFile: p.Written.File, Seed: p.Seed, Started: started,
		Workload: p.Workload.Kind, Resource: p.Workload.Needs.Resource, Expect: p.Written.Expect}
	for _, o := range p.Written.Overrides {
		info.Overrides = append(info.Overrides, o.String())
	}
	if c, ok := p.Target.Target.(targets.Configured); ok {
		info.Config = c.Settings()
	}
	f := runfolder.Folder(dir)
	return errors.Join(os.WriteFile(f.Path(runfolder.PlanFile), plan, 0o644), f.WriteInfo(info))
}

// dockerModule is the Docker client library the harness drives runs with.
const dockerModule = "github.com/docker/docker"

// Versions lists the versions of chaos itself (Build), Go, the Docker
// client and the given client libraries (modules) that the chaos binary,
// which the harness and the clients run, was built with. A module
// missing from the build is recorded as such.
func Versions(binary string, modules []string) (map[string]string, error) {
	bi, err := buildinfo.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("versions of %s: %w", binary, err)
	}
	v := map[string]string{"chaos": Build(bi), "go": bi.GoVersion}
	for _, m := range append([]string{dockerModule}, modules...) {
		v[m] = "not in this build"
		if i := slices.IndexFunc(bi.Deps, func(d *debug.Module) bool { return d.Path == m }); i >= 0 {
			v[m] = bi.Deps[i].Version
		}
	}
	return v, nil
}

// Build names the build of chaos that bi describes: its module version,
// and the VCS revision it was built from, "modified" if the work tree had
// changes (what go build records with -buildvcs).
func Build(bi *debug.BuildInfo) string {
	rev, modified := "", ""
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case s.Key == "vcs.modified" && s.Value == "true":
			modified = ", modified"
		}
	}
	if rev == "" {
		return bi.Main.Version + " (no VCS revision recorded)"
	}
	return fmt.Sprintf("%s (revision %s%s)", bi.Main.Version, rev, modified)
}

// endedShort says why the history's record of the members the cluster
// ended with (nemesis.FinalMembers) makes the run unfinished, or "": a
// cluster that did not end with its original members. drawn holds every
// nemesis entry, sampled or not.
func endedShort(drawn []history.Op) string {
	for _, op := range drawn {
		if op.Process == history.Nemesis && op.F == nemesis.FinalMembers && op.Type != history.Invoke && op.Error != "" {
			return "the cluster did not end with its original members: " + op.Error
		}
	}
	return ""
}

// judgeRun is the run's verdict: the history's, except that a run that did
// not finish cleanly is never valid. The history it wrote may be, but what
// the rest of the run would have shown is unknown; an anomaly found in it
// is one all the same.
func judgeRun(info runfolder.Info, rep analysis.Report) analysis.Report {
	if info.Incomplete() != "" {
		rep.Verdict = analysis.Worst(rep.Verdict, analysis.Unknown)
	}
	return rep
}

// Analyze judges the run stored in dir and writes dir/analysis.json. It
// reads what is on disk, so it works on a run that was interrupted; one
// that did not finish cleanly (see runfolder.Info.Incomplete) is at best unknown.
// How far a long analysis has come is shown on out (nil: nowhere).
func Analyze(ctx context.Context, dir string, out io.Writer) (analysis.Report, error) {
	f := runfolder.Folder(dir)
	info, err := f.ReadInfo()
	if err != nil {
		return analysis.Report{}, err
	}
	w, ok := workloads.Workloads.Lookup(info.Workload)
	if !ok {
		return analysis.Report{}, fmt.Errorf("%s: unknown workload %q", dir, info.Workload)
	}
	if out == nil {
		out = io.Discard
	}
	start := time.Now()
	task := progress.Start(out, "analysis:")
	final := ""
	defer func() { task.Stop(final) }()
	histPath := f.Path(runfolder.HistoryFile)
	var size int64
	if st, err := os.Stat(histPath); err == nil {
		size = st.Size()
	}
	config := info.Config
	if config == nil {
		config = map[string]string{} // known: the target's defaults
	}
	in := analysis.Input{ResourceMode: info.Resource, Dir: dir, Changes: w.Changes(), Config: config,
		Progress: func(checker string, done, total int) { task.Set(int64(done), int64(total), "checking "+checker) }}
	res, rtrunc, err := history.ReadResourceLog(f.Path(runfolder.ResourceFile))
	if err != nil && !os.IsNotExist(err) {
		return analysis.Report{}, err
	}
	in.Resource = res
	read := func(what string) func(int64) {
		return func(read int64) { task.Set(read>>20, size>>20, what) }
	}
	checkers := bind.Checkers(w)
	var a analyzed
	how := ""
	if size >= StreamAbove && analysis.Streamable(checkers) {
		how = ", read as a stream"
		in.Progress = nil // keys come batch by batch: the bytes read say how far it is
		a, err = analyzeStream(ctx, histPath, checkers, in, read("MB of history read, 1st pass: where each key ends"), read("MB of history judged, 2nd pass"))
	} else {
		a, err = analyzeWhole(ctx, histPath, checkers, in, read("MB of history read"))
	}
	if err != nil {
		return analysis.Report{}, err
	}
	if why := endedShort(a.drawn); why != "" && info.Incomplete() == "" {
		// The history says the run did not finish cleanly, whatever
		// run.json says (a copied history, an error lost): every
		// artifact must say so too.
		info.End.Error = why
		if err := f.UpdateInfo(func(i *runfolder.Info) { i.End = info.End }); err != nil {
			return analysis.Report{}, err
		}
	}
	rep := judgeRun(info, a.rep)
	noteReversals(&rep, a.reversals)
	noteFaults(&rep, history.FaultWindows(a.drawn))
	for _, t := range []*history.Truncated{a.truncated, rtrunc} {
		if t != nil {
			rep.Truncated = strings.TrimSpace(rep.Truncated + " " + t.Error())
		}
	}
	met := runfolder.Expected(info.Expect, rep.Verdict)
	if err := f.WriteAnalysis(runfolder.Analysis{Report: rep, Incomplete: info.Incomplete(), Expect: info.Expect, AsExpected: met}); err != nil {
		return rep, err
	}
	if err := f.UpdateInfo(func(i *runfolder.Info) { i.AsExpected = met }); err != nil {
		return rep, err
	}
	info.AsExpected = met
	task.Set(0, 0, "writing the report")
	err = writeReport(dir, info, rep, a.drawn, a.every)
	if took := time.Since(start); took >= time.Second {
		// A quick analysis needs no word; a long one says what it took.
		final = fmt.Sprintf("analysis: %d entries in %.1fs%s", rep.Ops, took.Seconds(), how)
	}
	return rep, err
}

// StreamAbove is the size of history file from which Analyze reads the
// history as a stream and judges it in batches of whole parts
// (analysis.RunStream) rather than in memory, where the checkers allow:
// a soak of hours does not fit. chaos check --stream sets it.
var StreamAbove int64 = 256 << 20

const (
	// streamBatch is about how many entries a batch of a streamed
	// analysis holds.
	streamBatch = 200_000
	// drawnOps bounds the client operations the report of a history read
	// as a stream draws.
	drawnOps = 100_000
)

// analyzed is what the analysis of a history gives the report.
type analyzed struct {
	rep       analysis.Report
	reversals history.Reversals
	truncated *history.Truncated
	// drawn is what the report draws: the history, or a sample of one
	// client operation in every.
	drawn []history.Op
	every int
}

// analyzeWhole reads the history at path into memory and judges it.
func analyzeWhole(ctx context.Context, path string, checkers []analysis.Checker, in analysis.Input, read func(int64)) (analyzed, error) {
	ops, trunc, err := history.ReadProgress(path, read)
	if err != nil && !os.IsNotExist(err) {
		return analyzed{}, err
	}
	in.History = ops
	return analyzed{rep: analysis.Run(ctx, checkers, in), reversals: history.FindReversals(ops), truncated: trunc, drawn: ops, every: 1}, nil
}

// analyzeStream judges the history at path as a stream (twice read),
// sampling it for the report on the way.
func analyzeStream(ctx context.Context, path string, checkers []analysis.Checker, in analysis.Input, read1, read2 func(int64)) (analyzed, error) {
	var a analyzed
	var rev history.ReversalScan
	sample := history.NewSample(drawnOps)
	passes := 0
	src := func(each func(history.Op) error) error {
		passes++
		first := passes == 1
		read := read2
		if first {
			read = read1
		}
		trunc, err := history.Each(path, read, func(op history.Op) error {
			if first {
				rev.See(op)
				sample.See(op)
			} else if passes == 2 {
				rev.Cross(op)
			}
			return each(op)
		})
		if passes == 2 && err == nil {
			rev.Done()
		}
		a.truncated = trunc
		return err
	}
	rep, err := analysis.RunStream(ctx, checkers, in, src, streamBatch)
	if err != nil {
		return analyzed{}, err
	}
	a.rep, a.reversals, a.drawn, a.every = rep, rev.Reversals, sample.Ops(), sample.Every()
	return a, nil
}

// reportHistory is what a report draws of the history at path: the
// history, or, as analyzeStream samples it, a sample of one client
// operation in every.
func reportHistory(path string) ([]history.Op, int, error) {
	st, err := os.Stat(path)
	if err != nil || st.Size() < StreamAbove {
		ops, _, err := history.Read(path)
		return ops, 1, err
	}
	sample := history.NewSample(drawnOps)
	_, err = history.Each(path, nil, func(op history.Op) error {
		sample.See(op)
		return nil
	})
	return sample.Ops(), sample.Every(), err
}

// Report writes dir/report.html for a stored run, from its analysis.json,
// or analyzes the run first if it has none.
func Report(ctx context.Context, dir string) error {
	f := runfolder.Folder(dir)
	info, err := f.ReadInfo()
	if err != nil {
		return err
	}
	a, err := f.ReadAnalysis()
	if errors.Is(err, runfolder.ErrNotAnalyzed) {
		_, err = Analyze(ctx, dir, nil)
		return err
	}
	if err != nil {
		return err
	}
	ops, every, err := reportHistory(f.Path(runfolder.HistoryFile))
	if err != nil && !os.IsNotExist(err) { // a run that wrote none
		return err
	}
	return writeReport(dir, info, judgeRun(info, a.Report), ops, every)
}

func writeReport(dir string, info runfolder.Info, rep analysis.Report, ops []history.Op, every int) error {
	return report.Write(report.Run{Dir: dir, Plan: info.Plan, Seed: info.Seed, Target: info.Target, Nodes: info.Nodes,
		Workload: info.Workload, Resource: info.Resource, Started: info.Started, Versions: info.Versions, Servers: info.Servers, Config: info.Config, Report: rep, History: ops,
		SampledEvery: every, Incomplete: info.Incomplete(), Expect: info.Expect, AsExpected: info.AsExpected})
}

// WriteIndex rebuilds results/index.html from the run folders under
// results: every run with a run.json, newest first; a run not analyzed
// yet (or interrupted before it was) shows as "not analyzed", and one that
// did not finish cleanly says so and why.
func WriteIndex(results string) error {
	var runs []report.IndexEntry
	for _, f := range runfolder.All(results) {
		info, err := f.ReadInfo()
		if err != nil {
			continue // not a run of ours
		}
		e := report.IndexEntry{Plan: info.Plan, Seed: info.Seed, Started: info.Started, Verdict: report.NotAnalyzed, Incomplete: info.Incomplete(),
			Expect: info.Expect, AsExpected: info.AsExpected, Target: info.Target, Workload: info.Workload, Chaos: info.Versions["chaos"]}
		for _, v := range info.Servers {
			e.Versions = append(e.Versions, v)
		}
		slices.Sort(e.Versions)
		e.Versions = slices.Compact(e.Versions)
		if info.End != nil && !info.Started.IsZero() {
			e.Duration = info.End.At.Sub(info.Started)
		}
		e.Path, _ = filepath.Rel(results, string(f))
		e.Path = filepath.ToSlash(e.Path)
		if a, err := f.ReadAnalysis(); err == nil && a.Verdict != "" {
			e.Verdict = string(a.Verdict)
			e.Findings = report.FindingsByKind(a.Report)
		}
		runs = append(runs, e)
	}
	slices.SortFunc(runs, func(a, b report.IndexEntry) int { return b.Started.Compare(a.Started) })
	return report.WriteIndex(results, runs)
}
