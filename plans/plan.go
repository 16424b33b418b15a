// Package plans reads plan files: what cluster to start, what clients run
// against it, which faults to inject and when. The YAML files beside this
// source are the plans that ship with chaos.
package plans

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Plan is one test: a target, a workload, a fault schedule and a time limit.
type Plan struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Seed        int64    `yaml:"seed"`
	TimeLimit   Duration `yaml:"time_limit"`
	// Recovery is how long the clients go on once the time limit is up
	// and every fault is healed, before they stop: the history then shows
	// whether the system came back (Jepsen's recovery phase). 0: none.
	Recovery Duration `yaml:"recovery"`
	Target   Target   `yaml:"target"`
	Workload Workload `yaml:"workload"`
	Nemesis  []Fault  `yaml:"nemesis"`
	// Compare makes this a comparison plan, for chaos compare.
	Compare *Comparison `yaml:"compare"`
	// Expect is the verdict the plan is meant to give: valid (a control:
	// exit 0 with any seed), invalid (it finds its anomaly: exit 1 with
	// any seed) or varies (the verdict depends on the seed; the plan's
	// header says how often each was measured). Empty: no expectation.
	Expect string `yaml:"expect"`

	// Overrides are the fields the command line set over the file's.
	Overrides []Override `yaml:"-"`
	// File is where the plan was read from; lines maps a field's path
	// ("workload.lease", "nemesis[0].duration") to its line there.
	File  string         `yaml:"-"`
	lines map[string]int `yaml:"-"`
}

// Target is the cluster under test: the fields every target has, and
// Params, the fields of the target named by Kind, which it decodes into
// its own type (DecodeParams). Nodes 0 is the target's default size.
type Target struct {
	Kind  string `yaml:"kind"`
	Nodes int    `yaml:"nodes"`
	// Version of the server; each target says which it can run.
	Version string `yaml:"version"`
	// Image names an image to pull instead of building chaos's own node
	// image (for machines that reach a registry).
	Image string `yaml:"image"`
	// Config is server settings (etcd flags, zoo.cfg lines, redis.conf
	// directives) by name, which the target checks.
	Config map[string]string `yaml:"config,omitempty"`
	Params Params            `yaml:",inline"`
}

// Workload is what the clients do: the fields every workload has, and
// Params, the fields of the workload named by Kind, which that workload
// decodes into its own type (DecodeParams).
type Workload struct {
	Kind string `yaml:"kind"`
	// Clients is how many client processes run the workload (default
	// DefaultClients).
	Clients int    `yaml:"clients"`
	Params  Params `yaml:",inline"`
}

// Fault is one kind of fault, injected on its Schedule. Params are the
// fields of the kind of fault alone (a partition's shape, a clock's
// offset), which it decodes into its own type.
type Fault struct {
	Kind     string `yaml:"kind"`
	Schedule `yaml:",inline"`
	Params   Params `yaml:",inline"`
}

// Duration is a time.Duration written as "3s" or "500ms" in plans.
type Duration struct{ time.Duration }

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: expected a duration such as 3s or 500ms, got %q", n.Line, n.Value)
	}
	d.Duration = v
	return nil
}

// MarshalYAML writes the duration back as a string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalJSON writes the duration as a string, as plans do ("2s"), for
// the parameters a client process is given.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration written by MarshalJSON.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	v, err := time.ParseDuration(s)
	d.Duration = v
	return err
}

// Error is a problem with a plan, located in its file.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Errorf reports a problem with the field at path ("workload.kind"),
// pointing at its line, or at its parent's when the field is missing.
func (p *Plan) Errorf(path, format string, args ...any) error {
	return p.noteOverrides(&Error{File: p.File, Line: p.Line(path), Msg: path + ": " + fmt.Sprintf(format, args...)})
}

// Line is the line of the field at path, or of its nearest parent present.
func (p *Plan) Line(path string) int {
	for path != "" {
		if l, ok := p.lines[path]; ok {
			return l
		}
		path = parentPath(path)
	}
	return 0
}

var lastPart = regexp.MustCompile(`(\.[^.\[]+|\[\d+\])$`)

// parentPath drops the last part of a path; a top-level field has parent "".
func parentPath(path string) string {
	if loc := lastPart.FindStringIndex(path); loc != nil {
		return path[:loc[0]]
	}
	return ""
}

// Load reads and checks the plan in file, with the fields the command
// line sets over the file's.
func Load(file string, overrides ...Override) (*Plan, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	return Parse(file, data, overrides...)
}

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// Parse reads a plan from data, with the fields overrides set over
// data's; file names it in errors. Unknown fields and values of the wrong
// kind are errors with their line.
func Parse(file string, data []byte, overrides ...Override) (*Plan, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(file, err)
	}
	if len(root.Content) == 0 {
		return nil, &Error{File: file, Msg: "empty plan; expected a mapping with target, workload, nemesis and time_limit"}
	}
	for _, o := range overrides {
		if err := o.apply(file, root.Content[0]); err != nil {
			return nil, err
		}
	}
	p := &Plan{File: file, Overrides: overrides, lines: map[string]int{}}
	if err := checkFields(file, root.Content[0], planFields, "", p.lines); err != nil {
		return nil, p.noteOverrides(err)
	}
	// checkFields refused the unknown fields, with the allowed ones.
	if err := root.Content[0].Decode(p); err != nil {
		return nil, p.noteOverrides(yamlError(file, err))
	}
	p.File, p.Overrides = file, overrides
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

// noteOverrides adds to a plan error that the plan was read with fields
// set on the command line, which its file does not show.
func (p *Plan) noteOverrides(err error) error {
	var pe *Error
	if len(p.Overrides) == 0 || !errors.As(err, &pe) {
		return err
	}
	var set []string
	for _, o := range p.Overrides {
		set = append(set, "--set "+o.String())
	}
	pe.Msg += " (read with " + strings.Join(set, ", ") + ")"
	return err
}

func yamlError(file string, err error) error {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Msg: m[2]}
	}
	return &Error{File: file, Msg: msg}
}
