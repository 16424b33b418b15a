package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/disks"
	"github.com/chaos-testing/chaos/internal/progress"
	"github.com/chaos-testing/chaos/nemesis/vdsoclock"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/runfolder"
	"github.com/chaos-testing/chaos/runner"
	"github.com/chaos-testing/chaos/targets"
)

func cmdRun(args []string) (int, error) {
	fs := newFlags("run")
	pf := addPlanFlags(fs)
	var seeds []int64
	fs.Func("seed", "seed for the fault schedule and the clients, as --set seed=N (default: the plan's)", func(v string) (err error) {
		seeds, err = parseSeeds(v, false)
		return err
	})
	fs.Func("seeds", "run the plan once with each seed, in turn, and end with a table: a range (1-20) or a list (1,5,9)", func(v string) (err error) {
		seeds, err = parseSeeds(v, true)
		return err
	})
	addMaxFindings(fs)
	expect := fs.Bool("expect", false, "exit 0 exactly when the verdict met the plan's expect field (2 when undecided, else 1)")
	asJSON := fs.Bool("json", false, "print one JSON summary on stdout; the findings go to stderr")
	results := fs.String("results", "results", "folder that holds the runs")
	file, err := parseOne(fs, args, "PLAN")
	if err != nil {
		return exitUsage, err
	}
	if isSet(fs, "seed") && isSet(fs, "seeds") {
		return exitUsage, usageError{"run: give --seed or --seeds, not both"}
	}
	// Every seed's plan is read, and bound, before the first run starts.
	var runs []*plans.Plan
	for _, sets := range pf.perSeed(seeds) {
		p, err := plans.Load(file, sets...)
		if err != nil {
			return exitUsage, err
		}
		if _, err := bind.Bind(p); err != nil {
			return exitUsage, err
		}
		if *expect && p.Expect == "" {
			return exitUsage, usageError{fmt.Sprintf("run: --expect: %s has no expect field; give one with --set expect=valid (or invalid, varies)", file)}
		}
		runs = append(runs, p)
	}
	out := io.Writer(os.Stdout)
	if *asJSON {
		out = os.Stderr
	}
	ctx, analysis, stop := interruptibleTwice()
	defer stop()
	var sums []runSummary
	for i, p := range runs {
		if len(runs) > 1 {
			fmt.Fprintf(os.Stderr, "run %d of %d: %s, seed %d\n", i+1, len(runs), p.Name, p.Seed)
		}
		o, err := runOptions(p, *results)
		if err != nil {
			return exitCrash, err
		}
		o.Analysis = analysis
		rep, dir, err := runner.Run(ctx, o)
		if dir == "" {
			return exitCrash, err // main makes a bad plan exit 254
		}
		code := report(out, rep, dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "chaos: the run did not finish cleanly: %v\nthe history written so far is in %s; check it with: chaos check %s\n", err, dir, dir)
			if code == exitValid {
				code = exitUndecided
			}
		}
		sums = append(sums, summarize(rep, dir, code, *expect))
		if ctx.Err() != nil {
			break // interrupted: the seeds left are not run
		}
	}
	many := isSet(fs, "seeds") // a list of runs, even of one
	if many {
		seedTable(out, sums)
	}
	if *asJSON {
		if err := printJSON(sums, many); err != nil {
			return exitCrash, err
		}
	}
	return worstExit(sums), nil
}

