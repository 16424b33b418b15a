package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/replay"
	"github.com/chaos-testing/chaos/runfolder"
	"github.com/chaos-testing/chaos/shrink"
)

// shrunkFile is the smallest plan chaos shrink found, written into the
// run's folder.
const shrunkFile = "shrunk.yaml"

// cmdShrink reduces a stored run's replay plan (chaos replay) to the
// smallest plan whose replays still find what the run found in need of
// replays runs (package shrink), and writes it next to the run. Exit 1
// when it is written; 2 when the replay plan itself does not find it
// often enough to start.
func cmdShrink(args []string) (int, error) {
	fs := newFlags("shrink")
	replays := fs.Int("replays", 3, "replays of each candidate plan")
	need := fs.Int("need", 2, "how many of them must find it again to keep a change")
	confirm := fs.Int("confirm", 5, "replays of the smallest plan, to measure how often it finds it (0: none)")
	results := fs.String("results", "results", "folder that holds the replays' runs")
	dir, err := parseOne(fs, args, "DIR")
	if err != nil {
		return exitUsage, err
	}
	if *need < 1 || *need > *replays {
		return exitUsage, usageError{fmt.Sprintf("shrink: --need %d of --replays %d: expected 1 to %d", *need, *replays, *replays)}
	}
	if *confirm < 0 {
		return exitUsage, usageError{fmt.Sprintf("shrink: --confirm %d: expected 0 or more", *confirm)}
	}
	original, file, err := replayPlan(dir)
	if err != nil {
		return exitUsage, err
	}
	p, err := plans.Load(file)
	if err != nil {
		return exitCrash, err
	}
	if _, err := bind.Bind(p); err != nil {
		return exitCrash, err
	}
	scratch := filepath.Join(dir, "shrink-candidate.yaml")
	defer os.Remove(scratch)
	oracle := func(ctx context.Context, q *plans.Plan) (bool, error) {
		if err := writePlan(scratch, "", q); err != nil {
			return false, err
		}
		found, err := countFound(scratch, *results, original, *replays, *need)
		return found >= *need, err
	}
	// Ctrl-C stops the replay in progress (runPlanFile), and the oracle's
	// error the shrinking.
	ctx := context.Background()
	fmt.Printf("shrinking %s: a change is kept if %d of %d replays find again what the run found\n", dir, *need, *replays)
	if ok, err := oracle(ctx, p); err != nil || !ok {
		fmt.Println("the replay plan itself does not find it often enough to shrink")
		return exitUndecided, err
	}
	small, steps, err := shrink.Shrink(ctx, p, binds, oracle, func(what string, kept bool) {
		fmt.Printf("  %s: %s\n", map[bool]string{true: "kept", false: "undone"}[kept], what)
	})
	if err != nil {
		return exitCrash, err
	}
	var head strings.Builder
	fmt.Fprintf(&head, "# Shrunk by chaos shrink from %s (plan %s, seed %d): each change\n", dir, p.Name, p.Seed)
	fmt.Fprintf(&head, "# below was kept because %d of %d replays of the plan it made still\n# found %s.\n", *need, *replays, strings.Join(replay.Kinds(original), "; "))
	for _, s := range steps {
		fmt.Fprintf(&head, "# - %s (after %d candidate plans)\n", s.What, s.Runs)
	}
	if len(steps) == 0 {
		head.WriteString("# No change kept it: the replay plan is as small as it gets.\n")
	}
	small.Name = strings.TrimSuffix(p.Name, "-replay") + "-shrunk"
	path := runfolder.Folder(dir).Path(shrunkFile)
	if err := writePlan(path, head.String(), small); err != nil {
		return exitCrash, err
	}
	if *confirm > 0 && len(steps) > 0 {
		// A change kept on need of replays may have been kept by luck:
		// how often the smallest plan finds it is measured, and said.
		fmt.Printf("confirming: %d replays of the smallest plan\n", *confirm)
		found, err := countFound(path, *results, original, *confirm, 0)
		if err != nil {
			return exitCrash, err
		}
		fmt.Fprintf(&head, "# Confirmed: %d of %d further replays of this plan found it again.\n", found, *confirm)
		if err := writePlan(path, head.String(), small); err != nil {
			return exitCrash, err
		}
		fmt.Printf("the smallest plan found it again in %d of %d replays\n", found, *confirm)
	}
	fmt.Printf("%d changes kept; the smallest plan: %s\n", len(steps), path)
	return exitAnomaly, nil
}

// countFound runs the plan in file up to replays times and counts the
// runs that found again a kind of finding original has. With need above
// 0 it stops as soon as whether need of them do is decided.
func countFound(file, results string, original analysis.Report, replays, need int) (int, error) {
	found := 0
	for i := range replays {
		if need > 0 && (found >= need || found+replays-i < need) {
			break
		}
		rep, dir, interrupted, err := runPlanFile(file, results)
		switch {
		case dir == "":
			return found, fmt.Errorf("a replay did not run: %w", err)
		case interrupted:
			return found, errors.New("interrupted")
		}
		same := replay.Same(original, rep)
		if len(same) > 0 {
			found++
		}
		fmt.Printf("    replay: %s, %s (%s)\n", rep.Verdict, foundAgain(same, rep), dir)
	}
	return found, nil
}

// binds says whether plan p binds, as a run would bind it.
func binds(p *plans.Plan) error {
	_, err := bind.Bind(p)
	return err
}
