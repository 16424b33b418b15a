// Random small histories for the register oracles (register, cas-register,
// multi-register, kv). Each is drawn from an execution that really
// happened: every operation that took effect did so at one point within
// its interval (an operation of unknown outcome at any point after its
// invocation), reads return what was there; then none, one or two results
// or outcomes are corrupted, so that many histories are invalid, and the
// invalid ones are near the boundary.

package oracle

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/randhistory"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/ops/txnop"
)

// RegisterCase is a generated history and the options it is checked with.
type RegisterCase struct {
	History         []history.Op
	Initial         json.RawMessage
	NilReadsUnknown bool
}

// genOp is an operation being generated.
type genOp struct {
	proc      int
	inv, done int64        // times, in ticks
	outcome   history.Type // Ok, Fail, Info, or "" for never completed
	at        int          // when it takes effect, in quarters of a tick; -1: never
	f         string
	key       int
	// the operation's arguments and result, as the model reads them
	args []string
	out  []string
}

// genModel is what a generator knows of one model.
type genModel interface {
	// draw picks op's f, key and arguments.
	draw(r randhistory.Rand, op *genOp)
	// run applies op, which takes effect now, to s, sets op.out (and may
	// turn an ok into a fail: a cas that found another value failed).
	run(op *genOp, s []string) []string
	// corrupt changes op's recorded result, if it has one to change.
	corrupt(r randhistory.Rand, op *genOp)
	// values are op's invocation and completion values.
	values(op *genOp) (inv, done any)
}

// registerValues are the values the register generators write: few, so
// that operations collide.
var registerValues = []string{"0", "1", "2"}

// registerKeys name the keys of generated histories.
var registerKeys = []string{"x", "y"}

// RandomRegister is a random register history over one or two keys:
// reads and writes, and cas operations if cas.
func RandomRegister(r randhistory.Rand, cas bool) RegisterCase {
	c := RegisterCase{NilReadsUnknown: r.IntN(2) == 0}
	if r.IntN(2) == 0 {
		c.Initial = json.RawMessage("0")
	}
	init := "null"
	if c.Initial != nil {
		init = string(c.Initial)
	}
	c.History = generateRegister(r, registerGen{cas: cas, keys: 1 + r.IntN(2)}, []string{init, init}, r.IntN(3))
	return c
}

// RandomMultiRegister is a random multi-register history: transactions of
// one to three reads and writes over one or two keys.
func RandomMultiRegister(r randhistory.Rand) RegisterCase {
	inits := []string{"", "0", `{"x":0}`, `{"x":1,"y":0}`}
	c := RegisterCase{}
	if s := randhistory.OneOf(r, inits...); s != "" {
		c.Initial = json.RawMessage(s)
	}
	start, err := multiInitial(c.Initial, keySlots{"x": 0, "y": 1})
	if err != nil {
		panic(err) // the initial values above are all valid
	}
	c.History = generateRegister(r, txnGen{keys: 1 + r.IntN(2)}, start, r.IntN(3))
	return c
}

// RandomKV is a random kv history over one or two keys.
func RandomKV(r randhistory.Rand) RegisterCase {
	inits := []string{"", `""`, `"a"`}
	c := RegisterCase{}
	start := ""
	if s := randhistory.OneOf(r, inits...); s != "" {
		c.Initial = json.RawMessage(s)
		start, _ = strconv.Unquote(s)
	}
	c.History = generateRegister(r, kvGen{keys: 1 + r.IntN(2)}, []string{start, start}, r.IntN(3))
	return c
}

