package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/compare"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/runner"
)

// cmdCompare runs a comparison plan (every backend with every seed) and
// writes compare.md and compare.html from the runs; given run folders
// instead, it builds the table from them.
func cmdCompare(args []string) (int, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	results := fs.String("results", "results", "folder that holds the runs")
	limit := fs.Duration("time-limit", 0, "how long to run each backend (default: the plan's)")
	usage := usageError{"usage: chaos compare PLAN [--time-limit D] | chaos compare RUN_DIR..."}
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		return exitUsage, usage
	}
	if fs.NArg() == 1 && strings.HasSuffix(fs.Arg(0), ".yaml") {
		return runComparison(fs.Arg(0), *results, *limit)
	}
	out := filepath.Join(*results, "compare", time.Now().Format("20060102T150405"))
	return writeComparison(fs.Args(), out, "comparison of "+fmt.Sprint(fs.NArg())+" runs")
}

func runComparison(file, results string, limit time.Duration) (int, error) {
	p, err := plans.Load(file)
	if err != nil {
		return exitUsage, err
	}
	if p.Compare == nil {
		return exitUsage, usageError{fmt.Sprintf("%s has no compare section: run it with chaos run", file)}
	}
	variants := p.Variants()
	for _, v := range variants {
		if limit > 0 {
			if err := v.WithTimeLimit(limit); err != nil {
				return exitUsage, err
			}
		}
		if err := runner.Validate(v); err != nil {
			return exitUsage, fmt.Errorf("%s (as %s): %w", file, v.Name, err)
		}
	}
	ctx, stop := interruptible()
	defer stop()
	var dirs []string
	for i, v := range variants {
		fmt.Fprintf(os.Stderr, "compare: run %d of %d: %s, seed %d\n", i+1, len(variants), v.Name, v.Seed)
		o, err := runOptions(v, results)
		if err != nil {
			return exitCrash, err
		}
		rep, dir, err := runner.Run(ctx, o)
		if err != nil {
			return exitCrash, fmt.Errorf("%s seed %d: %w (runs so far: %s)", v.Name, v.Seed, err, strings.Join(dirs, " "))
		}
		fmt.Fprintf(os.Stderr, "compare: %s seed %d: %s\n", v.Name, v.Seed, rep.Verdict)
		dirs = append(dirs, dir)
	}
	return writeComparison(dirs, filepath.Join(results, p.Name, time.Now().Format("20060102T150405")), p.Name)
}

func writeComparison(dirs []string, out, title string) (int, error) {
	rows, err := compare.Build(dirs)
	if err != nil {
		return exitUsage, err
	}
	if err := compare.Write(out, title, rows); err != nil {
		return exitCrash, err
	}
	md, _ := os.ReadFile(filepath.Join(out, "compare.md"))
	fmt.Printf("%s\nwritten to %s\n", md, filepath.Join(out, "compare.html"))
	return exitValid, nil
}