// cmdImages builds the images of the named targets (all, by default), so
// that a first run, or CI, does not wait for them.
func cmdImages(args []string) (int, error) {
	args, err := parseArgs(newFlags("images"), args, "build [TARGET...]")
	if err != nil {
		return exitUsage, err
	}
	if len(args) == 0 || args[0] != "build" {
		return exitUsage, usageError{"usage: chaos images build [TARGET...]"}
	}
	names := args[1:]
	if len(names) == 0 {
		names = targets.Targets.Names()
	}
	var ts []targets.Target
	for _, n := range names {
		t, ok := targets.Targets.Lookup(n)
		if !ok {
			return exitUsage, usageError{fmt.Sprintf("unknown target %q; expected one of %s", n, strings.Join(targets.Targets.Names(), ", "))}
		}
		// As a plan with nothing but the kind asks for it.
		bt, err := t.Bind(targets.Spec[any]{Nodes: t.DefaultNodes(), Params: t.NewParams()})
		if err != nil {
			return exitCrash, fmt.Errorf("%s: %w", n, err)
		}
		ts = append(ts, bt)
	}
	cli, err := containers.NewClient()
	if err != nil {
		return exitCrash, err
	}
	defer cli.Close()
	ctx, stop := interruptible()
	defer stop()
	for i, t := range ts {
		tag, err := t.Image(ctx, cli, os.Stderr)
		if err != nil {
			return exitCrash, fmt.Errorf("%s image: %w", names[i], err)
		}
		fmt.Printf("%s\t%s\n", names[i], tag)
	}
	return exitValid, nil
}

func cmdClean(args []string) (int, error) {
	if err := parseNone(newFlags("clean"), args); err != nil {
		return exitUsage, err
	}
	cli, err := containers.NewClient()
	if err != nil {
		return exitCrash, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A node waiting on a dead harness's disk cannot be removed until
	// the disk is aborted.
	aerr := disks.Abort()
	n, err := containers.Clean(ctx, cli, "")
	fmt.Printf("removed %d containers and networks of runs whose harness is gone (runs in progress are left alone)\n", n)
	err = reportStale(err)
	// After the containers, which had the disks mounted.
	m, derr := disks.Clean()
	if m > 0 {
		fmt.Printf("unmounted %d disks of runs whose harness is gone; what the nodes wrote is in each run's folder\n", m)
	}
	err = errors.Join(aerr, err, derr)
	// Their processes went with the containers; a clock patch left in any
	// other process by a harness that is gone is taken out too. A patch
	// names its harness, judged as a container's label is.
	patches, serr := vdsoclock.Scan()
	var restored, inUse []int
	for _, p := range patches {
		if !containers.HarnessGone(p.Owner) {
			inUse = append(inUse, p.Pid)
			continue
		}
		serr = errors.Join(serr, vdsoclock.Remove(p.Pid))
		restored = append(restored, p.Pid)
	}
	if len(restored) > 0 {
		fmt.Printf("restored the clocks of %d processes a clock fault had patched: %v\n", len(restored), restored)
	}
	if len(inUse) > 0 {
		fmt.Printf("left the clocks of %d processes patched by runs in progress: %v\n", len(inUse), inUse)
	}
	if err := errors.Join(err, serr); err != nil {
		return exitCrash, err
	}
	return exitValid, nil
}

// reportStale prints the networks the engine keeps with nothing attached
// (containers.StaleNetworkError), which chaos cannot remove and which
// hold nothing of a run, and returns the other errors of err.
func reportStale(err error) error {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var rest []error
	for _, e := range errs {
		var stale containers.StaleNetworkError
		if errors.As(e, &stale) {
			fmt.Printf("note: %v\n", stale)
			continue
		}
		rest = append(rest, e)
	}
	return errors.Join(rest...)
}

// interruptible is a context that Ctrl-C and SIGTERM cancel: a run stops,
// and its teardown still runs to the end.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// interruptibleTwice is for a run: the first Ctrl-C or SIGTERM cancels
// ctx (the run stops, heals and tears down), and the second cancels
// analysis (the judging of what was written stops, its verdict unknown).
func interruptibleTwice() (ctx, analysis context.Context, stop func()) {
	ctx, cancelRun := context.WithCancel(context.Background())
	analysis, cancelAnalysis := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for _, cancel := range []context.CancelFunc{cancelRun, cancelAnalysis} {
			select {
			case <-sigs:
				cancel()
			case <-done:
				return
			}
		}
	}()
	return ctx, analysis, func() {
		signal.Stop(sigs)
		close(done)
		cancelRun()
		cancelAnalysis()
	}
}

