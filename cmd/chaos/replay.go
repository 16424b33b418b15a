package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/replay"
	"github.com/chaos-testing/chaos/runfolder"
	"github.com/chaos-testing/chaos/runner"
)

// replayFile is the plan of a run's replays, written into its folder.
const replayFile = "replay.yaml"

// cmdReplay runs a stored run again, times times: its plan and seed, each
// fault it recorded at the same offset on the same victims (package
// replay), and says of each replay whether it found again a kind of
// finding the run found. Exit 1 if any did, 0 if none did.
func cmdReplay(args []string) (int, error) {
	fs := newFlags("replay")
	times := fs.Int("times", 1, "how many replays to run")
	results := fs.String("results", "results", "folder that holds the replays' runs")
	dir, err := parseOne(fs, args, "DIR")
	if err != nil {
		return exitUsage, err
	}
	if *times < 1 {
		return exitUsage, usageError{fmt.Sprintf("replay: --times %d: expected at least 1", *times)}
	}
	original, file, err := replayPlan(dir)
	if err != nil {
		return exitUsage, err
	}
	fmt.Printf("replaying %s: plan %s (the same seed; each fault at its offset, on its victims)\n", dir, file)
	found := 0
	for i := 1; i <= *times; i++ {
		rep, rdir, interrupted, err := runPlanFile(file, *results)
		if rdir == "" {
			return exitCrash, err
		}
		same := replay.Same(original, rep)
		if len(same) > 0 {
			found++
		}
		fmt.Printf("replay %d of %d: %s, %s (%s)\n", i, *times, rep.Verdict, foundAgain(same, rep), rdir)
		if err != nil {
			fmt.Printf("  the replay did not finish cleanly: %v\n", err)
		}
		if interrupted {
			*times = i
			break
		}
	}
	fmt.Printf("found again in %d of %d replays\n", found, *times)
	if found > 0 {
		return exitAnomaly, nil
	}
	return exitValid, nil
}

// runPlanFile runs the plan in file once, its runs in results, and says
// whether Ctrl-C interrupted it. The run's folder is "" if it never began.
func runPlanFile(file, results string) (rep analysis.Report, dir string, interrupted bool, err error) {
	p, err := plans.Load(file)
	if err != nil {
		return rep, "", false, err
	}
	ctx, analysisCtx, stop := interruptibleTwice()
	defer stop()
	o, err := runOptions(p, results)
	if err != nil {
		return rep, "", false, err
	}
	o.Analysis = analysisCtx
	rep, dir, err = runner.Run(ctx, o)
	return rep, dir, ctx.Err() != nil, err
}

// replayPlan writes the replay plan of run dir into it, with a header
// saying what it is, and returns the run's report and the plan's path.
func replayPlan(dir string) (analysis.Report, string, error) {
	f := runfolder.Folder(dir)
	a, err := f.ReadAnalysis()
	if err != nil {
		return analysis.Report{}, "", err
	}
	info, err := f.ReadInfo()
	if err != nil {
		return analysis.Report{}, "", err
	}
	p, err := plans.Load(f.Path(runfolder.PlanFile))
	if err != nil {
		return analysis.Report{}, "", err
	}
	p.Seed = info.Seed
	b, err := bind.Bind(p)
	if err != nil {
		return analysis.Report{}, "", err
	}
	h, _, err := f.ReadHistory()
	if err != nil {
		return analysis.Report{}, "", err
	}
	q, notes, err := replay.Plan(b, h)
	if err != nil {
		return analysis.Report{}, "", fmt.Errorf("%s: %w", dir, err)
	}
	var head strings.Builder
	fmt.Fprintf(&head, "# Replay of %s (plan %s, seed %d): each fault the run recorded,\n", dir, p.Name, p.Seed)
	head.WriteString("# injected once at the same offset from the fault schedule's start, on\n# the victims it hit, by name. What the run found: ")
	if kinds := replay.Kinds(a.Report); len(kinds) > 0 {
		head.WriteString(strings.Join(kinds, "; ") + ".\n")
	} else {
		head.WriteString("nothing.\n")
	}
	for _, n := range notes {
		head.WriteString("# " + n + "\n")
	}
	path := f.Path(replayFile)
	return a.Report, path, writePlan(path, head.String(), q)
}

// writePlan writes p to path, under a header of comments.
func writePlan(path, head string, p *plans.Plan) error {
	body, err := p.YAML()
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(head), body...), 0o644)
}

// foundAgain says what a replay found of what the run found, and the
// entries of its first such finding.
func foundAgain(same []string, rep analysis.Report) string {
	if len(same) == 0 {
		if kinds := replay.Kinds(rep); len(kinds) > 0 {
			return "found something else: " + strings.Join(kinds, "; ")
		}
		return "found nothing"
	}
	s := "found again: " + strings.Join(same, "; ")
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			if r.Checker+": "+f.Kind == same[0] {
				var ops []string
				for _, op := range f.Ops[:min(len(f.Ops), 6)] {
					ops = append(ops, fmt.Sprintf("#%d", op.Index))
				}
				return s + " (first on " + strings.Join(ops, ", ") + ")"
			}
		}
	}
	return s
}
