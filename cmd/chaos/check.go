package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/txn"
	"github.com/chaos-testing/chaos/foreign/jepsen"
	"github.com/chaos-testing/chaos/runfolder"
	"github.com/chaos-testing/chaos/runner"
)

// cmdCheck analyzes a stored run (a results folder) or a history file from
// elsewhere: Jepsen EDN (.edn, with --model) or porcupine's test logs.
func cmdCheck(args []string) (int, error) {
	fs := newFlags("check")
	model := fs.String("model", jepsen.CasRegister, "model for an EDN history: "+strings.Join(jepsen.Models, ", "))
	initial := fs.String("initial", "", "the registers' value before the history: EDN for an .edn history (0, :none, 1.0), else JSON (default: absent)")
	consistency := fs.String("consistency-model", "", "for list-append and rw-register: the models the history must satisfy, by Elle's names, comma-separated (default strict-serializable, Elle's; none for --anomalies alone)")
	anomalies := fs.String("anomalies", "", "for list-append and rw-register: further anomalies the history must not show, by Elle's names, comma-separated; each stands for those implying it (G1: G1a, G1b, G1c)")
	sequential := fs.Bool("sequential-keys", false, "for rw-register: assume each key is sequentially consistent, and infer versions from each process's order (Elle's :sequential-keys?)")
	linearizable := fs.Bool("linearizable-keys", false, "for rw-register: assume each key is linearizable, and infer versions from real-time order (Elle's :linearizable-keys?)")
	wfr := fs.Bool("wfr-keys", true, "for rw-register: assume a transaction's writes follow its reads, and infer versions from that (Elle's :wfr-keys?, off in Elle unless asked for)")
	out := fs.String("out", "", "folder for a history file's analysis.json, report and visualizations (default: results/check/<file>)")
	addMaxFindings(fs)
	asJSON := fs.Bool("json", false, "print one JSON summary on stdout; the findings go to stderr")
	stream := fs.String("stream", "auto", "for a run folder: read the history as a stream, judging it a few keys at a time in bounded memory (on), in memory (off), or as its size says (auto: from 256 MiB, where the checkers allow)")
	path, err := parseOne(fs, args, "DIR|FILE")
	if err != nil {
		return exitUsage, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return exitUsage, fmt.Errorf("%s is not a run folder or a history file: %w", path, err)
	}
	ctx, stop := interruptible() // Ctrl-C stops a long analysis
	defer stop()
	if st.IsDir() {
		if err := refuseFlags(fs, "a run folder", "they describe a history file from elsewhere; a run folder's run.json says what ran, and its analysis is written into it",
			"model", "initial", "out", "consistency-model", "anomalies", "sequential-keys", "linearizable-keys", "wfr-keys"); err != nil {
			return exitUsage, err
		}
		switch *stream {
		case "on":
			runner.StreamAbove = 0
		case "off":
			runner.StreamAbove = math.MaxInt64
		case "auto":
		default:
			return exitUsage, usageError{fmt.Sprintf("--stream %q: expected auto, on or off", *stream)}
		}
		rep, err := runner.Analyze(ctx, path, os.Stderr)
		if err != nil {
			return exitUsage, err
		}
		return reportOrJSON(rep, path, *asJSON)
	}
	if err := refuseFlags(fs, "a history file", "a file from elsewhere is judged in memory", "stream"); err != nil {
		return exitUsage, err
	}
	if err := refuseFileFlags(fs, path, *model); err != nil {
		return exitUsage, err
	}
	fc := runner.FileCheck{Model: *model, Out: *out, Details: true, Txn: txn.Options{
		ConsistencyModels: splitNames(*consistency), Anomalies: splitNames(*anomalies),
		SequentialKeys: *sequential, LinearizableKeys: *linearizable, WithoutWFR: !*wfr,
	}}
	if *consistency == "none" {
		fc.Txn.ConsistencyModels = []string{}
	}
	if err := fc.Txn.Validate(); err != nil {
		return exitUsage, usageError{fmt.Sprintf("check: %v", err)}
	}
	if *initial != "" {
		if fc.Initial, err = initialValue(path, *model, *initial); err != nil {
			return exitUsage, err
		}
	}
	if fc.Out == "" {
		fc.Out = filepath.Join("results", "check", filepath.Base(path))
	}
	rep, err := runner.CheckFile(ctx, path, fc)
	var ie runner.InputError
	if errors.As(err, &ie) {
		return exitUsage, err // a bad history file is bad input, like a bad plan
	}
	if err != nil {
		return exitCrash, err
	}
	return reportOrJSON(rep, fc.Out, *asJSON)
}