// generateRegister draws one to four processes and one to nine operations
// of m, runs them from the key slots' values start, corrupts results or
// outcomes the given number of times, and writes the history's entries in
// an order of lines that keeps each process's own order but may differ
// from the order of their times.
func generateRegister(r randhistory.Rand, m genModel, start []string, corruptions int) []history.Op {
	procs := 1 + r.IntN(4)
	ops := make([]*genOp, 1+r.IntN(9))
	clock := make([]int64, procs)
	last := map[int]*genOp{}
	for i := range ops {
		op := &genOp{proc: r.IntN(procs)}
		op.inv = clock[op.proc] + int64(r.IntN(3))
		op.done = op.inv + int64(r.IntN(4))
		clock[op.proc] = op.done
		op.outcome = randhistory.AnyOutcome(r)
		last[op.proc] = op
		m.draw(r, op)
		ops[i] = op
	}
	for _, op := range ops {
		if op.outcome == "" && last[op.proc] != op {
			op.outcome = history.Info // only a process's last operation can be left in flight
		}
		switch {
		case op.outcome == history.Ok:
			op.at = int(4*op.inv) + r.IntN(int(4*(op.done-op.inv))+1)
		case op.outcome != history.Fail && r.IntN(2) == 0:
			op.at = int(4*op.inv) + r.IntN(40)
		default:
			op.at = -1
		}
	}

	order := slices.Clone(ops)
	tie := make(map[*genOp]int, len(ops))
	for _, op := range ops {
		tie[op] = r.IntN(1000)
	}
	slices.SortStableFunc(order, func(a, b *genOp) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(tie[a], tie[b])) })
	s := slices.Clone(start)
	for _, op := range order {
		if op.at >= 0 {
			s = m.run(op, s)
		}
	}
	for range corruptions {
		var readers []*genOp // corrupting what a read returned changes most
		for _, op := range ops {
			if op.outcome == history.Ok && op.out != nil {
				readers = append(readers, op)
			}
		}
		if len(readers) > 0 && r.IntN(3) > 0 {
			m.corrupt(r, randhistory.OneOf(r, readers...))
		} else {
			op := randhistory.OneOf(r, ops...)
			op.outcome = randhistory.OneOf(r, history.Ok, history.Fail, history.Info)
			if op.outcome == history.Ok && op.out == nil { // an ok needs a result: one drawn from nothing
				m.corrupt(r, op)
			}
		}
	}
	return lineOrder(r, m, ops)
}

// lineOrder writes the entries of ops, and now and then a fault of the
// nemesis, each process's in its own order: half the time in order of
// time, the other half interleaved across processes.
func lineOrder(r randhistory.Rand, m genModel, ops []*genOp) []history.Op {
	var lines [][]history.Op // each process's entries, processes in order of their first operation
	slot := map[int]int{}    // process -> its entries in lines
	for _, op := range ops {
		inv, done := m.values(op)
		p, seen := slot[op.proc]
		if !seen {
			p = len(lines)
			slot[op.proc] = p
			lines = append(lines, nil)
		}
		lines[p] = append(lines[p], history.Op{Type: history.Invoke, Process: op.proc, F: op.f, Value: history.MustValue(inv), Time: time.Duration(op.inv) * randhistory.Tick})
		if op.outcome != "" {
			lines[p] = append(lines[p], history.Op{Type: op.outcome, Process: op.proc, F: op.f, Value: history.MustValue(done), Time: time.Duration(op.done) * randhistory.Tick})
		}
	}
	if r.IntN(4) == 0 { // the nemesis's entries are no operations of the model
		fault := history.Op{Type: history.Invoke, Process: history.Nemesis, F: "pause-start", Time: time.Duration(r.IntN(10)) * randhistory.Tick}
		end := fault
		end.Type = history.Info
		lines = append(lines, []history.Op{fault, end})
	}
	h := randhistory.Interleave(r, lines)
	if r.IntN(2) == 0 {
		h = randhistory.InTimeOrder(h)
	}
	return h
}

// registerGen generates register and cas-register operations.
type registerGen struct {
	cas  bool
	keys int
}

func (g registerGen) draw(r randhistory.Rand, op *genOp) {
	op.key = r.IntN(g.keys)
	fs := []string{registerop.FRead, registerop.FWrite}
	if g.cas {
		fs = append(fs, registerop.FCas)
	}
	switch op.f = randhistory.OneOf(r, fs...); op.f {
	case registerop.FWrite: // now and then a write of null, which makes the key absent
		op.args = []string{randhistory.OneOf(r, "0", "1", "2", "0", "1", "2", "null")}
	case registerop.FCas:
		op.args = []string{randhistory.OneOf(r, "0", "1", "2", "0", "1", "2", "null"), randhistory.OneOf(r, registerValues...)}
	}
}

func (g registerGen) run(op *genOp, s []string) []string {
	switch op.f {
	case registerop.FRead:
		op.out = []string{s[op.key]}
	case registerop.FWrite:
		s[op.key] = op.args[0]
	case registerop.FCas:
		if s[op.key] != op.args[0] {
			if op.outcome == history.Ok {
				op.outcome = history.Fail
			}
			break
		}
		s[op.key] = op.args[1]
	}
	return s
}

