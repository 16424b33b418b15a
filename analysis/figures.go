// Typed figures: a checker family's figures of a run, of a type the family
// defines, which analysis.json stores under the type's kind and reads back
// as that same type, so that a tool finds a checker's figures by their
// type, never by the checker's name.

package analysis

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/chaos-testing/chaos/registry"
)

// Figures are a result's figures for tools to read: a value of a type its
// checker's family defines and registers with RegisterFigures.
type Figures interface {
	// FiguresKind is the key analysis.json stores the figures under.
	FiguresKind() string
}

// figureTypes decode figures, by kind.
var figureTypes = registry.New[func(json.RawMessage) (Figures, error)]("figures")

// RegisterFigures makes figures of type T readable back from analysis.json.
// A family registers its figure types in init.
func RegisterFigures[T Figures]() {
	var zero T
	figureTypes.Register(zero.FiguresKind(), func(raw json.RawMessage) (Figures, error) {
		var f T
		err := json.Unmarshal(raw, &f)
		return f, err
	})
}

// FiguresOf is r's figures, if they are a T.
func FiguresOf[T Figures](r Result) (T, bool) {
	f, ok := r.Figures.(T)
	return f, ok
}

// resultFields are a Result's fields, without its JSON methods.
type resultFields Result

// MarshalJSON writes r's fields, and its figures under their kind.
func (r Result) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(resultFields(r))
	if err != nil || r.Figures == nil {
		return b, err
	}
	kind, err := json.Marshal(r.Figures.FiguresKind())
	if err != nil {
		return nil, err
	}
	f, err := json.Marshal(r.Figures)
	if err != nil {
		return nil, err
	}
	return slices.Concat(b[:len(b)-1], []byte(","), kind, []byte(":"), f, []byte("}")), nil
}

// UnmarshalJSON reads r's fields, and its figures from the key of a kind
// registered.
func (r *Result) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*resultFields)(r)); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	for _, kind := range figureTypes.Names() {
		raw, ok := keys[kind]
		if !ok || string(raw) == "null" {
			continue
		}
		decode, _ := figureTypes.Lookup(kind)
		f, err := decode(raw)
		if err != nil {
			return fmt.Errorf("%s figures: %w", kind, err)
		}
		r.Figures = f
	}
	return nil
}
