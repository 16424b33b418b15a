package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/history/jepsen"
	"github.com/chaos-testing/chaos/runner"
)

// cmdCheck analyzes a stored run (a results folder) or a history file from
// elsewhere: Jepsen EDN (.edn, with --model) or porcupine's test logs.
func cmdCheck(args []string) (int, error) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	model := fs.String("model", jepsen.CasRegister, "model for an EDN history: "+strings.Join(jepsen.Models, ", "))
	initial := fs.String("initial", "", "the registers' value before the history, as JSON (default: absent)")
	out := fs.String("out", "", "folder for visualizations of a history file (default: results/check/<file>)")
	path, err := parseOne(fs, args, "DIR|FILE")
	if err != nil {
		return exitUsage, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return exitUsage, fmt.Errorf("%s is not a run folder or a history file: %w", path, err)
	}
	if st.IsDir() {
		rep, err := runner.Analyze(context.Background(), path, os.Stderr)
		if err != nil {
			return exitUsage, err
		}
		return report(os.Stdout, rep, path), nil
	}
	fc := runner.FileCheck{Model: *model, Out: *out}
	if *initial != "" {
		if !json.Valid([]byte(*initial)) {
			return exitUsage, usageError{fmt.Sprintf("--initial %q is not a JSON value", *initial)}
		}
		fc.Initial = json.RawMessage(*initial)
	}
	if fc.Out == "" {
		fc.Out = filepath.Join("results", "check", filepath.Base(path))
	}
	rep, err := runner.CheckFile(context.Background(), path, fc)
	var ie runner.InputError
	if errors.As(err, &ie) {
		return exitUsage, err // a bad history file is bad input, like a bad plan
	}
	if err != nil {
		return exitCrash, err
	}
	return report(os.Stdout, rep, fc.Out), nil
}

// cmdExport writes a stored run's history in another format.
func cmdExport(args []string) (int, error) {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.String("format", "edn", "output format: edn (Jepsen)")
	dir, err := parseOne(fs, args, "DIR")
	if err != nil {
		return exitUsage, err
	}
	if *format != "edn" {
		return exitUsage, usageError{fmt.Sprintf("--format %q: only edn is supported", *format)}
	}
	ops, _, err := history.Read(filepath.Join(dir, "history.jsonl"))
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
	if len(args) != 1 {
		return exitUsage, usageError{"usage: chaos report DIR"}
	}
	if err := runner.Report(context.Background(), args[0]); err != nil {
		return exitCrash, err
	}
	fmt.Println(filepath.Join(args[0], "report.html"))
	return exitValid, nil
}
