// Package plans reads plan files: what cluster to start, what clients run
// against it, which faults to inject and when. The YAML files beside this
// source are the plans that ship with chaos.
package plans

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Plan is one test: a target, a workload, a fault schedule and a time limit.
type Plan struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Seed        int64    `yaml:"seed"`
	TimeLimit   Duration `yaml:"time_limit"`
	Target      Target   `yaml:"target"`
	Workload    Workload `yaml:"workload"`
	Nemesis     []Fault  `yaml:"nemesis"`
	// Compare makes this a comparison plan, for chaos compare.
	Compare *Comparison `yaml:"compare"`

	// File is where the plan was read from; lines maps a field's path
	// ("workload.lease", "nemesis[0].duration") to its line there.
	File  string         `yaml:"-"`
	lines map[string]int `yaml:"-"`
}

// Target is the cluster under test.
type Target struct {
	Kind  string `yaml:"kind"`
	Nodes int    `yaml:"nodes"`
	// Version of the server, for targets built from source (etcd).
	Version string `yaml:"version"`
	// Image names an image to pull instead of building chaos's own node
	// image (for machines that reach a registry).
	Image string `yaml:"image"`
}

// Workload is what the clients do.
type Workload struct {
	Kind    string   `yaml:"kind"`
	Clients int      `yaml:"clients"`
	Lease   Duration `yaml:"lease"`
	// A holder keeps the lock for a random time in [HoldMin, HoldMax], then
	// writes to the resource and releases.
	HoldMin Duration `yaml:"hold_min"`
	HoldMax Duration `yaml:"hold_max"`
	// Resource is "fenced" or "unfenced": whether the protected resource
	// rejects writes carrying a token older than one it has accepted.
	Resource string `yaml:"resource"`
	// ReadMode is how register clients read: linearizable or serializable
	// (etcd), plain or sync (ZooKeeper: sync, then read).
	ReadMode string `yaml:"read_mode"`
}

// Fault is one kind of fault, injected on a schedule: first after
// FirstAfter, then every Interval, each lasting Duration.
type Fault struct {
	Kind string `yaml:"kind"`
	// Target is the role whose processes are picked: nodes, leader,
	// clients or holder (a client holding the lock); each kind of fault
	// says which it accepts.
	Target string `yaml:"target"`
	Count  int    `yaml:"count"`
	// Nodes, if given, are the only nodes (by name: n1, n2, ...) a fault
	// on nodes may pick its victims from.
	Nodes []string `yaml:"nodes"`
	// Shape of a partition: isolate-one, isolate-leader, halves,
	// majorities-ring or bridge.
	Shape string `yaml:"shape"`
	// Offset is how far a clock fault moves the clocks (negative: back).
	Offset Duration `yaml:"offset"`
	// Clocks a clock fault moves: realtime (the wall clock, the default)
	// or all (the monotonic clocks too, which timeouts and leases use).
	Clocks string `yaml:"clocks"`
	// Strobe makes a clock fault flip between no offset and Offset every
	// Strobe, for the fault's duration; 0 is one jump (a bump).
	Strobe     Duration `yaml:"strobe"`
	FirstAfter Duration `yaml:"first_after"`
	Interval   Duration `yaml:"interval"`
	Duration   Duration `yaml:"duration"`
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
	return &Error{File: p.File, Line: p.Line(path), Msg: path + ": " + fmt.Sprintf(format, args...)}
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

// Load reads and checks the plan in file.
func Load(file string) (*Plan, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	return Parse(file, data)
}

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// Parse reads a plan from data; file names it in errors. Unknown fields and
// values of the wrong kind are errors with their line.
func Parse(file string, data []byte) (*Plan, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(file, err)
	}
	if len(root.Content) == 0 {
		return nil, &Error{File: file, Msg: "empty plan; expected a mapping with target, workload, nemesis and time_limit"}
	}
	p := &Plan{File: file, lines: map[string]int{}}
	if err := checkFields(file, root.Content[0], planFields, "", p.lines); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil {
		return nil, yamlError(file, err)
	}
	p.File = file
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
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
