package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/progress"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/report"
	"github.com/chaos-testing/chaos/workloads"
)

// RunInfo is run.json: what was run, with which seed and software.
type RunInfo struct {
	// RunID labels the run's containers and network (label chaos.run).
	RunID    string            `json:"run_id"`
	Plan     string            `json:"plan"`
	PlanFile string            `json:"plan_file"`
	Seed     int64             `json:"seed"`
	Started  time.Time         `json:"started"`
	Workload string            `json:"workload"`
	Resource string            `json:"resource"`
	Versions map[string]string `json:"versions"`
	// Nodes and Ready: the cluster's size, and how long it took from the
	// first container's start until every node answered.
	Target string        `json:"target"`
	Nodes  int           `json:"nodes"`
	Ready  time.Duration `json:"ready_ns,omitempty"`
}

func writeRunInfo(dir, runID string, p *plans.Plan, started time.Time) error {
	plan, err := yaml.Marshal(p)
	if err != nil {
		return err
	}
	info := RunInfo{RunID: runID, Plan: p.Name, Target: p.Target.Kind, Nodes: p.Target.Nodes, PlanFile: p.File, Seed: p.Seed, Started: started,
		Workload: p.Workload.Kind, Resource: p.Workload.Resource, Versions: versions()}
	return errors.Join(
		os.WriteFile(filepath.Join(dir, "plan.yaml"), plan, 0o644),
		writeJSON(filepath.Join(dir, "run.json"), info))
}

// versions lists the client libraries this binary was built with.
func versions() map[string]string {
	v := map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v["go"] = bi.GoVersion
	for _, d := range bi.Deps {
		if strings.Contains(d.Path, "redsync") || strings.Contains(d.Path, "go-redis") || strings.Contains(d.Path, "docker/docker") {
			v[d.Path] = d.Version
		}
	}
	return v
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadRunInfo reads dir/run.json.
func ReadRunInfo(dir string) (RunInfo, error) {
	var info RunInfo
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return info, fmt.Errorf("%s is not a run folder: %w", dir, err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("%s: %w", filepath.Join(dir, "run.json"), err)
	}
	return info, nil
}

func updateRunInfo(dir string, change func(*RunInfo)) error {
	info, err := ReadRunInfo(dir)
	if err != nil {
		return err
	}
	change(&info)
	return writeJSON(filepath.Join(dir, "run.json"), info)
}

// Analyze judges the run stored in dir and writes dir/analysis.json. It
// reads what is on disk, so it works on a run that was interrupted. How far
// a long analysis has come is shown on out (nil: nowhere).
func Analyze(ctx context.Context, dir string, out io.Writer) (analysis.Report, error) {
	info, err := ReadRunInfo(dir)
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
	histPath := filepath.Join(dir, "history.jsonl")
	var size int64
	if st, err := os.Stat(histPath); err == nil {
		size = st.Size()
	}
	ops, trunc, err := history.ReadProgress(histPath, func(read int64) {
		task.Set(read>>20, size>>20, "MB of history read")
	})
	if err != nil && !os.IsNotExist(err) {
		return analysis.Report{}, err
	}
	in := analysis.Input{History: ops, ResourceMode: info.Resource, Dir: dir,
		Progress: func(checker string, done, total int) { task.Set(int64(done), int64(total), "checking "+checker) }}
	res, rtrunc, err := history.ReadResourceLog(filepath.Join(dir, "resource.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		return analysis.Report{}, err
	}
	in.Resource = res
	rep := analysis.Run(ctx, w.Checkers(), in)
	for _, t := range []*history.Truncated{trunc, rtrunc} {
		if t != nil {
			rep.Truncated = strings.TrimSpace(rep.Truncated + " " + t.Error())
		}
	}
	if err := writeJSON(filepath.Join(dir, "analysis.json"), rep); err != nil {
		return rep, err
	}
	task.Set(0, 0, "writing the report")
	err = writeReport(dir, info, rep, ops)
	if took := time.Since(start); took >= time.Second {
		// A quick analysis needs no word; a long one says what it took.
		final = fmt.Sprintf("analysis: %d entries in %.1fs", len(ops), took.Seconds())
	}
	return rep, err
}

// Report writes dir/report.html for a stored run, from its analysis.json,
// or analyzes the run first if it has none.
func Report(ctx context.Context, dir string) error {
	info, err := ReadRunInfo(dir)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, "analysis.json"))
	if os.IsNotExist(err) {
		_, err = Analyze(ctx, dir, nil)
		return err
	}
	if err != nil {
		return err
	}
	var rep analysis.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, "analysis.json"), err)
	}
	ops, _, err := history.Read(filepath.Join(dir, "history.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return writeReport(dir, info, rep, ops)
}

func writeReport(dir string, info RunInfo, rep analysis.Report, ops []history.Op) error {
	return report.Write(report.Run{Dir: dir, Plan: info.Plan, Seed: info.Seed, Target: info.Target, Nodes: info.Nodes,
		Workload: info.Workload, Resource: info.Resource, Started: info.Started, Versions: info.Versions, Report: rep, History: ops})
}

// WriteIndex rebuilds results/index.html from the run folders under
// results: every run with a run.json, newest first; a run not analyzed
// yet (or interrupted before it was) shows as "not analyzed".
func WriteIndex(results string) error {
	infos, _ := filepath.Glob(filepath.Join(results, "*", "*", "run.json"))
	var runs []report.IndexEntry
	for _, f := range infos {
		dir := filepath.Dir(f)
		info, err := ReadRunInfo(dir)
		if err != nil {
			continue // not a run of ours
		}
		e := report.IndexEntry{Plan: info.Plan, Seed: info.Seed, Started: info.Started, Verdict: "not analyzed"}
		e.Path, _ = filepath.Rel(results, dir)
		e.Path = filepath.ToSlash(e.Path)
		var rep struct{ Verdict string }
		if b, err := os.ReadFile(filepath.Join(dir, "analysis.json")); err == nil && json.Unmarshal(b, &rep) == nil && rep.Verdict != "" {
			e.Verdict = rep.Verdict
		}
		runs = append(runs, e)
	}
	slices.SortFunc(runs, func(a, b report.IndexEntry) int { return b.Started.Compare(a.Started) })
	return report.WriteIndex(results, runs)
}
