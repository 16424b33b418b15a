package plans

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Override is a field of a plan set from the command line (--set
// target.version=v3.5.4): Path in the plan's own words ("workload.clients",
// "nemesis[0].duration"), Value as YAML ("5", "30s", "[c0, c1]").
type Override struct {
	Path, Value string
}

func (o Override) String() string { return o.Path + "=" + o.Value }

// ParseOverride reads PATH=VALUE.
func ParseOverride(s string) (Override, error) {
	path, value, ok := strings.Cut(s, "=")
	if !ok || path == "" {
		return Override{}, fmt.Errorf("--set %q: expected PATH=VALUE, such as target.version=v3.5.4 or nemesis[0].duration=5s", s)
	}
	return Override{Path: path, Value: value}, nil
}

var overrideStep = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*)?((?:\[\d+\])*)$`)

// apply sets o in the plan's YAML tree before it is decoded, so that the
// value is checked as if the file had it: a mapping key missing on the
// way is added, an index must exist. The value takes the line of what
// it replaces (or of its parent), so that an error points where the
// field is, and says it came from --set.
func (o Override) apply(file string, root *yaml.Node) error {
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(o.Value), &v); err != nil {
		return &Error{File: file, Msg: fmt.Sprintf("--set %s: the value is not YAML: %v", o, err)}
	}
	val := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	if len(v.Content) > 0 {
		val = v.Content[0]
	}
	// line is that of the field at hand: its key's, for a value.
	n, line := root, root.Line
	steps := strings.Split(o.Path, ".")
	for si, step := range steps {
		m := overrideStep.FindStringSubmatch(step)
		if m == nil || (m[1] == "" && m[2] == "") {
			return &Error{File: file, Msg: fmt.Sprintf("--set %s: %q is not a field name or index such as nemesis[0]", o, step)}
		}
		idx := indexes(m[2])
		last := si == len(steps)-1
		if m[1] != "" {
			if n.Kind != yaml.MappingNode {
				return &Error{File: file, Line: line, Msg: fmt.Sprintf("--set %s: %s is not a mapping", o, strings.Join(steps[:si], "."))}
			}
			key, next := mappingEntry(n, m[1])
			if next == nil {
				key = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: m[1], Line: line}
				next = &yaml.Node{Kind: yaml.MappingNode, Line: line}
				n.Content = append(n.Content, key, next)
			}
			line = key.Line
			if last && len(idx) == 0 {
				setNode(next, val)
				return nil
			}
			n = next
		}
		for ii, i := range idx {
			if n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				return &Error{File: file, Line: line, Msg: fmt.Sprintf("--set %s: the plan has no %s", o, strings.Join(steps[:si], ".")+step)}
			}
			if last && ii == len(idx)-1 {
				setNode(n.Content[i], val)
				return nil
			}
			n, line = n.Content[i], n.Content[i].Line
		}
	}
	return nil
}

// setNode replaces what n holds with val, keeping n's line.
func setNode(n, val *yaml.Node) {
	line := n.Line
	*n = *val
	setLines(n, line)
}

func setLines(n *yaml.Node, line int) {
	n.Line = line
	for _, c := range n.Content {
		setLines(c, line)
	}
}

// mappingEntry is the key and value of key in mapping n, or nils.
func mappingEntry(n *yaml.Node, key string) (k, v *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

func indexes(s string) []int {
	var out []int
	for _, part := range strings.Split(strings.Trim(s, "[]"), "][") {
		if part == "" {
			continue
		}
		i, _ := strconv.Atoi(part)
		out = append(out, i)
	}
	return out
}
