package jepsen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/ops/txnop"
)

// The Knossos models whose histories Read converts.
const (
	Register      = "register"       // :read and :write of one register, or of independent [k v] keys
	CasRegister   = "cas-register"   // the same plus :cas [from to]
	MultiRegister = "multi-register" // :txn [[:r k v] [:w k v] ...]
	Mutex         = "mutex"          // :acquire and :release
	// Elle's workloads, judged by the checkers of the same names.
	RwRegister = "rw-register" // :txn [[:r k v] [:w k v] ...], as multi-register
	ListAppend = "list-append" // :txn [[:r k [v ...]] [:append k v] ...]
)

// Models lists the models Read accepts.
var Models = []string{Register, CasRegister, MultiRegister, Mutex, RwRegister, ListAppend}

// ReadFile reads a Jepsen EDN history; errors name the file: "FILE:LINE:COL: ...".
func ReadFile(path, model string) ([]history.Op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path, model)
}

// Read converts a Jepsen EDN history (a vector or list of op maps, or op
// maps one after another) into chaos ops for a Knossos model. name, if not
// empty, prefixes error positions. Values become JSON in the form that
// keeps what Clojure's = tells apart (tagged.go: 1 stays a number, 1.0 and
// :x become "~d1.0" and "~:x"), inside:
//   - register, cas-register: a registerop.Value; independent tuples
//     [k v] set its Key to k's text, else Key is "". A read's nil is absent
//     on the invocation and JSON null on an ok completion.
//   - multi-register, rw-register: []txnop.Step with F "r" or "w"
//     (:read and :write spelled out are accepted), keys as text, nil
//     reads as for registers.
//   - list-append: []txnop.Step with F "r" (its value the list read)
//     or "append".
//
// For rw-register and list-append, :f may be left out, as Elle takes every
// client op for a transaction; and, as for every model, a completion need
// not follow an invocation (a history of completions only).
//   - mutex: no value (see converter.mutex for chaos's own exports).
//
// Each op's Index is its position in the file and its Time is that same
// position in nanoseconds: in a Jepsen history file order is real-time
// order, while :time is not always monotonic, so :time and :index are
// ignored. Processes that are not integers (:nemesis) become history.Nemesis,
// their values kept in the same JSON form. Text that is not UTF-8 is refused.
func Read(r io.Reader, name, model string) ([]history.Op, error) {
	c := &converter{model: model}
	switch model {
	case Register, CasRegister, MultiRegister, Mutex, RwRegister, ListAppend:
	default:
		return nil, fmt.Errorf("unknown model %q: expected one of %s", model, strings.Join(Models, ", "))
	}
	// The ops are gathered in chunks and joined once at the end: one slice
	// grown by append would be copied some thirty times over for 200,000
	// ops, which took a tenth of the reading.
	var chunks [][]history.Op
	var chunk []history.Op
	n := 0
	inFlight := map[int]int{} // the line of a process's invocation not yet completed
	err := NewDecoder(r).Elements(func(v Value) error {
		op, err := c.op(v)
		op.Index, op.Time = n, time.Duration(n)
		n++
		if len(chunk) == opChunk {
			chunks, chunk = append(chunks, chunk), make([]history.Op, 0, opChunk)
		}
		chunk = append(chunk, op)
		if err != nil || op.Process == history.Nemesis {
			return err
		}
		// Jepsen's history pairs each invocation with its process's next
		// completion, and refuses a process that invokes again before
		// that: pairing one here would judge a history Jepsen does not
		// have. A completion with no invocation stands alone (a history
		// of completions only).
		if line, ok := inFlight[op.Process]; ok && op.Type == history.Invoke {
			return errAt(v, "process %d invokes again while its operation invoked at line %d is still in flight: a Jepsen history has one operation per process at a time (Jepsen's own history refuses this too)", op.Process, line)
		}
		if op.Type == history.Invoke {
			inFlight[op.Process] = v.Line
		} else {
			delete(inFlight, op.Process)
		}
		return nil
	})
	if e := (*Error)(nil); errors.As(err, &e) {
		e.File = name
	} else if err != nil && name != "" {
		err = fmt.Errorf("%s: %w", name, err)
	}
	if err != nil {
		return nil, err
	}
	return slices.Concat(append(chunks, chunk)...), nil
}

