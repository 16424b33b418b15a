package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/history"
)

// The sequential models checked with porcupine (see porcupine.go). Every
// model is total on unknown outputs: an operation whose outcome is unknown is
// legal in any state, applying its effect where it can, so porcupine ordering
// it last stands for "it never happened".
func init() {
	for _, m := range []*linModel{registerModel(false), registerModel(true), kvModel(), multiRegisterModel(), mutexModel()} {
		Register(LinearChecker{model: m})
	}
}

// valueTable interns JSON values by their canonical text, so that models
// compare small integers: id 0 is null, which a register reads as absent.
type valueTable struct {
	ids   map[string]int32
	texts []string
}

func newValueTable() *valueTable {
	return &valueTable{ids: map[string]int32{"null": 0}, texts: []string{"null"}}
}

// id interns raw; an empty raw (no value at all) is null.
func (t *valueTable) id(raw json.RawMessage) (int32, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0, nil
	}
	if plainInt(raw) { // the common case, already canonical: no allocation
		if id, ok := t.ids[string(raw)]; ok {
			return id, nil
		}
	}
	c, err := canonicalJSON(raw)
	if err != nil {
		return 0, err
	}
	id, ok := t.ids[c]
	if !ok {
		if len(t.texts) == math.MaxInt32 {
			return 0, errors.New("too many distinct values")
		}
		id = int32(len(t.texts))
		t.ids[c] = id
		t.texts = append(t.texts, c)
	}
	return id, nil
}

// text is the canonical JSON of an id, for descriptions.
func (t *valueTable) text(id int32) string {
	if id < 0 || int(id) >= len(t.texts) {
		return "?"
	}
	return t.texts[id]
}

func plainInt(b []byte) bool {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 || b[0] == '0' && (len(b) > 1 || neg) {
		return false // empty, leading zero or -0: leave it to canonicalJSON
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// canonicalJSON renders a JSON value so that equal values have equal
// texts: no insignificant space, object keys sorted, numbers in one form
// (1, 1.0 and 1e0 are all 1; integers of any size stay exact).
func canonicalJSON(raw []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("value %s is not JSON: %w", raw, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", fmt.Errorf("value %s: more than one JSON value", raw)
	}
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String(), nil
}

func writeCanonical(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		b.WriteString(canonicalNumber(string(v)))
	case string:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v) // a string always encodes
		b.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(v) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, k)
			b.WriteByte(':')
			writeCanonical(b, v[k])
		}
		b.WriteByte('}')
	}
}

