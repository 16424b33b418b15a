// The kv model: porcupine's own test model, a string per key with get, put
// and append; a get's "" (or null) means the key is missing.

package linear

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
)

const (
	fGet    = "get"
	fPut    = "put"
	fAppend = "append"
)

type kvIn struct {
	f uint8 // opRead (get), opWrite (put) or opAppend
	v string
}

type kvOut struct {
	unknown bool
	v       string
}

func kvModel() *Model {
	return &Model{
		Name:    "kv",
		Fs:      map[string]bool{fGet: true, fPut: true, fAppend: true},
		keyed:   true,
		keyOf:   valueKey,
		What:    "key",
		Prepare: prepareKV,
	}
}

func prepareKV(in analysis.Input) (*Spec, error) {
	var initial string
	if len(in.Initial) > 0 {
		if err := json.Unmarshal(in.Initial, &initial); err != nil {
			return nil, fmt.Errorf("initial value %s: the kv model holds strings: %w", in.Initial, err)
		}
	}
	return &Spec{Convert: convertKV, Model: porcupine.Model{
		Init: func() any { return initial },
		Step: func(s, i, o any) (bool, any) {
			st, in := s.(string), i.(kvIn)
			switch in.f {
			case opRead:
				return o.(kvOut).v == st, s
			case opWrite:
				return true, in.v
			}
			return true, st + in.v
		},
		Hash: hashString(),
		DescribeOperation: func(i, o any) string {
			in, out := i.(kvIn), o.(kvOut)
			switch in.f {
			case opRead:
				return fmt.Sprintf("get() → %q", out.v)
			case opWrite:
				return fmt.Sprintf("put(%q)", in.v) + UnknownMark(out.unknown)
			}
			return fmt.Sprintf("append(%q)", in.v) + UnknownMark(out.unknown)
		},
		DescribeState: func(s any) string { return strconv.Quote(s.(string)) },
	}}, nil
}

func convertKV(inv, done *history.Op) (Op, error) {
	var v registerop.Value
	if err := inv.Decode(&v); err != nil {
		return Op{}, err
	}
	if inv.F == fGet {
		if done == nil {
			return Op{key: v.Key, Drop: true}, nil // a get of unknown result constrains nothing
		}
		var d registerop.Value
		var got string
		if len(done.Value) > 0 {
			if err := done.Decode(&d); err != nil {
				return Op{}, err
			}
			if err := json.Unmarshal(orNull(d.Value), &got); err != nil {
				return Op{}, fmt.Errorf("op #%d get: expected a string: %w", done.Index, err)
			}
		}
		return Op{key: v.Key, Input: kvIn{f: opRead}, Output: kvOut{v: got}}, nil
	}
	var arg string
	if err := json.Unmarshal(orNull(v.Value), &arg); err != nil || len(v.Value) == 0 {
		return Op{}, fmt.Errorf("op #%d %s: expected a string value: %s", inv.Index, inv.F, v.Value)
	}
	f := opWrite
	if inv.F == fAppend {
		f = opAppend
	}
	return Op{key: v.Key, Input: kvIn{f: f, v: arg}, Output: kvOut{unknown: done == nil}}, nil
}

// orNull reads a missing value as JSON null.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
