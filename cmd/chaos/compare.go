package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/compare"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/runner"
)

// cmdCompare runs a comparison plan (every backend with every seed) and
// writes compare.md and compare.html from the runs; given run folders
// instead, it builds the table from them.
func cmdCompare(args []string) (int, error) {
	fs := newFlags("compare")
	results := fs.String("results", "results", "folder that holds the runs, and where the comparison is written")
	pf := addPlanFlags(fs)
	asJSON := fs.Bool("json", false, "print the comparison as JSON on stdout")
	const what = "PLAN | chaos compare RUN_DIR..."
	args, err := parseArgs(fs, args, what)
	if err != nil {
		return exitUsage, err
	}
	if len(args) == 0 {
		return exitUsage, usageError{"usage: chaos compare PLAN [--set PATH=VALUE] [--time-limit D] | chaos compare RUN_DIR..."}
	}
	if len(args) == 1 && isPlanFile(args[0]) {
		return runComparison(args[0], *results, pf.sets, *asJSON)
	}
	for _, a := range args {
		if isPlanFile(a) {
			return exitUsage, usageError{fmt.Sprintf("compare: %s is a file: compare takes one comparison plan or run folders, not both", a)}
		}
	}
	if err := refuseFlags(fs, "stored runs", "they ran with their own plans (chaos compare PLAN --set or --time-limit runs them again)", "time-limit", "set"); err != nil {
		return exitUsage, err
	}
	out := filepath.Join(*results, "compare", time.Now().Format("20060102T150405"))
	return writeComparison(args, out, "comparison of "+fmt.Sprint(len(args))+" runs", *asJSON)
}

// isPlanFile tells a comparison plan from a run folder: a plan is a file
// (or, if it does not exist, is named like one, so that the error says so).
func isPlanFile(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")
	}
	return !st.IsDir()
}

func runComparison(file, results string, sets []plans.Override, asJSON bool) (int, error) {
	p, err := plans.Load(file, sets...)
	if err != nil {
		return exitUsage, err
	}
	if p.Compare == nil {
		return exitUsage, usageError{fmt.Sprintf("%s has no compare section: run it with chaos run", file)}
	}
	variants := bind.Variants(p)
	for _, v := range variants {
		if _, err := bind.Bind(v); err != nil {
			return exitUsage, fmt.Errorf("%s (as %s): %w", file, v.Name, err)
		}
	}
	ctx, analysis, stop := interruptibleTwice()
	defer stop()
	var dirs, failed []string
	for i, v := range variants {
		fmt.Fprintf(os.Stderr, "compare: run %d of %d: %s, seed %d\n", i+1, len(variants), v.Name, v.Seed)
		o, err := runOptions(v, results)
		if err != nil {
			return exitCrash, err
		}
		o.Analysis = analysis
		rep, dir, err := runner.Run(ctx, o)
		switch {
		case err != nil && (dir == "" || ctx.Err() != nil):
			return exitCrash, fmt.Errorf("%s seed %d: %w (runs so far: %s)", v.Name, v.Seed, err, strings.Join(dirs, " "))
		case err != nil:
			// Its folder says it is incomplete; the table leaves it out
			// and names it, and the other variants still run.
			fmt.Fprintf(os.Stderr, "compare: %s seed %d did not finish cleanly: %v\n", v.Name, v.Seed, err)
			failed = append(failed, dir)
		default:
			fmt.Fprintf(os.Stderr, "compare: %s seed %d: %s\n", v.Name, v.Seed, rep.Verdict)
		}
		dirs = append(dirs, dir)
	}
	code, err := writeComparison(dirs, filepath.Join(results, p.Name, time.Now().Format("20060102T150405")), p.Name, asJSON)
	if err == nil && len(failed) > 0 {
		return exitUndecided, fmt.Errorf("%d runs did not finish cleanly and are left out of the table: %s", len(failed), strings.Join(failed, " "))
	}
	return code, err
}

// writeComparison writes the comparison of the runs in dirs into out, and
// prints it: as Markdown, or with asJSON as JSON (the Markdown then goes
// to stderr).
func writeComparison(dirs []string, out, title string, asJSON bool) (int, error) {
	table, err := compare.Build(dirs)
	if err != nil {
		return exitUsage, err
	}
	if err := compare.Write(out, title, table); err != nil {
		return exitCrash, err
	}
	md, _ := os.ReadFile(filepath.Join(out, "compare.md"))
	w := os.Stdout
	if asJSON {
		w = os.Stderr
	}
	fmt.Fprintf(w, "%s\nwritten to %s\n", md, filepath.Join(out, "compare.html"))
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return exitValid, enc.Encode(struct {
			Title string         `json:"title"`
			Dir   string         `json:"dir"`
			Table *compare.Table `json:"table"`
		}{title, out, table})
	}
	return exitValid, nil
}