// reportOrJSON prints a judged run's findings and verdict, on stderr with
// asJSON, then its summary as JSON on stdout.
func reportOrJSON(rep analysis.Report, dir string, asJSON bool) (int, error) {
	if !asJSON {
		return report(os.Stdout, rep, dir), nil
	}
	s := summarize(rep, dir, report(os.Stderr, rep, dir), false)
	return s.Exit, printJSON([]runSummary{s}, false)
}

// initialValue reads --initial in the language of the history at path:
// EDN for a Jepsen history, so that 0, 0.0 and :none stay as Knossos tells
// them apart; JSON otherwise.
func initialValue(path, model, text string) (json.RawMessage, error) {
	if strings.HasSuffix(path, ".edn") {
		v, err := jepsen.InitialJSON(text, model)
		if err != nil {
			return nil, usageError{fmt.Sprintf("--initial %q is not an EDN value: %v", text, err)}
		}
		return v, nil
	}
	if !json.Valid([]byte(text)) {
		return nil, usageError{fmt.Sprintf("--initial %q is not a JSON value", text)}
	}
	return json.RawMessage(text), nil
}

// splitNames reads a comma-separated list of names: nil for none given.
func splitNames(list string) []string {
	if list == "" {
		return nil
	}
	return strings.Split(list, ",")
}

// elleFlags are Elle's options, which only its checkers take; rwFlags only
// its rw-register.
var (
	rwFlags   = []string{"sequential-keys", "linearizable-keys", "wfr-keys"}
	elleFlags = append([]string{"consistency-model", "anomalies"}, rwFlags...)
)

// refuseFileFlags refuses the flags that do not apply to the history file
// at path. As runner.CheckFile tells formats apart, only EDN is read with
// a model; the mutex model has no registers to give a value; Elle's
// options apply to its models, and how versions are inferred to
// rw-register's.
func refuseFileFlags(fs *flag.FlagSet, path, model string) error {
	switch {
	case !strings.HasSuffix(path, ".edn"):
		return refuseFlags(fs, "a porcupine log", "only a Jepsen .edn history is checked against the model given; a porcupine log's format says its model", append([]string{"model"}, elleFlags...)...)
	case model == jepsen.Mutex:
		return refuseFlags(fs, "the mutex model", "it has no registers: every lock starts free", append([]string{"initial"}, elleFlags...)...)
	case model == jepsen.ListAppend:
		return refuseFlags(fs, "the list-append model", "a list read shows its key's order of versions: there is none to infer", rwFlags...)
	case model != jepsen.RwRegister:
		return refuseFlags(fs, "the "+model+" model", "they are Elle's options, for list-append and rw-register", elleFlags...)
	}
	return nil
}

// cmdExport writes a stored run's history in another format.
func cmdExport(args []string) (int, error) {
	fs := newFlags("export")
	format := fs.String("format", "edn", "output format: edn (Jepsen)")
	dir, err := parseOne(fs, args, "DIR")
	if err != nil {
		return exitUsage, err
	}
	if *format != "edn" {
		return exitUsage, usageError{fmt.Sprintf("--format %q: only edn is supported", *format)}
	}
	ops, _, err := runfolder.Folder(dir).ReadHistory()
	if err != nil {
		return exitUsage, err
	}
	if err := jepsen.Write(os.Stdout, ops); err != nil {
		return exitCrash, err
	}
	return exitValid, nil
}

// cmdReport writes report.html for a stored run.
func cmdReport(args []string) (int, error) {
	dir, err := parseOne(newFlags("report"), args, "DIR")
	if err != nil {
		return exitUsage, err
	}
	if _, err := runfolder.Folder(dir).ReadInfo(); err != nil {
		return exitUsage, err
	}
	if err := runner.Report(context.Background(), dir); err != nil {
		return exitCrash, err
	}
	fmt.Println(runfolder.Folder(dir).Path(runfolder.ReportFile))
	return exitValid, nil
}
