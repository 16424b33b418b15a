package plans

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Params are the fields of a plug-in's section (a workload, a fault) that
// the plan does not share: only the plug-in named by the section's kind
// knows them, and decodes them into its own type with DecodeParams.
type Params map[string]yaml.Node

// Parameterized is a plug-in with fields of its own in its plan section.
type Parameterized interface {
	// NewParams returns a new pointer to the plug-in's parameters: a
	// struct whose yaml tags are the plan's field names (and whose json
	// tags, for a workload, carry them to its client processes).
	NewParams() any
}

// DecodeParams decodes the plug-in's own fields of the section at path
// ("workload", "nemesis[2]") into its parameters, and returns them: nil
// for a plug-in that has none. A field the plug-in does not have is
// refused with its line and every field the section allows: shared, the
// fields of section's Go type (Workload, Fault), and the plug-in's.
func (p *Plan) DecodeParams(path string, params Params, section any, plugin any) (any, error) {
	var spec any
	if pp, ok := plugin.(Parameterized); ok {
		spec = pp.NewParams()
	}
	own := map[string]reflect.Type{}
	if spec != nil {
		own = yamlFields(reflect.TypeOf(spec).Elem())
	}
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range slices.SortedFunc(maps.Keys(params), func(a, b string) int { return params[a].Line - params[b].Line }) {
		v := params[k]
		ft, ok := own[k]
		if !ok {
			allowed := yamlFields(reflect.TypeOf(section))
			maps.Copy(allowed, own)
			return nil, &Error{File: p.File, Line: p.Line(joinPath(path, k)), Msg: fmt.Sprintf("unknown field %q in %s (%s); allowed: %s",
				k, path, kindOf(section), strings.Join(sortedKeys(allowed), ", "))}
		}
		if err := checkFields(p.File, &v, ft, joinPath(path, k), p.lines); err != nil {
			return nil, err
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Line: v.Line}, &v)
	}
	if spec == nil {
		return nil, nil
	}
	if err := m.Decode(spec); err != nil {
		return nil, yamlError(p.File, err)
	}
	return spec, nil
}

// kindOf names the plug-in of a section, for error messages.
func kindOf(section any) string {
	switch s := section.(type) {
	case Target:
		return s.Kind
	case Workload:
		return s.Kind
	case Fault:
		return s.Kind
	}
	return fmt.Sprintf("%T", section)
}

// Resolved is a copy of the plan, validated, whose plug-in fields are
// those its plug-ins decoded, defaults included: the plan as it runs,
// which a run keeps beside its results.
func (p *Plan) Resolved() (*Plan, error) {
	q := *p
	var err error
	if q.Target.Params, err = encodeParams(p.Target.Spec); err != nil {
		return nil, err
	}
	if q.Workload.Params, err = encodeParams(p.Workload.Spec); err != nil {
		return nil, err
	}
	q.Nemesis = slices.Clone(p.Nemesis)
	for i := range q.Nemesis {
		if q.Nemesis[i].Params, err = encodeParams(q.Nemesis[i].Spec); err != nil {
			return nil, err
		}
	}
	return &q, nil
}

// YAML is the plan as it runs (Resolved), as a plan file: what a run
// keeps beside its results, and what a replay or a shrink writes.
func (p *Plan) YAML() ([]byte, error) {
	resolved, err := p.Resolved()
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(resolved)
}

// encodeParams is a plug-in's parameters as plan fields (nil: none).
func encodeParams(spec any) (Params, error) {
	if spec == nil {
		return nil, nil
	}
	var n yaml.Node
	if err := n.Encode(spec); err != nil {
		return nil, fmt.Errorf("encoding %T: %w", spec, err)
	}
	out := Params{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = *n.Content[i+1]
	}
	return out, nil
}

// FieldNames are the plan's names of the fields of v (a plug-in's
// parameters, or a section: Workload, Fault), sorted.
func FieldNames(v any) []string {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return sortedKeys(yamlFields(t))
}

// Count fills a plug-in's count field (path, e.g. "workload.keys") with def
// when the plan leaves it at 0, and checks it is in [lo, hi].
func (p *Plan) Count(path string, v *int, def, lo, hi int) error {
	if *v == 0 {
		*v = def
	}
	if *v < lo || *v > hi {
		return p.Errorf(path, "%d: expected %d to %d", *v, lo, hi)
	}
	return nil
}
