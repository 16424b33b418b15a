package jepsen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/ops/txnop"
)

// Write exports a chaos history as Jepsen EDN: a vector of op maps, one a
// line, {:index i, :time ns, :type :ok, :process p, :f :read, :value v}.
//
// Values take Jepsen's shapes, chosen by :f and the value's JSON fields:
// register ops (registerop.Value) become independent tuples [k v] and
// [k [from to]] (bare v and [from to] for the key ""); txn steps become
// [[:r k v] [:w k v]]; lock acquires and releases carry {:lock :session
// :token}; lock workload writes (lockop.WriteValue) carry [key value],
// with :session and :token on the op. Values are written as the EDN
// values whose JSON form they are (tagged.go): numbers as integers, or as
// decimals (1.5M) when they are not integers, so that Clojure's = compares
// them exactly as chaos does. A cas that completed ok without applying
// (registerop.Value.Mismatch) becomes a :fail, the nearest Knossos
// has. Nemesis ops get :process :nemesis and :type :info (observer ops
// :process :observer), and processes are renumbered (see Renumber).
// Read(Write(ops)) gives back Renumber(ops), with times replaced by
// positions, nemesis invocations turned :info and mismatched cas :fail.
func Write(w io.Writer, ops []history.Op) error {
	bw := bufio.NewWriter(w)
	bw.WriteByte('[')
	for i, op := range Renumber(ops) {
		m, err := opMap(i, op)
		if err != nil {
			return fmt.Errorf("op #%d (%s): %w", i, op, err)
		}
		if i > 0 {
			bw.WriteString("\n ")
		}
		bw.WriteString(m.String())
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

// Renumber gives a client a fresh process id after each of its ops that
// ended :info, as Jepsen does: Knossos holds an :info op open to the end
// of the history, so its process must never invoke again. The k-th fresh
// id of process p is p + k*n, with n one more than the largest client
// process (the number of clients when they are 0..n-1, as in Jepsen), so
// fresh ids collide with no other.
func Renumber(ops []history.Op) []history.Op {
	n := 0
	for _, op := range ops {
		n = max(n, op.Process+1)
	}
	gen := map[int]int{}
	out := slices.Clone(ops)
	for i := range out {
		p := out[i].Process
		if p < 0 {
			continue
		}
		out[i].Process = p + gen[p]*n
		if out[i].Type == history.Info {
			gen[p]++
		}
	}
	return out
}

func kw(s string) Value       { return Value{Kind: Keyword, Text: s} }
func str(s string) Value      { return Value{Kind: String, Text: s} }
func num(n int64) Value       { return Value{Kind: Int, Text: strconv.FormatInt(n, 10)} }
func vec(xs ...Value) Value   { return Value{Kind: Vector, Items: xs} }
func mapOf(xs ...Value) Value { return Value{Kind: Map, Items: xs} }

// ident is a keyword when s can be one, else a string (Read takes both).
func ident(s string) Value {
	if s == "" || s[0] == ':' || strings.HasSuffix(s, "/") || strings.IndexFunc(s, func(r rune) bool { return r < 0x80 && isDelim(byte(r)) }) >= 0 {
		return str(s)
	}
	return kw(s)
}

// keyEDN writes a register key as Jepsen does, an integer when it is one.
func keyEDN(k string) Value {
	if n, err := strconv.ParseInt(k, 10, 64); err == nil && strconv.FormatInt(n, 10) == k {
		return num(n)
	}
	return str(k)
}

func opMap(i int, op history.Op) (Value, error) {
	if !op.Type.Valid() {
		return Value{}, fmt.Errorf("type %q: expected invoke, ok, fail or info", op.Type)
	}
	typ, proc := kw(string(op.Type)), num(int64(op.Process))
	switch {
	case op.Process == history.Nemesis || op.Process == history.Observer:
		typ, proc = kw("info"), kw(history.ProcessName(op.Process))
	case op.Process < 0:
		return Value{}, fmt.Errorf("process %d: expected -1 (nemesis), -2 (observer) or a client number >= 0", op.Process)
	}
	v, extra, err := value(op)
	if err != nil {
		return Value{}, fmt.Errorf("value %s: %w", op.Value, err)
	}
	var rv registerop.Value
	if op.Type == history.Ok && op.F == registerop.FCas && json.Unmarshal(op.Value, &rv) == nil && rv.Mismatch {
		typ = kw(string(history.Fail))
	}
	m := mapOf(kw("index"), num(int64(i)), kw("time"), num(op.Time.Nanoseconds()),
		kw("type"), typ, kw("process"), proc, kw("f"), ident(op.F), kw("value"), v)
	m.Items = append(m.Items, extra...)
	if op.Error != "" {
		m.Items = append(m.Items, kw("error"), str(op.Error))
	}
	return m, nil
}

// strict decodes raw into v only if it has no other fields, so that a
// value is given a Jepsen shape only when it truly is of that type.
func strict(raw json.RawMessage, v any) bool {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	return d.Decode(v) == nil && !d.More()
}

// hasField tells a lock workload write (which always has a session) from
// a register write.
func hasField(raw json.RawMessage, f string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, ok := m[f]
	return ok
}

// value gives an op's :value, and extra keys for its map.
func value(op history.Op) (Value, []Value, error) {
	if len(op.Value) == 0 {
		return Value{}, nil, nil
	}
	var (
		rv    registerop.Value
		wv    lockop.WriteValue
		steps []txnop.Step
		lv    lockop.Value
	)
	switch {
	case op.Process < 0: // the nemesis's and the observer's values are plain JSON
	case op.F == lockop.FWrite && hasField(op.Value, "session") && strict(op.Value, &wv):
		extra := []Value{kw("session"), num(int64(wv.Session))}
		if wv.Token != nil {
			extra = append(extra, kw("token"), num(*wv.Token))
		}
		return vec(keyEDN(wv.Key), str(wv.Value)), extra, nil
	case (op.F == registerop.FRead || op.F == registerop.FWrite || op.F == registerop.FCas) && strict(op.Value, &rv):
		x, err := decode(rv.Value)
		if op.F == registerop.FCas && (rv.From != nil || rv.To != nil) {
			var from, to Value
			from, err = decode(rv.From)
			if err == nil {
				to, err = decode(rv.To)
			}
			x = vec(from, to)
		}
		if rv.Key != "" {
			x = vec(keyEDN(rv.Key), x)
		}
		return x, nil, err
	case op.F == txnop.FTxn && strict(op.Value, &steps) && !slices.ContainsFunc(steps, func(s txnop.Step) bool { return s.F != "r" && s.F != "w" && s.F != "append" }):
		out := vec()
		for _, s := range steps {
			x, err := decode(s.Value)
			if err != nil {
				return Value{}, nil, err
			}
			out.Items = append(out.Items, vec(kw(s.F), keyEDN(s.Key), x))
		}
		return out, nil, nil
	case (op.F == lockop.FAcquire || op.F == lockop.FRelease) && strict(op.Value, &lv):
		m := mapOf(kw("lock"), str(lv.Lock))
		if lv.Session != 0 {
			m.Items = append(m.Items, kw("session"), num(int64(lv.Session)))
		}
		if lv.Token != nil {
			m.Items = append(m.Items, kw("token"), num(*lv.Token))
		}
		return m, nil, nil
	}
	x, err := decode(op.Value)
	return x, nil, err
}