func (g registerGen) corrupt(r randhistory.Rand, op *genOp) {
	if op.f == registerop.FRead {
		op.out = []string{randhistory.OneOf(r, "null", "0", "1", "2", "3")}
	}
}

func (g registerGen) values(op *genOp) (inv, done any) {
	v := registerop.Value{Key: registerKeys[op.key]}
	switch op.f {
	case registerop.FWrite:
		v.Value = json.RawMessage(op.args[0])
	case registerop.FCas:
		v.From, v.To = json.RawMessage(op.args[0]), json.RawMessage(op.args[1])
	}
	inv, done = v, v
	if op.f == registerop.FRead && op.outcome == history.Ok {
		v.Value = json.RawMessage(op.out[0])
		done = v
	}
	return inv, done
}

// txnGen generates multi-register transactions.
type txnGen struct{ keys int }

// A transaction's args are its steps, "r x" or "w x 1"; out is what each
// step returned (null for a write).

func (g txnGen) draw(r randhistory.Rand, op *genOp) {
	op.f = txnop.FTxn
	for range 1 + r.IntN(3) {
		k := registerKeys[r.IntN(g.keys)]
		if r.IntN(2) == 0 {
			op.args = append(op.args, "r "+k)
		} else {
			op.args = append(op.args, "w "+k+" "+randhistory.OneOf(r, registerValues...))
		}
	}
}

// txnStep reads "r x" or "w x 1".
func txnStep(s string) (f string, key int, v string) {
	key = slices.Index(registerKeys, s[2:3])
	if s[0] == 'w' {
		v = s[4:]
	}
	return s[:1], key, v
}

func (g txnGen) run(op *genOp, s []string) []string {
	op.out = make([]string, len(op.args))
	for j, a := range op.args {
		f, k, v := txnStep(a)
		if f == "w" {
			s[k], op.out[j] = v, "null"
		} else {
			op.out[j] = s[k]
		}
	}
	return s
}

func (g txnGen) corrupt(r randhistory.Rand, op *genOp) {
	op.out = make([]string, len(op.args))
	for j, a := range op.args {
		op.out[j] = "null"
		if f, _, _ := txnStep(a); f == "r" {
			op.out[j] = randhistory.OneOf(r, "null", "0", "1", "2", "3")
		}
	}
}

func (g txnGen) values(op *genOp) (inv, done any) {
	var in, out []txnop.Step
	for j, a := range op.args {
		f, k, v := txnStep(a)
		st := txnop.Step{F: f, Key: registerKeys[k]}
		if f == "w" {
			st.Value = json.RawMessage(v)
		}
		in = append(in, st)
		if f == "r" && op.outcome == history.Ok {
			st.Value = json.RawMessage(op.out[j])
		}
		out = append(out, st)
	}
	return in, out
}

// kvGen generates kv operations; kv values are strings.
type kvGen struct{ keys int }

// kvValue is a kv operation's value.
type kvValue struct {
	Key   string  `json:"key"`
	Value *string `json:"value,omitempty"`
}

func (g kvGen) draw(r randhistory.Rand, op *genOp) {
	op.key = r.IntN(g.keys)
	switch op.f = randhistory.OneOf(r, "get", "put", "append"); op.f {
	case "put":
		op.args = []string{randhistory.OneOf(r, "a", "b", "")}
	case "append":
		op.args = []string{randhistory.OneOf(r, "a", "b")}
	}
}

func (g kvGen) run(op *genOp, s []string) []string {
	switch op.f {
	case "get":
		op.out = []string{s[op.key]}
	case "put":
		s[op.key] = op.args[0]
	default:
		s[op.key] += op.args[0]
	}
	return s
}

func (g kvGen) corrupt(r randhistory.Rand, op *genOp) {
	if op.f == "get" {
		op.out = []string{randhistory.OneOf(r, "", "a", "b", "ab", "ba", "aa")}
	}
}

func (g kvGen) values(op *genOp) (inv, done any) {
	v := kvValue{Key: registerKeys[op.key]}
	if op.args != nil {
		v.Value = &op.args[0]
	}
	inv, done = v, v
	if op.f == "get" && op.outcome == history.Ok {
		v.Value = &op.out[0]
		done = v
	}
	return inv, done
}
