// Command chaos runs chaos-test plans against real clusters in Docker and
// judges the histories they record. chaos help lists its commands, and
// chaos help COMMAND (or COMMAND --help) a command's flags.
package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

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

// helpRequested is what a command returns for --help: its help, which
// goes to stdout, and exit 0.
type helpRequested struct{ text string }

func (h helpRequested) Error() string { return h.text }

// command is one of chaos's commands.
type command struct {
	run func(args []string) (int, error)
	// args is what follows the command's name, and summary what it does,
	// for the usage and the command's --help.
	args, summary string
}

type namedCommand struct {
	name string
	command
}

// commands, in the order the usage lists them; those with no summary run
// inside containers, started by chaos run. (Set in init: each command's
// --help reads the list.)
var commands []namedCommand

func init() {
	commands = []namedCommand{
		{"run", command{cmdRun, "PLAN", "run a plan on a real cluster and judge its history; exit 0 valid, 1 anomaly, 2 undecided"}},
		{"validate", command{cmdValidate, "PLAN...", "check plans without starting anything (no Docker needed); every error with its file and line"}},
		{"check", command{cmdCheck, "DIR|FILE", "judge a stored run again (e.g. results/latest), or a Jepsen .edn history or a porcupine log"}},
		{"report", command{cmdReport, "DIR", "write DIR/report.html again (run and check write it)"}},
		{"compare", command{cmdCompare, "PLAN | RUN_DIR...", "run a comparison plan (backends or versions side by side), or compare stored runs"}},
		{"replay", command{cmdReplay, "DIR", "run a stored run again, each fault at its time on its victims"}},
		{"shrink", command{cmdShrink, "DIR", "reduce a run's plan to the smallest that still finds its anomaly"}},
		{"export", command{cmdExport, "DIR", "print a run's history as Jepsen EDN"}},
		{"serve", command{cmdServe, "", "serve the results folder on a loopback address"}},
		{"images", command{cmdImages, "build [TARGET...]", "build the targets' node images now"}},
		{"clean", command{cmdClean, "", "remove the containers, networks and disks past runs left"}},
		{"kube", command{cmdKube, "up|down|status", "bring a local single-node Kubernetes up or down (built here once, about 30 minutes)"}},
		{"version", command{cmdVersion, "", "print chaos's version: module version, VCS revision, modified"}},
		{"help", command{cmdHelp, "[COMMAND]", "list the commands, or show a command's flags"}},
		{"client", command{run: cmdClient}},      // inside a client container
		{"resource", command{run: cmdResource}},  // inside the resource container
		{"kube-node", command{run: cmdKubeNode}}, // a local Kubernetes's node, under chaos kube up
	}
}

func lookup(name string) (command, bool) {
	i := slices.IndexFunc(commands, func(c namedCommand) bool { return c.name == name })
	if i < 0 {
		return command{}, false
	}
	return commands[i].command, true
}

// usage lists the commands.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: chaos COMMAND [ARGS] [flags]\n\ncommands:\n")
	for _, c := range commands {
		if c.summary != "" {
			fmt.Fprintf(&b, "  %-28s %s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
		}
	}
	b.WriteString("\nchaos help COMMAND (or chaos COMMAND --help) shows a command's flags; chaos --version its version.\n")
	b.WriteString("exit codes: 0 valid, 1 anomaly, 2 undecided or incomplete, 254 bad plan or usage, 255 crash")
	return b.String()
}

func main() {
	os.Exit(exitCode(dispatch(os.Args[1:])))
}

// exitCode maps a command's result to the process's exit code: help is
// printed on stdout and exits 0; a bad plan or usage is 254 whatever the
// command said, any other error 255.
func exitCode(code int, err error) int {
	var help helpRequested
	if errors.As(err, &help) {
		fmt.Println(help.text)
		return exitValid
	}
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
		return exitUsage, usageError{usage()}
	}
	switch args[0] {
	case "-h", "-help", "--help":
		args = []string{"help"}
	case "-version", "--version":
		args = []string{"version"}
	}
	cmd, ok := lookup(args[0])
	if !ok {
		return exitUsage, usageError{fmt.Sprintf("unknown command %q\n%s", args[0], usage())}
	}
	return cmd.run(args[1:])
}

// cmdHelp lists the commands, or shows one's help, as COMMAND --help does.
func cmdHelp(args []string) (int, error) {
	args, err := parseArgs(newFlags("help"), args, "[COMMAND]")
	if err != nil {
		return exitUsage, err
	}
	switch len(args) {
	case 0:
		return exitValid, helpRequested{usage()}
	case 1:
		if c, ok := lookup(args[0]); ok && c.summary != "" {
			return c.run([]string{"--help"})
		}
		return exitUsage, usageError{fmt.Sprintf("help: unknown command %q\n%s", args[0], usage())}
	}
	return exitUsage, usageError{"usage: chaos help [COMMAND]"}
}
