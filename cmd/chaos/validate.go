package main

import (
	"errors"
	"fmt"

	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/plans"
)

// cmdValidate checks plans as chaos run would before starting anything:
// each read and bound to its plug-ins (a comparison plan, each of its
// variants), with the fields --set gives. It needs no Docker. Every
// plan's errors are printed, each with its file and line.
func cmdValidate(args []string) (int, error) {
	fs := newFlags("validate")
	pf := addPlanFlags(fs)
	files, err := parseArgs(fs, args, "PLAN...")
	if err != nil {
		return exitUsage, err
	}
	if len(files) == 0 {
		return exitUsage, usageError{"usage: chaos validate PLAN... (chaos help validate shows its flags)"}
	}
	var errs []error
	for _, file := range files {
		if err := validate(file, pf.sets); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Printf("ok  %s\n", file)
	}
	if len(errs) > 0 {
		return exitUsage, fmt.Errorf("%d of %d plans are not valid:\n%w", len(errs), len(files), errors.Join(errs...))
	}
	return exitValid, nil
}

// validate reads and binds the plan in file.
func validate(file string, sets []plans.Override) error {
	p, err := plans.Load(file, sets...)
	if err != nil {
		return err
	}
	if p.Compare == nil {
		_, err := bind.Bind(p)
		return err
	}
	for _, v := range bind.Variants(p) {
		if _, err := bind.Bind(v); err != nil {
			return fmt.Errorf("as %s: %w", v.Name, err)
		}
	}
	return nil
}