// opChunk is how many ops Read gathers in each chunk.
const opChunk = 4096

type converter struct {
	model string
	// tuples says whether register values are independent [k v] tuples:
	// decided by the first client op with a value (at decided), then
	// required.
	tuples  bool
	decided *position
	// keys are the register keys seen, by name, for key.
	keys map[string]firstKey
	// out is where an op's value is written, reused from op to op.
	out bytes.Buffer
	// block is where keep copies values to.
	block []byte
}

func errAt(v Value, format string, args ...any) error {
	return &Error{Line: v.Line, Col: v.Col, Msg: fmt.Sprintf(format, args...)}
}

func (c *converter) op(m Value) (history.Op, error) {
	var op history.Op
	if m.Kind == Tagged && len(m.Items) == 1 { // a record: #jepsen.history.Op{...}
		m = m.Items[0]
	}
	if m.Kind != Map {
		return op, errAt(m, "expected an op map like {:type :invoke, :process 0, :f :read}, got %s", describe(m))
	}
	get := func(k string) (Value, error) {
		v, ok := m.Get(k)
		if !ok {
			return v, errAt(m, "op has no :%s", k)
		}
		return v, nil
	}
	t, err := get("type")
	if err != nil {
		return op, err
	}
	op.Type = history.Type(t.Text)
	if t.Kind != Keyword || !op.Type.Valid() {
		return op, errAt(t, "expected :type to be :invoke, :ok, :fail or :info, got %s", describe(t))
	}
	p, err := get("process")
	if err != nil {
		return op, err
	}
	op.Process = history.Nemesis // :nemesis, or any other non-integer process
	if p.Kind == Int {
		n, err := strconv.Atoi(p.Text)
		if err != nil || n < 0 {
			return op, errAt(p, "expected :process to be a client number >= 0 or :nemesis, got %s", p)
		}
		op.Process = n
	}
	f, ok := m.Get("f")
	if !ok && (c.model == RwRegister || c.model == ListAppend) {
		// Elle judges every client op as a transaction, whatever its :f,
		// and its own tests leave :f out.
		f = Value{Kind: Keyword, Text: txnop.FTxn, Line: m.Line, Col: m.Col}
	} else if !ok {
		return op, errAt(m, "op has no :f")
	}
	if f.Kind != Keyword && f.Kind != Symbol && f.Kind != String {
		return op, errAt(f, "expected :f to be a keyword like :read, got %s", describe(f))
	}
	op.F = f.Text
	if e, ok := m.Get("error"); ok && e.Kind != Nil {
		op.Error = e.Text
		if e.Kind != String {
			op.Error = e.String() // :timed-out, [:not-found "..."]
		}
	}
	v, _ := m.Get("value")
	switch {
	case op.Process == history.Nemesis:
		if v.Kind != Nil {
			op.Value, err = jsonValue(v)
		}
	case c.model == MultiRegister, c.model == RwRegister, c.model == ListAppend:
		err = c.txn(&op, f, v)
	case c.model == Mutex:
		err = c.mutex(&op, m, f, v)
	default:
		err = c.register(&op, f, v)
	}
	return op, err
}

func isPair(v Value) bool { return (v.Kind == Vector || v.Kind == List) && len(v.Items) == 2 }

