package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/plans"
)

// parseArgs parses flags wherever they stand among the positional
// arguments, and returns those; what names them in the usage message.
// --help is the command's help (helpRequested), which exits 0.
func parseArgs(fs *flag.FlagSet, args []string, what string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return nil, helpRequested{commandHelp(fs, what)}
		} else if err != nil {
			return nil, usageError{fmt.Sprintf("%s: %v\n%s", fs.Name(), err, commandHelp(fs, what))}
		}
		args = fs.Args()
		if len(args) > 0 {
			pos = append(pos, args[0])
			args = args[1:]
		}
	}
	return pos, nil
}

// commandHelp is a command's usage line, what it does, and its flags.
func commandHelp(fs *flag.FlagSet, what string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: chaos %s", fs.Name())
	if what != "" {
		b.WriteString(" " + what)
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		b.WriteString(" [flags]")
	}
	if c, ok := lookup(fs.Name()); ok && c.summary != "" {
		b.WriteString("\n\n" + c.summary)
	}
	if n > 0 {
		b.WriteString("\n\nflags:\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return strings.TrimRight(b.String(), "\n")
}

// newFlags is the flag set of command name, which prints nothing itself:
// errors and help go through parseArgs.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseNone parses flags and refuses any positional argument.
func parseNone(fs *flag.FlagSet, args []string) error {
	pos, err := parseArgs(fs, args, "")
	if err == nil && len(pos) > 0 {
		err = usageError{fmt.Sprintf("%s: unexpected argument %q\n%s", fs.Name(), pos[0], commandHelp(fs, ""))}
	}
	return err
}

// parseOne parses flags around exactly one positional argument.
func parseOne(fs *flag.FlagSet, args []string, what string) (string, error) {
	pos, err := parseArgs(fs, args, what)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", usageError{fmt.Sprintf("usage: chaos %s %s (got %d arguments)\nchaos help %s shows its flags", fs.Name(), what, len(pos), fs.Name())}
	}
	return pos[0], nil
}

// refuseFlags is a usage error if any of the named flags was given: they
// do not apply to the form of the command at hand (to what), for the
// reason why. A flag silently ignored would leave the user believing it
// had an effect.
func refuseFlags(fs *flag.FlagSet, to, why string, names ...string) error {
	var given []string
	for _, n := range names {
		if isSet(fs, n) {
			given = append(given, "--"+n)
		}
	}
	switch len(given) {
	case 0:
		return nil
	case 1:
		return usageError{fmt.Sprintf("%s: %s does not apply to %s: %s", fs.Name(), given[0], to, why)}
	}
	return usageError{fmt.Sprintf("%s: %s do not apply to %s: %s", fs.Name(), strings.Join(given, ", "), to, why)}
}

// isSet says whether the flag was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// addMaxFindings is --max-findings, of the commands that judge a run.
func addMaxFindings(fs *flag.FlagSet) {
	fs.IntVar(&analysis.FindingsCap, "max-findings", 0, "list at most N findings per checker in analysis.json and the report (0: all); the counts, by kind too, stay exact")
}

// planFlags are the flags that set a plan's fields over its file's
// (package plans' Override), for run, validate and compare.
type planFlags struct{ sets []plans.Override }

func addPlanFlags(fs *flag.FlagSet) *planFlags {
	pf := &planFlags{}
	fs.Func("set", "set a plan field over the file's, as PATH=VALUE: target.version=v3.5.4, workload.clients=5, nemesis[0].duration=5s (repeatable; recorded in run.json)", func(v string) error {
		o, err := plans.ParseOverride(v)
		if err == nil {
			pf.sets = append(pf.sets, o)
		}
		return err
	})
	fs.Func("time-limit", "how long to run the workload, as --set time_limit=D (default: the plan's)", func(v string) error {
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			return fmt.Errorf("%q: expected a positive duration such as 60s", v)
		}
		pf.sets = append(pf.sets, plans.Override{Path: "time_limit", Value: v})
		return nil
	})
	return pf
}

// perSeed is the overrides of one run per seed: the flags' with the
// seed's; with no seeds, the flags' alone (the plan's seed).
func (pf *planFlags) perSeed(seeds []int64) [][]plans.Override {
	if len(seeds) == 0 {
		return [][]plans.Override{pf.sets}
	}
	var out [][]plans.Override
	for _, s := range seeds {
		out = append(out, append(slices.Clone(pf.sets), plans.Override{Path: "seed", Value: strconv.FormatInt(s, 10)}))
	}
	return out
}

// parseSeeds reads a seed, or (many) a range "1-20" or a list "1,5,9".
func parseSeeds(v string, many bool) ([]int64, error) {
	bad := fmt.Errorf("%q: expected a seed (0 or more)", v)
	if many {
		bad = fmt.Errorf("%q: expected a range of seeds such as 1-20 or a list such as 1,5,9", v)
	}
	var out []int64
	for _, part := range strings.Split(v, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
		b, err2 := strconv.ParseInt(strings.TrimSpace(hi), 10, 64)
		if err1 != nil || err2 != nil || a < 0 || b < a || b-a >= 10000 || (!many && (isRange || len(out) > 0)) {
			return nil, bad
		}
		for s := a; s <= b; s++ {
			out = append(out, s)
		}
	}
	return out, nil
}
