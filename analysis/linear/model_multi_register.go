// The multi-register model: Jepsen's :txn of reads and writes on several
// registers, all applied at one point, in order (a read sees the same
// transaction's earlier writes). Per Knossos, a read of nil in a transaction
// is an unknown value, always legal. Transactions span keys, so the history
// is checked as a whole: the state is every key's value id, 4 bytes per key
// in a string, which porcupine can compare and hash as it is.

package linear

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/txnop"
)

// txnMicro is one step of a transaction, on key and value ids.
type txnMicro struct {
	write  bool
	key, v int32
}

type txnOut []int32 // what each read returned, -1 if unknown; nil: outcome unknown

func multiRegisterModel() *Model {
	return &Model{
		Name:    "multi-register",
		Fs:      map[string]bool{txnop.FTxn: true},
		What:    "key",
		Prepare: prepareMultiRegister,
	}
}

func prepareMultiRegister(in analysis.Input) (*Spec, error) {
	vals, keys := newValueTable(), &interner{ids: map[string]int32{}}
	def := int32(0)
	perKey := map[int32]int32{}
	var obj map[string]json.RawMessage
	if len(in.Initial) > 0 && json.Unmarshal(in.Initial, &obj) == nil && obj != nil {
		for k, raw := range obj { // an object gives each key its own initial value
			id, err := vals.id(raw)
			if err != nil {
				return nil, fmt.Errorf("initial value of %q: %w", k, err)
			}
			perKey[keys.id(k)] = id
		}
	} else {
		var err error
		if def, err = vals.id(in.Initial); err != nil {
			return nil, fmt.Errorf("initial value: %w", err)
		}
	}
	return &Spec{
		Convert: func(inv, done *history.Op) (Op, error) { return convertTxn(vals, keys, inv, done) },
		Model: porcupine.Model{
			Init: func() any { // called after the scan: every key is known
				b := make([]byte, 4*len(keys.texts))
				for k := range keys.texts {
					putU32(b, int32(k), analysis.CmpOr(perKey[int32(k)], def))
				}
				return string(b)
			},
			Step: stepTxn,
			Hash: hashString(),
			DescribeOperation: func(i, o any) string {
				in, out := i.([]txnMicro), o.(txnOut)
				var parts []string
				for j, m := range in {
					switch {
					case m.write:
						parts = append(parts, "w "+keys.texts[m.key]+" "+vals.text(m.v))
					case out == nil || out[j] < 0:
						parts = append(parts, "r "+keys.texts[m.key]+" ?")
					default:
						parts = append(parts, "r "+keys.texts[m.key]+" "+vals.text(out[j]))
					}
				}
				return "txn [" + strings.Join(parts, ", ") + "]"
			},
			DescribeState: func(s any) string {
				st := s.(string)
				var parts []string
				for k := 0; k < len(st)/4 && k < 20; k++ {
					parts = append(parts, keys.texts[k]+"="+vals.text(getU32(st, int32(k))))
				}
				if len(st)/4 > 20 {
					parts = append(parts, "…")
				}
				return "{" + strings.Join(parts, ", ") + "}"
			},
		},
	}, nil
}

// convertTxn reads a transaction. One that writes nothing and whose reads
// are all unknown constrains nothing and is dropped.
func convertTxn(vals *valueTable, keys *interner, inv, done *history.Op) (Op, error) {
	var steps []txnop.Step
	if err := inv.Decode(&steps); err != nil {
		return Op{}, err
	}
	in := make([]txnMicro, len(steps))
	writes := false
	for j, s := range steps {
		switch s.F {
		case "r", "read":
		case "w", "write":
			id, err := vals.id(s.Value)
			if err != nil || len(s.Value) == 0 {
				return Op{}, fmt.Errorf("op #%d txn step %d: expected a value to write: %v", inv.Index, j, err)
			}
			in[j].write, in[j].v, writes = true, id, true
		default:
			return Op{}, fmt.Errorf(`op #%d txn step %d: f %q, expected "r" or "w"`, inv.Index, j, s.F)
		}
		in[j].key = keys.id(s.Key)
	}
	if done == nil {
		return Op{Input: in, Output: txnOut(nil), Drop: !writes}, nil // read-only and unknown: constrains nothing
	}
	var got []txnop.Step
	if err := done.Decode(&got); err != nil {
		return Op{}, err
	}
	if len(got) != len(steps) {
		return Op{}, fmt.Errorf("op #%d txn: %d steps, but its invocation #%d had %d", done.Index, len(got), inv.Index, len(steps))
	}
	out := make(txnOut, len(steps))
	known := writes
	for j, s := range got {
		out[j] = -1
		if s.F != steps[j].F || s.Key != steps[j].Key {
			return Op{}, fmt.Errorf("op #%d txn step %d is %s %q, but its invocation's is %s %q", done.Index, j, s.F, s.Key, steps[j].F, steps[j].Key)
		}
		if in[j].write || len(s.Value) == 0 {
			continue
		}
		id, err := vals.id(s.Value)
		if err != nil {
			return Op{}, fmt.Errorf("op #%d txn step %d: %w", done.Index, j, err)
		}
		if id != 0 { // nil: unknown, per Knossos
			out[j], known = id, true
		}
	}
	return Op{Input: in, Output: out, Drop: !known}, nil
}

func stepTxn(s, i, o any) (bool, any) {
	st, in, out := s.(string), i.([]txnMicro), o.(txnOut)
	var buf []byte // copied on the first write: states are immutable
	for j, m := range in {
		if m.write {
			if buf == nil {
				buf = []byte(st)
			}
			putU32(buf, m.key, m.v)
			continue
		}
		if out == nil || out[j] < 0 {
			continue
		}
		cur := getU32(st, m.key)
		if buf != nil {
			cur = getU32(buf, m.key)
		}
		if out[j] != cur {
			return false, s
		}
	}
	if buf == nil {
		return true, s
	}
	return true, string(buf)
}

// getU32 and putU32 read and write key k's value id in a state.
func getU32[T ~string | ~[]byte](s T, k int32) int32 {
	i := int(k) * 4
	return int32(uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24)
}

func putU32(b []byte, k, v int32) {
	i := int(k) * 4
	b[i], b[i+1], b[i+2], b[i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}
