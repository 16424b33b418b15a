package plans

import (
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

var planFields = reflect.TypeOf(Plan{})

// checkFields walks the YAML tree beside the Go type it decodes into,
// recording each field's line under its path and refusing unknown fields
// with the list of allowed ones (yaml.v3's own message names a Go type, not
// what the user may write).
func checkFields(file string, n *yaml.Node, t reflect.Type, path string, lines map[string]int) error {
	if path != "" {
		lines[path] = n.Line
	}
	switch t.Kind() {
	case reflect.Pointer:
		return checkFields(file, n, t.Elem(), path, lines)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil // the decoder reports the type mismatch
		}
		for i, item := range n.Content {
			if err := checkFields(file, item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), lines); err != nil {
				return err
			}
		}
	case reflect.Map:
		// Keys are the user's (target.config): their lines, for the
		// plug-in that checks them.
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				lines[joinPath(path, n.Content[i].Value)] = n.Content[i].Line
			}
		}
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			ft, ok := fields[key.Value]
			if !ok && hasParams(t) {
				// The plug-in's own field: DecodeParams checks it, once
				// bound; its lines are recorded now, so that binding the
				// plan records nothing in it.
				recordLines(val, joinPath(path, key.Value), lines)
				lines[joinPath(path, key.Value)] = key.Line
				continue
			}
			if !ok {
				where := "the plan"
				if path != "" {
					where = path
				}
				return &Error{File: file, Line: key.Line, Msg: fmt.Sprintf("unknown field %q in %s; allowed: %s", key.Value, where, strings.Join(sortedKeys(fields), ", "))}
			}
			if err := checkFields(file, val, ft, joinPath(path, key.Value), lines); err != nil {
				return err
			}
			lines[joinPath(path, key.Value)] = key.Line
		}
	}
	return nil
}

// recordLines records the line of n and of everything under it, by path,
// as checkFields would for a Go type of the same shape.
func recordLines(n *yaml.Node, path string, lines map[string]int) {
	lines[path] = n.Line
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := joinPath(path, n.Content[i].Value)
			recordLines(n.Content[i+1], key, lines)
			lines[key] = n.Content[i].Line
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			recordLines(item, fmt.Sprintf("%s[%d]", path, i), lines)
		}
	}
}

// hasParams says whether t holds the fields of a plug-in (Params, inline).
func hasParams(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Type == reflect.TypeOf(Params{}) {
			return true
		}
	}
	return false
}

// yamlFields maps the YAML names of t's fields (those of an inline struct
// included) to their types, a plug-in's Params aside. Types with their own
// YAML decoding (Duration) count as scalars.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" && f.Type.Kind() == reflect.Struct {
			maps.Copy(out, yamlFields(f.Type)) // its fields are the section's
			continue
		}
		if name == "-" || name == "" || !f.IsExported() {
			continue
		}
		ft := f.Type
		if reflect.PointerTo(ft).Implements(reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()) {
			ft = reflect.TypeOf("")
		}
		out[name] = ft
	}
	return out
}

func sortedKeys(m map[string]reflect.Type) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func joinPath(parent, field string) string {
	if parent == "" {
		return field
	}
	return parent + "." + field
}