func (c *converter) register(op *history.Op, f, v Value) error {
	switch {
	case op.F == registerop.FCas && c.model == Register:
		return errAt(f, "the register model has no :cas (use cas-register)")
	case op.F != registerop.FRead && op.F != registerop.FWrite && op.F != registerop.FCas:
		return errAt(f, "expected :f to be :read, :write or :cas for model %s, got %s", c.model, f)
	}
	if c.decided == nil && v.Kind != Nil {
		c.decided = &position{v.Line, v.Col}
		c.tuples = isPair(v) && (op.F != registerop.FCas || isPair(v.Items[1]))
	}
	// The JSON of a registerop.Value is written directly, as json.Marshal
	// would write it, as txn writes its steps.
	key := ""
	if c.tuples {
		if !isPair(v) {
			return errAt(v, "expected an independent [key value] tuple, as at %d:%d, got %s", c.decided.line, c.decided.col, describe(v))
		}
		var err error
		if key, err = c.key(v.Items[0]); err != nil {
			return err
		}
		v = v.Items[1]
	}
	b := &c.out
	b.Reset()
	b.WriteString(`{"key":`)
	writeString(b, key)
	var err error
	switch {
	case op.F == registerop.FWrite || op.F == registerop.FRead && (v.Kind != Nil || op.Type == history.Ok):
		// A nil read that completed ok is JSON null; the checker decides
		// whether that means "absent" or Knossos's "unknown".
		b.WriteString(`,"value":`)
		err = encode(b, v)
	case op.F == registerop.FCas && isPair(v):
		b.WriteString(`,"from":`)
		if err = encode(b, v.Items[0]); err == nil {
			b.WriteString(`,"to":`)
			err = encode(b, v.Items[1])
		}
	case op.F == registerop.FCas && (v.Kind != Nil || op.Type == history.Invoke || op.Type == history.Ok):
		return errAt(v, "expected a cas value [from to], got %s", describe(v))
	}
	if err != nil {
		return err
	}
	b.WriteByte('}')
	op.Value = c.keep(b.Bytes())
	return nil
}

