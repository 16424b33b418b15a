// The register models: "register" (read, write) and "cas-register" (also
// cas), one register per key, with Knossos's semantics.

package linear

import (
	"fmt"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
)

// regIn is a register operation on value ids.
type regIn struct {
	f    uint8 // opRead, opWrite or opCas
	a, b int32 // write: a = value; cas: a = from, b = to
}

type regOut struct {
	unknown bool
	// mismatch: a cas ran and found a value other than its from, so it
	// changed nothing (registerop.Value.Mismatch).
	mismatch bool
	v        int32 // what a read returned
}

// Outputs of writes and cases, boxed once.
var (
	regDone    any = regOut{}
	regUnknown any = regOut{unknown: true}
)

func registerModel(cas bool) *Model {
	name := "register"
	if cas {
		name = "cas-register"
	}
	return &Model{
		Name:    name,
		Fs:      map[string]bool{registerop.FRead: true, registerop.FWrite: true, registerop.FCas: true},
		keyed:   true,
		keyOf:   valueKey,
		What:    "register",
		Prepare: func(in analysis.Input) (*Spec, error) { return prepareRegister(in, cas) },
	}
}

func prepareRegister(in analysis.Input, cas bool) (*Spec, error) {
	vals := newValueTable()
	initial, err := vals.id(in.Initial)
	if err != nil {
		return nil, fmt.Errorf("initial value: %w", err)
	}
	convert := func(inv, done *history.Op) (Op, error) {
		return convertRegister(vals, in.NilReadsUnknown, cas, inv, done)
	}
	state := func(id int32) string {
		if id == 0 {
			return "absent"
		}
		return vals.text(id)
	}
	return &Spec{Convert: convert, Model: porcupine.Model{
		Init: func() any { return initial },
		Step: func(s, i, o any) (bool, any) {
			st, in, out := s.(int32), i.(regIn), o.(regOut)
			switch in.f {
			case opRead:
				return out.v == st, s
			case opWrite:
				return true, in.a
			}
			switch {
			case out.mismatch: // as porcupine's etcd model: legal only if the value differed
				return st != in.a, s
			case st == in.a: // a cas that applies, whether or not we heard back
				return true, in.b
			}
			return out.unknown, s // one of unknown outcome may simply have failed
		},
		Hash: func(s any) uint64 { return uint64(s.(int32)) },
		DescribeOperation: func(i, o any) string {
			in, out := i.(regIn), o.(regOut)
			switch in.f {
			case opRead:
				return "read() → " + state(out.v)
			case opWrite:
				return "write(" + vals.text(in.a) + ")" + UnknownMark(out.unknown)
			}
			result := " → ok"
			switch {
			case out.unknown:
				result = UnknownMark(true)
			case out.mismatch:
				result = " → did not match"
			}
			return "cas(" + vals.text(in.a) + ", " + vals.text(in.b) + ")" + result
		},
		DescribeState: func(s any) string { return state(s.(int32)) },
	}}, nil
}

// convertRegister reads a register operation. With nilUnknown, a read of
// null is of unknown value, as in Knossos; without cas, a cas is an error.
func convertRegister(vals *valueTable, nilUnknown, cas bool, inv, done *history.Op) (Op, error) {
	var v registerop.Value
	if err := inv.Decode(&v); err != nil {
		return Op{}, err
	}
	out := regUnknown
	if done != nil {
		out = regDone
	}
	switch inv.F {
	case registerop.FRead:
		if done == nil {
			return Op{key: v.Key, Drop: true}, nil // a read of unknown result constrains nothing
		}
		var d registerop.Value
		if len(done.Value) > 0 {
			if err := done.Decode(&d); err != nil {
				return Op{}, err
			}
		}
		id, err := vals.id(d.Value)
		if err != nil {
			return Op{}, fmt.Errorf("op #%d read: %w", done.Index, err)
		}
		if id == 0 && nilUnknown {
			return Op{key: v.Key, Drop: true}, nil
		}
		return Op{key: v.Key, Input: regIn{f: opRead}, Output: regOut{v: id}}, nil
	case registerop.FWrite:
		if len(v.Value) == 0 {
			return Op{}, fmt.Errorf("op #%d write: no value to write", inv.Index)
		}
		id, err := vals.id(v.Value)
		if err != nil {
			return Op{}, fmt.Errorf("op #%d write: %w", inv.Index, err)
		}
		return Op{key: v.Key, Input: regIn{f: opWrite, a: id}, Output: out}, nil
	default: // cas
		if !cas {
			return Op{}, fmt.Errorf("op #%d is a cas, which the register model lacks: check with cas-register", inv.Index)
		}
		if len(v.From) == 0 || len(v.To) == 0 {
			return Op{}, fmt.Errorf(`op #%d cas: expected "from" and "to"`, inv.Index)
		}
		from, err := vals.id(v.From)
		if err != nil {
			return Op{}, fmt.Errorf("op #%d cas: %w", inv.Index, err)
		}
		to, err := vals.id(v.To)
		if err != nil {
			return Op{}, fmt.Errorf("op #%d cas: %w", inv.Index, err)
		}
		if done != nil && len(done.Value) > 0 {
			var d registerop.Value
			if err := done.Decode(&d); err != nil {
				return Op{}, err
			}
			if d.Mismatch {
				out = regOut{mismatch: true}
			}
		}
		return Op{key: v.Key, Input: regIn{f: opCas, a: from, b: to}, Output: out}, nil
	}
}
