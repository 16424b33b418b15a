package main

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/chaos-testing/chaos/runner"
)

// cmdVersion prints the build of chaos that runs: its module version, the
// VCS revision it was built from and whether the tree was modified, and
// Go's version. run.json records the same (versions.chaos).
func cmdVersion(args []string) (int, error) {
	if err := parseNone(newFlags("version"), args); err != nil {
		return exitUsage, err
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return exitCrash, errors.New("this executable carries no build information")
	}
	fmt.Printf("chaos %s, %s\n", runner.Build(bi), bi.GoVersion)
	return exitValid, nil
}