// runOptions runs p with this executable as the client and resource
// binary, its runs in results, progress on stderr.
func runOptions(p *plans.Plan, results string) (runner.Options, error) {
	self, err := os.Executable()
	if err != nil {
		return runner.Options{}, err
	}
	return runner.Options{Plan: p, Results: results, Binary: self, Out: os.Stderr, Terminal: progress.IsTerminal(os.Stderr)}, nil
}

// report prints the verdict and findings and returns the exit code.
func report(w io.Writer, rep analysis.Report, dir string) int {
	// A history file from elsewhere has no run.json: no cluster, and
	// nothing to say about how its run ended.
	info, infoErr := runfolder.Folder(dir).ReadInfo()
	if infoErr == nil && info.Ready > 0 {
		fmt.Fprintf(w, "cluster: %d %s nodes, ready for the first operation %.1fs after the first container started\n", info.Nodes, info.Target, info.Ready.Seconds())
	}
	if rep.Truncated != "" {
		fmt.Fprintf(w, "note: %s\n", rep.Truncated)
	}
	for _, r := range rep.Results {
		fmt.Fprintf(w, "%s: %s", r.Checker, r.Verdict)
		switch {
		case r.FindingsTotal > 0 && r.Verdict == analysis.Valid:
			// Findings listed beside a verdict they do not count in (chaos's
			// own garbage-read beside Elle's verdict, say).
			fmt.Fprintf(w, " (%d listed beside it, not counted: %s)", r.FindingsTotal, r.KindCounts())
		case r.FindingsTotal > 0:
			fmt.Fprintf(w, " (%d findings: %s)", r.FindingsTotal, r.KindCounts())
		}
		fmt.Fprintln(w)
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		printFindings(w, r, dir)
	}
	if why := info.Incomplete(); infoErr == nil && why != "" {
		fmt.Fprintf(w, "incomplete: %s\n  the run did not finish cleanly: the verdict judges only the history it wrote, and is never valid\n",
			strings.ReplaceAll(why, "\n", "\n  "))
	}
	fmt.Fprintf(w, "verdict: %s (%d history entries, analyzed in %s); details in %s\n", rep.Verdict, rep.Ops, rep.Took.Round(time.Millisecond), dir)
	if met := runfolder.Expected(info.Expect, rep.Verdict); infoErr == nil && met != nil {
		fmt.Fprintf(w, "expected: %s, %s\n", info.Expect, metText(*met))
	}
	switch rep.Verdict {
	case analysis.Valid:
		return exitValid
	case analysis.Invalid:
		return exitAnomaly
	}
	return exitUndecided
}

// printFindings shows the first few findings of each kind with their
// proofs; analysis.json has them all.
func printFindings(w io.Writer, r analysis.Result, dir string) {
	shown, hidden := analysis.FirstOfEachKind(r.Findings, 3)
	for _, f := range shown {
		fmt.Fprintf(w, "  %s: %s\n", f.Kind, f.Explanation)
		for _, op := range f.Ops {
			fmt.Fprintf(w, "      %s\n", op)
		}
		if len(f.ResourceLines) > 0 {
			fmt.Fprintf(w, "      resource.jsonl lines %v\n", f.ResourceLines)
		}
	}
	if hidden > 0 {
		fmt.Fprintf(w, "  ... %d more listed in %s\n", hidden, runfolder.Folder(dir).Path(runfolder.AnalysisFile))
	}
	if unlisted := r.FindingsTotal - len(r.Findings); unlisted > 0 {
		fmt.Fprintf(w, "  ... %d more counted but not listed (--max-findings %d)\n", unlisted, analysis.FindingsCap)
	}
}