func (c *converter) txn(op *history.Op, f, v Value) error {
	writeF, example, fns := "w", "[[:r k v] [:w k v] ...]", ":r, :w, :read or :write"
	if c.model == ListAppend {
		writeF, example, fns = "append", "[[:r k [v ...]] [:append k v] ...]", ":r or :append"
	}
	if op.F != txnop.FTxn {
		return errAt(f, "expected :f to be :txn (the %s model's only operation), got %s", c.model, f)
	}
	if v.Kind == Nil && (op.Type == history.Fail || op.Type == history.Info) {
		return nil
	}
	if v.Kind != Vector && v.Kind != List {
		return errAt(v, "expected a transaction %s, got %s", example, describe(v))
	}
	// The steps' JSON is written here directly, as json.Marshal would
	// write []txnop.Step, rather than built as structs and marshalled:
	// that took a sixth of reading a list-append history.
	b := &c.out
	b.Reset()
	b.WriteByte('[')
	for i, s := range v.Items {
		if (s.Kind != Vector && s.Kind != List) || len(s.Items) != 3 || s.Items[0].Kind != Keyword {
			return errAt(s, "expected a step [:r k v] or [:%s k v], got %s", writeF, describe(s))
		}
		key, err := c.key(s.Items[1])
		if err != nil {
			return err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		x, fn := s.Items[2], s.Items[0].Text
		read := fn == "r" || fn == "read" && c.model != ListAppend // Jepsen says :r, Knossos :read
		switch {
		case read:
			b.WriteString(`{"f":"r","key":`)
		case fn == writeF || fn == "write" && c.model != ListAppend:
			b.WriteString(`{"f":"` + writeF + `","key":`)
		default:
			return errAt(s.Items[0], "expected a step function %s, got %s", fns, s.Items[0])
		}
		writeString(b, key)
		// A read's nil is absent on the invocation (Step's omitempty).
		if !read || x.Kind != Nil || op.Type == history.Ok {
			b.WriteString(`,"value":`)
			if err := encode(b, x); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	op.Value = c.keep(b.Bytes())
	return nil
}

// keep copies a value's JSON into the block that the values of many ops
// share: one allocation for a block rather than one for each op, which
// the garbage collector would otherwise count and sweep one by one. Each
// value's capacity ends where it does, so that appending to one cannot
// overwrite the next.
func (c *converter) keep(b []byte) json.RawMessage {
	if len(b) > cap(c.block)-len(c.block) {
		c.block = make([]byte, 0, max(blockSize, len(b)))
	}
	start := len(c.block)
	c.block = append(c.block, b...)
	return c.block[start:len(c.block):len(c.block)]
}

// blockSize is the size of the blocks keep copies values into.
const blockSize = 64 << 10

// mutex converts lock ops. Knossos's mutex ignores values, so a foreign
// value is dropped; but what Write exports for chaos's lock workload (a
// {:lock :session :token} map, and writes [key value] with :session and
// :token on the op) comes back whole, for chaos's own lock analysis.
func (c *converter) mutex(op *history.Op, m, f, v Value) error {
	switch op.F {
	case lockop.FAcquire, lockop.FRelease:
		if lv, ok := lockValue(v); ok {
			op.Value = history.MustValue(lv)
		}
		return nil
	case lockop.FWrite:
		if !isPair(v) {
			return errAt(v, "expected a lock workload write [key value], got %s", describe(v))
		}
		key, err := c.key(v.Items[0])
		if err != nil {
			return err
		}
		val, _, err := valueName(v.Items[1])
		if err != nil {
			return err
		}
		wv := lockop.WriteValue{Key: key, Value: val}
		s, _ := m.Get("session")
		t, _ := m.Get("token")
		if wv.Session, err = strconv.Atoi(s.Text); s.Kind != Nil && (s.Kind != Int || err != nil) {
			return errAt(s, "expected :session to be an integer, got %s", describe(s))
		}
		if wv.Token, err = token(t); err != nil {
			return err
		}
		op.Value = history.MustValue(wv)
		return nil
	}
	return errAt(f, "expected :f to be :acquire or :release (or :write of chaos's lock workload), got %s", f)
}

func token(t Value) (*int64, error) {
	if t.Kind == Nil {
		return nil, nil
	}
	n, err := strconv.ParseInt(t.Text, 10, 64)
	if t.Kind != Int || err != nil {
		return nil, errAt(t, "expected :token to be an integer or nil, got %s", describe(t))
	}
	return &n, nil
}

// lockValue reads the map Write makes of a lockop.Value.
func lockValue(v Value) (lockop.Value, bool) {
	var lv lockop.Value
	if v.Kind != Map || len(v.Items) == 0 {
		return lv, false
	}
	for i := 0; i < len(v.Items); i += 2 {
		k, x := v.Items[i], v.Items[i+1]
		var err error
		switch {
		case k.Kind != Keyword:
			return lv, false
		case k.Text == "lock" && x.Kind == String:
			lv.Lock = x.Text
		case k.Text == "session" && x.Kind == Int:
			lv.Session, err = strconv.Atoi(x.Text)
		case k.Text == "token":
			lv.Token, err = token(x)
		default:
			return lv, false
		}
		if err != nil {
			return lv, false
		}
	}
	return lv, true
}

// key names a register key: 3 → "3", "x" → "x", :x → "x", and any other
// key by its JSON form (tagged.go). Keys that Clojure tells apart but that
// would get one name, such as 3 and "3", are refused: checking them as one
// register would merge two.
func (c *converter) key(k Value) (string, error) {
	// A key named by its text is the key first seen with its name if it
	// has the same kind: then it has the same JSON form too. This is
	// nearly every key of a history, named without encoding it.
	if first, ok := c.keys[k.Text]; ok && first.kind == k.Kind && namedByText(k.Kind) {
		return k.Text, nil
	}
	n, form, err := valueName(k)
	if err != nil {
		return "", err
	}
	if c.keys == nil {
		c.keys = map[string]firstKey{}
	}
	first, seen := c.keys[n]
	if !seen {
		// Its text and place are kept, not k itself: the decoder reuses
		// the items of a collection key.
		c.keys[n] = firstKey{k.Kind, string(form), k.String(), position{k.Line, k.Col}}
	} else if first.form != string(form) {
		return "", errAt(k, "key %s and key %s (at %d:%d) are different values but would both be named %q", k, first.text, first.at.line, first.at.col, n)
	}
	return n, nil
}

// firstKey is the first key seen with a name: its kind, JSON form, EDN
// text and place.
type firstKey struct {
	kind       Kind
	form, text string
	at         position
}

// position is a place in the input.
type position struct{ line, col int }

// namedByText reports whether valueName names values of kind k by their
// text.
func namedByText(k Kind) bool {
	switch k {
	case String, Keyword, Symbol, Int, Char:
		return true
	}
	return false
}

// valueName is the text that names a value, and its JSON form.
func valueName(v Value) (string, json.RawMessage, error) {
	form, err := jsonValue(v)
	if namedByText(v.Kind) {
		return v.Text, form, err
	}
	return string(form), form, err
}

// jsonValue is v's JSON form (tagged.go).
func jsonValue(v Value) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := encode(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
