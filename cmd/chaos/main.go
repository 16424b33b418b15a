// Command chaos runs chaos-test plans against real clusters in Docker and
// judges the histories they record.
//
//	chaos run PLAN [--seed N] [--time-limit D]   run a plan
//	chaos check DIR|FILE                         re-analyze a stored run or a foreign history
//	chaos replay DIR [--times N]                 run a stored run again, its faults pinned
//	chaos shrink DIR                             reduce a stored run's plan to what its finding needs
//	chaos export --format edn DIR                a run's history as Jepsen EDN
//	chaos images build [TARGET...]               build the targets' images now
//	chaos clean                                  remove what past runs left
package main

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/chaos-testing/chaos/plans"

	_ "github.com/chaos-testing/chaos/plugins" // every plug-in registers itself
)

// Exit codes.
const (
	exitValid     = 0
	exitAnomaly   = 1
	exitUndecided = 2
	exitUsage     = 254
	exitCrash     = 255
)

// usageError is a mistake in how chaos was called.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

const usage = `usage:
  chaos run PLAN [--seed N] [--time-limit D]   run a plan; exit 0 valid, 1 anomaly, 2 undecided
  chaos check DIR [--stream auto|on|off]       re-analyze a stored run (e.g. results/latest); a long history
                                               is read as a stream, in bounded memory (auto: from 256 MiB)
  chaos replay DIR [--times N]                 run a stored run again: its seed, each fault at its time on its
                                               victims; exit 1 if a replay found what it found, 0 if none did
  chaos shrink DIR [--replays 3] [--need 2]    reduce a run's replay plan to the smallest that still finds it
    [--confirm 5]                              (need of replays replays per change): DIR/shrunk.yaml,
                                               then confirm replays of it say how often it finds it
  chaos check FILE [--model M] [--initial V]   check a Jepsen .edn history or a porcupine log
  chaos export --format edn DIR                print a run's history as Jepsen EDN
  chaos report DIR                             write DIR/report.html (done by run and check too)
  chaos compare PLAN | chaos compare DIR...    run a comparison plan, or compare stored lock runs
  chaos serve [--addr 127.0.0.1:8080]          serve the results folder on a loopback address
  chaos images build [TARGET...]               build the targets' images now
  chaos clean                                  remove containers, networks and disks of past runs`

var commands = map[string]func(args []string) (int, error){
	"run":      cmdRun,
	"check":    cmdCheck,
	"replay":   cmdReplay,
	"shrink":   cmdShrink,
	"export":   cmdExport,
	"report":   cmdReport,
	"serve":    cmdServe,
	"compare":  cmdCompare,
	"images":   cmdImages,
	"clean":    cmdClean,
	"client":   cmdClient,   // inside a client container
	"resource": cmdResource, // inside the resource container
}

func main() {
	os.Exit(exitCode(dispatch(os.Args[1:])))
}

// exitCode maps a command's result to the process's exit code: a bad plan
// or usage is 254 whatever the command said, any other error 255.
func exitCode(code int, err error) int {
	if err == nil {
		return code
	}
	fmt.Fprintln(os.Stderr, "chaos:", err)
	var pe *plans.Error
	var ue usageError
	switch {
	case errors.As(err, &pe), errors.As(err, &ue):
		return exitUsage
	case code == exitValid:
		return exitCrash
	}
	return code
}

func dispatch(args []string) (code int, err error) {
	defer func() {
		if p := recover(); p != nil {
			code, err = exitCrash, fmt.Errorf("crashed: %v", p)
		}
	}()
	if len(args) == 0 {
		return exitUsage, usageError{usage}
	}
	if slices.Contains([]string{"help", "-h", "-help", "--help"}, args[0]) {
		fmt.Println(usage)
		return exitValid, nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return exitUsage, usageError{fmt.Sprintf("unknown command %q\n%s", args[0], usage)}
	}
	return cmd(args[1:])
}
