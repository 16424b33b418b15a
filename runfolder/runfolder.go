// Package runfolder is a run's folder, results/<plan>/<time>/: it owns the
// names of the files a run leaves there and reads and writes the ones that
// describe the run (run.json, analysis.json). The runner, the report, the
// comparison and the command line all find a run's files through it.
package runfolder

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// The files of a run folder.
const (
	InfoFile     = "run.json"       // Info: what ran, how it ended
	PlanFile     = "plan.yaml"      // the plan as it ran, defaults included
	HistoryFile  = "history.jsonl"  // every operation and fault
	ResourceFile = "resource.jsonl" // the protected resource's log
	AnalysisFile = "analysis.json"  // Analysis: the verdict and its proof
	LogsDir      = "logs"           // each container's output
	DisksDir     = "disks"          // each node's data directory, in a run with a disk fault
	ReportFile   = "report.html"
	JUnitFile    = "junit.xml"
	SummaryFile  = "summary.md"
)

// Folder is a run's folder.
type Folder string

// Path is the path of the folder's file name (one of the names above).
func (f Folder) Path(name string) string { return filepath.Join(string(f), name) }

// Info is run.json: what was run, with which seed and software, and how
// the run ended.
type Info struct {
	// RunID labels the run's containers and network (label chaos.run).
	RunID    string `json:"run_id"`
	Plan     string `json:"plan"`
	PlanFile string `json:"plan_file"`
	Seed     int64  `json:"seed"`
	// Overrides are the plan fields the command line set (--set
	// PATH=VALUE), which plan_file does not show; plan.yaml does.
	Overrides []string  `json:"overrides,omitempty"`
	Started   time.Time `json:"started"`
	// Expect is the plan's expect field; AsExpected, once the run is
	// judged, whether its verdict met it (Expected).
	Expect     string `json:"expect,omitempty"`
	AsExpected *bool  `json:"as_expected,omitempty"`
	Workload   string `json:"workload"`
	Resource   string `json:"resource"`
	// Versions are those of chaos itself (key "chaos": module version,
	// VCS revision, modified), Go and the client libraries.
	Versions map[string]string `json:"versions"`
	// Servers are the versions the cluster's servers reported, by node.
	Servers map[string]string `json:"servers,omitempty"`
	// Config is the server settings the target ran with: its own, with
	// the plan's over them.
	Config map[string]string `json:"config,omitempty"`
	// Image is the node image the servers ran in.
	Image string `json:"image,omitempty"`
	// Nodes and Ready: the cluster's size, and how long it took from the
	// first container's start until every node answered.
	Target string        `json:"target"`
	Nodes  int           `json:"nodes"`
	Ready  time.Duration `json:"ready_ns,omitempty"`
	// End is the harness's last record of the run, written once the
	// cluster is torn down and before the analysis. A run without one did
	// not finish: its harness was killed or crashed, or is still running.
	End *End `json:"end,omitempty"`
}

// End is how a run ended.
type End struct {
	At time.Time `json:"at"`
	// Error is why the run did not finish cleanly; empty if it did.
	Error string `json:"error,omitempty"`
}

// Incomplete says why the run did not finish cleanly, or "" if it did:
// finishing cleanly is what the end record positively says, so a run
// without one (a harness killed with SIGKILL writes nothing) is incomplete.
func (i Info) Incomplete() string {
	switch {
	case i.End == nil:
		return "no end of the run recorded in run.json: its harness was killed or crashed, or is still running"
	case i.End.Error != "":
		return i.End.Error
	}
	return ""
}

// Analysis is analysis.json: the report, why the run is incomplete if it
// is, and the plan's expectation and whether the verdict met it.
type Analysis struct {
	analysis.Report
	Incomplete string `json:"incomplete,omitempty"`
	Expect     string `json:"expect,omitempty"`
	AsExpected *bool  `json:"as_expected,omitempty"`
}

// Expected says whether verdict v meets a plan's expectation: valid and
// invalid, that verdict; varies, any decided one. An undecided verdict
// meets none. nil: the plan expects nothing.
func Expected(expect string, v analysis.Verdict) *bool {
	var met bool
	switch expect {
	case "":
		return nil
	case "varies":
		met = v == analysis.Valid || v == analysis.Invalid
	default:
		met = string(v) == expect
	}
	return &met
}

// ReadInfo reads run.json.
func (f Folder) ReadInfo() (Info, error) {
	var info Info
	b, err := os.ReadFile(f.Path(InfoFile))
	if err != nil {
		return info, fmt.Errorf("%s is not a run folder: %w", f, err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("%s: %w", f.Path(InfoFile), err)
	}
	return info, nil
}

// WriteInfo writes run.json.
func (f Folder) WriteInfo(info Info) error { return writeJSON(f.Path(InfoFile), info) }

// UpdateInfo changes run.json.
func (f Folder) UpdateInfo(change func(*Info)) error {
	info, err := f.ReadInfo()
	if err != nil {
		return err
	}
	change(&info)
	return f.WriteInfo(info)
}

// ErrNotAnalyzed is ReadAnalysis's error for a run without analysis.json.
var ErrNotAnalyzed = errors.New("not analyzed")

// ReadAnalysis reads analysis.json.
func (f Folder) ReadAnalysis() (Analysis, error) {
	var a Analysis
	b, err := os.ReadFile(f.Path(AnalysisFile))
	if os.IsNotExist(err) {
		return a, fmt.Errorf("%s: %w (chaos check analyzes it)", f, ErrNotAnalyzed)
	}
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return a, fmt.Errorf("%s: %w", f.Path(AnalysisFile), err)
	}
	return a, nil
}

// WriteAnalysis writes analysis.json.
func (f Folder) WriteAnalysis(a Analysis) error { return writeJSON(f.Path(AnalysisFile), a) }

// ReadHistory reads history.jsonl.
func (f Folder) ReadHistory() ([]history.Op, *history.Truncated, error) {
	return history.Read(f.Path(HistoryFile))
}

// All lists the run folders under results (results/<plan>/<time>/ with a
// run.json).
func All(results string) []Folder {
	infos, _ := filepath.Glob(filepath.Join(results, "*", "*", InfoFile))
	out := make([]Folder, len(infos))
	for i, p := range infos {
		out[i] = Folder(filepath.Dir(p))
	}
	return out
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
