package plans

import (
	"errors"
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

// DecodeParams decodes the plug-in's own fields of the section at path
// ("workload", "nemesis[2]") into into, a pointer to its parameters (see
// Own). A field the plug-in does not have is refused with its line and
// every field the section allows: shared, the fields of section's Go type
// (Workload, Fault), and the plug-in's.
func (p *Plan) DecodeParams(path string, params Params, section any, into any) error {
	own := yamlFields(reflect.TypeOf(into).Elem())
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range slices.SortedFunc(maps.Keys(params), func(a, b string) int { return params[a].Line - params[b].Line }) {
		v := params[k]
		ft, ok := own[k]
		if !ok {
			allowed := yamlFields(reflect.TypeOf(section))
			maps.Copy(allowed, own)
			return p.noteOverrides(&Error{File: p.File, Line: p.Line(joinPath(path, k)), Msg: fmt.Sprintf("unknown field %q in %s (%s); allowed: %s",
				k, path, kindOf(section), strings.Join(sortedKeys(allowed), ", "))})
		}
		// Parse recorded the lines: a plan is left as it was read.
		if err := checkFields(p.File, &v, ft, joinPath(path, k), map[string]int{}); err != nil {
			return p.noteOverrides(err)
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Line: v.Line}, &v)
	}
	if err := m.Decode(into); err != nil {
		return p.noteOverrides(yamlError(p.File, err))
	}
	return nil
}

// Own is the handle on a plug-in's own plan fields, of type P (struct{}
// for a plug-in that has none): NewParams makes the value a plan's fields
// are decoded into, and Of hands it back typed. It is the one place where
// a plug-in's parameters are asserted to their type; the registries of
// plug-ins keep them as any only between the two.
type Own[P any] struct{}

// NewParams returns a new *P for DecodeParams.
func (Own[P]) NewParams() any { return new(P) }

// Of is the parameters that NewParams made, as a *P.
func (Own[P]) Of(v any) *P { return v.(*P) }

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

// YAML is the plan as a plan file: what a replay or a shrink writes.
func (p *Plan) YAML() ([]byte, error) { return yaml.Marshal(p) }

// EncodeParams is a plug-in's parameters as plan fields: what a run keeps
// of the plan as it runs, defaults included.
func EncodeParams(spec any) (Params, error) {
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

// FieldError is a plug-in's complaint about one of its own plan fields,
// named as the plan names it in the plug-in's section ("offset",
// "config.tickTime"), or, with InPlan set, about a field elsewhere in the
// plan ("target.version"). The plug-in knows nothing of files and lines:
// Place puts the complaint at its field's line.
type FieldError struct {
	Field  string
	InPlan bool
	Msg    string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Fieldf is a complaint about field of the plug-in's own section.
func Fieldf(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// PlanFieldf is a complaint about the field at path in the plan
// ("target.version"), another section's, that a plug-in's needs refuse.
func PlanFieldf(path, format string, args ...any) error {
	return &FieldError{Field: path, InPlan: true, Msg: fmt.Sprintf(format, args...)}
}

// Place is err, a plug-in's of the section at path ("target",
// "nemesis[2]"), at its line: a *FieldError at its field's, any other
// error at the section's.
func (p *Plan) Place(path string, err error) error {
	if err == nil {
		return nil
	}
	if fe, ok := errors.AsType[*FieldError](err); ok {
		if !fe.InPlan {
			return p.Errorf(joinPath(path, fe.Field), "%s", fe.Msg)
		}
		return p.Errorf(fe.Field, "%s", fe.Msg)
	}
	return p.Errorf(path, "%v", err)
}

// Count fills a plug-in's count field (named field, e.g. "keys") with def
// when the plan leaves it at 0, and checks it is in [lo, hi].
func Count(field string, v *int, def, lo, hi int) error {
	if *v == 0 {
		*v = def
	}
	if *v < lo || *v > hi {
		return Fieldf(field, "%d: expected %d to %d", *v, lo, hi)
	}
	return nil
}