func canonicalNumber(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		if i, ok := new(big.Int).SetString(s, 10); ok {
			return i.String()
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		return s // beyond float64: compared by its text
	case f == math.Trunc(f) && math.Abs(f) < 1<<53:
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Register models: "register" (read, write) and "cas-register" (also cas),
// one register per key, Knossos's semantics.
const (
	opRead uint8 = iota
	opWrite
	opCas
)

type regIn struct {
	f    uint8
	a, b int32 // write: a = value; cas: a = from, b = to
}

type regOut struct {
	unknown bool
	v       int32 // what a read returned
}

// Outputs of writes and cases, boxed once.
var (
	regDone    any = regOut{}
	regUnknown any = regOut{unknown: true}
)

func registerModel(cas bool) *linModel {
	name := "register"
	if cas {
		name = "cas-register"
	}
	return &linModel{
		name:    name,
		fs:      map[string]bool{history.FRead: true, history.FWrite: true, history.FCas: true},
		keyed:   true,
		what:    "register",
		prepare: func(in Input) (*linSpec, error) { return prepareRegister(in, cas) },
	}
}

func prepareRegister(in Input, cas bool) (*linSpec, error) {
	vals := newValueTable()
	initial, err := vals.id(in.Initial)
	if err != nil {
		return nil, fmt.Errorf("initial value: %w", err)
	}
	convert := func(inv, done *history.Op) (string, any, any, bool, error) {
		var v history.RegisterValue
		if err := inv.Decode(&v); err != nil {
			return "", nil, nil, false, err
		}
		out := regUnknown
		if done != nil {
			out = regDone
		}
		switch inv.F {
		case history.FRead:
			if done == nil {
				return v.Key, nil, nil, true, nil // a read of unknown result constrains nothing
			}
			var d history.RegisterValue
			if len(done.Value) > 0 {
				if err := done.Decode(&d); err != nil {
					return "", nil, nil, false, err
				}
			}
			id, err := vals.id(d.Value)
			if err != nil {
				return "", nil, nil, false, fmt.Errorf("op #%d read: %w", done.Index, err)
			}
			if id == 0 && in.NilReadsUnknown {
				return v.Key, nil, nil, true, nil
			}
			return v.Key, regIn{f: opRead}, regOut{v: id}, false, nil
		case history.FWrite:
			if len(v.Value) == 0 {
				return "", nil, nil, false, fmt.Errorf("op #%d write: no value to write", inv.Index)
			}
			id, err := vals.id(v.Value)
			if err != nil {
				return "", nil, nil, false, fmt.Errorf("op #%d write: %w", inv.Index, err)
			}
			return v.Key, regIn{f: opWrite, a: id}, out, false, nil
		default: // cas
			if !cas {
				return "", nil, nil, false, fmt.Errorf("op #%d is a cas, which the register model lacks: check with cas-register", inv.Index)
			}
			if len(v.From) == 0 || len(v.To) == 0 {
				return "", nil, nil, false, fmt.Errorf(`op #%d cas: expected "from" and "to"`, inv.Index)
			}
			from, err := vals.id(v.From)
			if err != nil {
				return "", nil, nil, false, fmt.Errorf("op #%d cas: %w", inv.Index, err)
			}
			to, err := vals.id(v.To)
			if err != nil {
				return "", nil, nil, false, fmt.Errorf("op #%d cas: %w", inv.Index, err)
			}
			return v.Key, regIn{f: opCas, a: from, b: to}, out, false, nil
		}
	}
	state := func(id int32) string {
		if id == 0 {
			return "absent"
		}
		return vals.text(id)
	}
	return &linSpec{convert: convert, model: porcupine.Model{
		Init: func() any { return initial },
		Step: func(s, i, o any) (bool, any) {
			st, in, out := s.(int32), i.(regIn), o.(regOut)
			switch in.f {
			case opRead:
				return out.v == st, s
			case opWrite:
				return true, in.a
			}
			if st == in.a { // a cas that applies, whether or not we heard back
				return true, in.b
			}
			return out.unknown, s // one of unknown outcome may simply have failed
		},
		Hash: func(s any) uint64 { return uint64(s.(int32)) },
		DescribeOperation: func(i, o any) string {
			in, out := i.(regIn), o.(regOut)
			res := ""
			if out.unknown {
				res = " → ?"
			}
			switch in.f {
			case opRead:
				return "read() → " + state(out.v)
			case opWrite:
				return "write(" + vals.text(in.a) + ")" + res
			}
			return "cas(" + vals.text(in.a) + ", " + vals.text(in.b) + ")" + cmpOr(res, " → ok")
		},
		DescribeState:             func(s any) string { return state(s.(int32)) },
		DescribeOperationMetadata: describeRef(in.History),
	}}, nil
}

// The kv model: porcupine's own test model, a string per key with get, put
// and append; a get's "" (or null) means the key is missing.
const (
	fGet    = "get"
	fPut    = "put"
	fAppend = "append"
)

type kvIn struct {
	f uint8 // opRead (get), opWrite (put), opCas (append)
	v string
}

type kvOut struct {
	unknown bool
	v       string
}

func kvModel() *linModel {
	return &linModel{
		name:  "kv",
		fs:    map[string]bool{fGet: true, fPut: true, fAppend: true},
		keyed: true,
		what:  "key",
		prepare: func(in Input) (*linSpec, error) {
			var initial string
			if len(in.Initial) > 0 {
				if err := json.Unmarshal(in.Initial, &initial); err != nil {
					return nil, fmt.Errorf("initial value %s: the kv model holds strings: %w", in.Initial, err)
				}
			}
			seed := maphash.MakeSeed()
			return &linSpec{convert: convertKV, model: porcupine.Model{
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
				Hash: func(s any) uint64 { return maphash.String(seed, s.(string)) },
				DescribeOperation: func(i, o any) string {
					in, out := i.(kvIn), o.(kvOut)
					res := ""
					if out.unknown {
						res = " → ?"
					}
					switch in.f {
					case opRead:
						return fmt.Sprintf("get() → %q", out.v)
					case opWrite:
						return fmt.Sprintf("put(%q)", in.v) + res
					}
					return fmt.Sprintf("append(%q)", in.v) + res
				},
				DescribeState:             func(s any) string { return strconv.Quote(s.(string)) },
				DescribeOperationMetadata: describeRef(in.History),
			}}, nil
		},
	}
}

func convertKV(inv, done *history.Op) (string, any, any, bool, error) {
	var v history.RegisterValue
	if err := inv.Decode(&v); err != nil {
		return "", nil, nil, false, err
	}
	if inv.F == fGet {
		if done == nil {
			return v.Key, nil, nil, true, nil
		}
		var d history.RegisterValue
		var got string
		if len(done.Value) > 0 {
			if err := done.Decode(&d); err != nil {
				return "", nil, nil, false, err
			}
			if err := json.Unmarshal(orNull(d.Value), &got); err != nil {
				return "", nil, nil, false, fmt.Errorf("op #%d get: expected a string: %w", done.Index, err)
			}
		}
		return v.Key, kvIn{f: opRead}, kvOut{v: got}, false, nil
	}
	var arg string
	if err := json.Unmarshal(orNull(v.Value), &arg); err != nil || len(v.Value) == 0 {
		return "", nil, nil, false, fmt.Errorf("op #%d %s: expected a string value: %s", inv.Index, inv.F, v.Value)
	}
	f := opWrite
	if inv.F == fAppend {
		f = opCas
	}
	return v.Key, kvIn{f: f, v: arg}, kvOut{unknown: done == nil}, false, nil
}

// The multi-register model: Jepsen's :txn of reads and writes on several
// registers, all applied at one point, in order (a read sees the same
// transaction's earlier writes). Per Knossos, a read of nil in a transaction
// is an unknown value, always legal. Transactions span keys, so the history
// is checked as a whole: the state is every key's value id, 4 bytes per key
// in a string, which porcupine can compare and hash as it is.
type txnMicro struct {
	write  bool
	key, v int32
}

type txnOut []int32 // what each read returned, -1 if unknown; nil: outcome unknown

func multiRegisterModel() *linModel {
	return &linModel{
		name: "multi-register",
		fs:   map[string]bool{history.FTxn: true},
		what: "key",
		prepare: func(in Input) (*linSpec, error) {
			vals, keys := newValueTable(), &keyTable{ids: map[string]int32{}}
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
			seed := maphash.MakeSeed()
			return &linSpec{
				convert: func(inv, done *history.Op) (string, any, any, bool, error) { return convertTxn(vals, keys, inv, done) },
				model: porcupine.Model{
					Init: func() any { // called after the scan: every key is known
						b := make([]byte, 4*len(keys.names))
						for k := range keys.names {
							putU32(b, int32(k), cmpOr(perKey[int32(k)], def))
						}
						return string(b)
					},
					Step: stepTxn,
					Hash: func(s any) uint64 { return maphash.String(seed, s.(string)) },
					DescribeOperation: func(i, o any) string {
						in, out := i.([]txnMicro), o.(txnOut)
						var parts []string
						for j, m := range in {
							switch {
							case m.write:
								parts = append(parts, "w "+keys.names[m.key]+" "+vals.text(m.v))
							case out == nil || out[j] < 0:
								parts = append(parts, "r "+keys.names[m.key]+" ?")
							default:
								parts = append(parts, "r "+keys.names[m.key]+" "+vals.text(out[j]))
							}
						}
						return "txn [" + strings.Join(parts, ", ") + "]"
					},
					DescribeState: func(s any) string {
						st := s.(string)
						var parts []string
						for k := 0; k < len(st)/4 && k < 20; k++ {
							parts = append(parts, keys.names[k]+"="+vals.text(getU32(st, int32(k))))
						}
						if len(st)/4 > 20 {
							parts = append(parts, "…")
						}
						return "{" + strings.Join(parts, ", ") + "}"
					},
					DescribeOperationMetadata: describeRef(in.History),
				},
			}, nil
		},
	}
}

type keyTable struct {
	ids   map[string]int32
	names []string
}

func (t *keyTable) id(k string) int32 {
	id, ok := t.ids[k]
	if !ok {
		id = int32(len(t.names))
		t.ids[k] = id
		t.names = append(t.names, k)
	}
	return id
}

func convertTxn(vals *valueTable, keys *keyTable, inv, done *history.Op) (string, any, any, bool, error) {
	var steps []history.TxnStep
	if err := inv.Decode(&steps); err != nil {
		return "", nil, nil, false, err
	}
	in := make([]txnMicro, len(steps))
	writes := false
	for j, s := range steps {
		switch s.F {
		case "r", "read":
		case "w", "write":
			id, err := vals.id(s.Value)
			if err != nil || len(s.Value) == 0 {
				return "", nil, nil, false, fmt.Errorf("op #%d txn step %d: expected a value to write: %v", inv.Index, j, err)
			}
			in[j].write, in[j].v, writes = true, id, true
		default:
			return "", nil, nil, false, fmt.Errorf(`op #%d txn step %d: f %q, expected "r" or "w"`, inv.Index, j, s.F)
		}
		in[j].key = keys.id(s.Key)
	}
	if done == nil {
		return "", in, txnOut(nil), !writes, nil // read-only and unknown: constrains nothing
	}
	var got []history.TxnStep
	if err := done.Decode(&got); err != nil {
		return "", nil, nil, false, err
	}
	if len(got) != len(steps) {
		return "", nil, nil, false, fmt.Errorf("op #%d txn: %d steps, but its invocation #%d had %d", done.Index, len(got), inv.Index, len(steps))
	}
	out := make(txnOut, len(steps))
	known := writes
	for j, s := range got {
		out[j] = -1
		if s.F != steps[j].F || s.Key != steps[j].Key {
			return "", nil, nil, false, fmt.Errorf("op #%d txn step %d is %s %q, but its invocation's is %s %q", done.Index, j, s.F, s.Key, steps[j].F, steps[j].Key)
		}
		if in[j].write || len(s.Value) == 0 {
			continue
		}
		id, err := vals.id(s.Value)
		if err != nil {
			return "", nil, nil, false, fmt.Errorf("op #%d txn step %d: %w", done.Index, j, err)
		}
		if id != 0 { // nil: unknown, per Knossos
			out[j], known = id, true
		}
	}
	return "", in, out, !known, nil
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

func getU32[T ~string | ~[]byte](s T, k int32) int32 {
	i := int(k) * 4
	return int32(uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24)
}

func putU32(b []byte, k, v int32) {
	i := int(k) * 4
	b[i], b[i+1], b[i+2], b[i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// The mutex model (Knossos's): acquire succeeds only when the lock is free,
// release only when it is held, whoever holds it. Each lock name is its own
// mutex; ops without a value share the lock "".
type mutexIn bool // true: acquire

type mutexOut bool // true: outcome unknown

func mutexModel() *linModel {
	return &linModel{
		name:  "mutex",
		fs:    map[string]bool{history.FAcquire: true, history.FRelease: true},
		keyed: true,
		what:  "lock",
		prepare: func(in Input) (*linSpec, error) {
			return &linSpec{convert: convertMutex, model: porcupine.Model{
				Init: func() any { return false },
				Step: func(s, i, o any) (bool, any) {
					held, acquire, unknown := s.(bool), bool(i.(mutexIn)), bool(o.(mutexOut))
					if acquire != held { // acquire when free, release when held
						return true, acquire
					}
					return unknown, s // otherwise it cannot have happened
				},
				Hash: func(s any) uint64 {
					if s.(bool) {
						return 1
					}
					return 0
				},
				DescribeOperation: func(i, o any) string {
					s := "release"
					if i.(mutexIn) {
						s = "acquire"
					}
					if o.(mutexOut) {
						s += " → ?"
					}
					return s
				},
				DescribeState: func(s any) string {
					if s.(bool) {
						return "held"
					}
					return "free"
				},
				DescribeOperationMetadata: describeRef(in.History),
			}}, nil
		},
	}
}

func convertMutex(inv, done *history.Op) (string, any, any, bool, error) {
	var v history.LockValue
	if len(inv.Value) > 0 && string(inv.Value) != "null" {
		if err := inv.Decode(&v); err != nil {
			return "", nil, nil, false, err
		}
	}
	return v.Lock, mutexIn(inv.F == history.FAcquire), mutexOut(done == nil), false, nil
}

// describeRef shows, in a visualization's tooltip, the history entries of an
// operation.
func describeRef(h []history.Op) func(any) string {
	return func(m any) string {
		r, ok := m.(*opRef)
		if !ok {
			return ""
		}
		if r.done < 0 {
			return fmt.Sprintf("#%d, never completed", h[r.inv].Index)
		}
		return fmt.Sprintf("#%d → #%d %s", h[r.inv].Index, h[r.done].Index, h[r.done].Type)
	}
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// cmpOr is cmp.Or for types that are not ordered: the first non-empty value.
func cmpOr[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}
