package txn

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/txnop"
)

// status is what a transaction's completion says of it.
type status uint8

const (
	committed     status = iota // ok
	aborted                     // fail: it certainly did not take effect
	indeterminate               // info, or never completed: it may have
)

// span is the range [from, to) of an arena slice.
type span struct{ from, to int32 }

func (s span) len() int { return int(s.to - s.from) }

type mopKind uint8

const (
	readMop mopKind = iota
	writeMop
)

// mop is one micro-op, its key and values interned.
type mop struct {
	kind mopKind
	key  int32
	// value is the version a write creates, or the last version a known
	// read saw: its key's initial version when it saw nothing.
	value int32
	// seen are the versions a known read saw, in order, in observation.elems:
	// a list read's elements, or a register read's value (none for null).
	seen  span
	known bool
}

// version is one value of one key.
type version struct {
	key int32
	// writer is the transaction that wrote it, -1 for a key's initial
	// version or a value nobody wrote.
	writer  int32
	initial bool
	// intermediate: its writer wrote the key again afterwards, so no
	// other transaction may see it.
	intermediate bool
}

// txn is one transaction: its micro-ops are observation.mops[mops].
type txn struct {
	status status
	mops   span
}

// observation is the history's transactions with keys and values interned
// to integers: the checks compare and index integers, never JSON.
type observation struct {
	// pairs are the transactions' entries: transaction i is pairs[i].
	pairs    []history.Pair
	txns     []txn
	mops     []mop
	elems    []int32
	versions []version
	// text is each version's value as canonical JSON ("" for initial ones);
	// keys each key's.
	text    []string
	keys    []string
	initial []int32 // each key's initial version
	// lists: reads return lists (list-append), not single values.
	lists     bool
	committed int

	keyIDs     map[string]int32
	versionIDs map[string]int32 // key id (4 bytes) and value text
	scratch    []byte
}

// parseErrors counts the transactions whose value could not be read, and
// keeps the first error.
type parseErrors struct {
	n     int
	first error
}

// dupWriteError is a value written twice to one key: every check here
// relies on each version having one writer, so the history cannot be judged.
type dupWriteError struct{ key, value string }

func (e dupWriteError) Error() string {
	return fmt.Sprintf("value %s was written to key %s more than once: values must be unique per key", e.value, e.key)
}

// observe interns the transactions of h. writeF names the write micro-op
// ("append" or "w"); lists says whether reads return lists. It fails only
// on a value written twice; unreadable transactions are counted in bad and
// left without micro-ops.
func observe(ctx context.Context, h []history.Op, writeF string, lists bool) (o *observation, bad parseErrors, err error) {
	// As Elle reads histories, invocations are optional: a completion
	// alone is a transaction whose start is unknown.
	pairs := history.PairsWithLone(h, func(op *history.Op) bool { return op.F == txnop.FTxn && op.Process >= 0 })
	o = &observation{
		pairs: pairs, lists: lists, txns: make([]txn, len(pairs)),
		keyIDs: map[string]int32{}, versionIDs: map[string]int32{},
	}
	o.reserve()
	var raw []rawMop
	for t, p := range pairs {
		if t%4096 == 0 && ctx.Err() != nil {
			return nil, bad, ctx.Err()
		}
		st, value := indeterminate, json.RawMessage(nil)
		if p.Inv != nil {
			value = p.Inv.Value
		}
		switch {
		case p.Done != nil && p.Done.Type == history.Ok:
			st, value = committed, p.Done.Value
			o.committed++
		case p.Done != nil && p.Done.Type == history.Fail:
			st = aborted
		}
		if len(value) == 0 && p.Done != nil {
			value = p.Done.Value
		}
		o.txns[t].status = st
		raw, err = parseMops(value, raw)
		if err == nil {
			err = o.addMops(int32(t), raw, writeF)
		}
		if dup := (dupWriteError{}); errors.As(err, &dup) {
			return nil, bad, err
		}
		if err != nil {
			if bad.n == 0 {
				first := o.first(int32(t))
				bad.first = fmt.Errorf("txn at #%d by %s: %w", first.Index, history.ProcessName(first.Process), err)
			}
			bad.n++
		}
	}
	return o, bad, nil
}

// reserve sizes the arenas from the values, so that they are not copied
// as they grow: an invocation holds one '[' or '{' per micro-op (and one
// around them), and an ok completion adds a '[' per list read and a ','
// per further element.
func (o *observation) reserve() {
	var mops, elems int
	for _, p := range o.pairs {
		var inv []byte
		if p.Inv != nil {
			inv = p.Inv.Value
		}
		mops += bytes.Count(inv, []byte("[")) + bytes.Count(inv, []byte("{"))
		if p.Done != nil && p.Done.Type == history.Ok {
			done := p.Done.Value
			elems += bytes.Count(done, []byte(",")) - bytes.Count(inv, []byte(",")) + bytes.Count(done, []byte("[")) - bytes.Count(inv, []byte("["))
		}
	}
	o.mops = make([]mop, 0, mops)
	o.elems = make([]int32, 0, max(elems, 0))
}

// addMops interns one transaction's micro-ops. On an error it leaves the
// transaction without micro-ops and its values without a writer.
func (o *observation) addMops(t int32, raw []rawMop, writeF string) error {
	tx := &o.txns[t]
	start, elemStart := int32(len(o.mops)), len(o.elems)
	tx.mops = span{start, start}
	err := o.internMops(t, raw, writeF)
	if err != nil {
		for _, m := range o.mops[start:] {
			if m.kind == writeMop && o.versions[m.value].writer == t {
				o.versions[m.value].writer = -1
			}
		}
		o.mops, o.elems = o.mops[:start], o.elems[:elemStart]
		return err
	}
	tx.mops.to = int32(len(o.mops))
	// A write the transaction follows with another of the same key is
	// intermediate.
	ms := o.mops[start:]
	for i, m := range ms {
		for _, later := range ms[i+1:] {
			if m.kind == writeMop && later.kind == writeMop && later.key == m.key {
				o.versions[m.value].intermediate = true
				break
			}
		}
	}
	return nil
}

func (o *observation) internMops(t int32, raw []rawMop, writeF string) error {
	known := o.txns[t].status == committed
	for i, r := range raw {
		k := o.key(r.key)
		m := mop{key: k, value: -1}
		switch string(r.f) {
		case "r":
			m.kind, m.known = readMop, known
			if known {
				from := int32(len(o.elems))
				err := readValue(r.value, o.lists, func(text []byte) error {
					o.elems = append(o.elems, o.version(k, text))
					return nil
				})
				if err != nil {
					return fmt.Errorf("micro-op %d: read of key %s: %w", i, r.key, err)
				}
				m.seen = span{from, int32(len(o.elems))}
				m.value = o.initial[k]
				if m.seen.len() > 0 {
					m.value = o.elems[m.seen.to-1]
				}
			}
		case writeF:
			text, err := writeValue(r.value)
			if err != nil {
				return fmt.Errorf("micro-op %d: %s to key %s: %w", i, writeF, r.key, err)
			}
			m.kind, m.value = writeMop, o.version(k, text)
			if o.versions[m.value].writer >= 0 {
				return dupWriteError{key: o.keys[k], value: o.text[m.value]}
			}
			o.versions[m.value].writer = t
		default:
			return fmt.Errorf("micro-op %d: unknown function %q: expected \"r\" or %q", i, r.f, writeF)
		}
		o.mops = append(o.mops, m)
	}
	return nil
}

// key interns a key's canonical text, with its initial version.
func (o *observation) key(text []byte) int32 {
	if id, ok := o.keyIDs[string(text)]; ok {
		return id
	}
	id := int32(len(o.keys))
	s := string(text)
	o.keyIDs[s] = id
	o.keys = append(o.keys, s)
	o.initial = append(o.initial, o.newVersion(version{key: id, writer: -1, initial: true}, ""))
	return id
}

// version interns a value of key k.
func (o *observation) version(k int32, text []byte) int32 {
	o.scratch = binary.LittleEndian.AppendUint32(o.scratch[:0], uint32(k))
	o.scratch = append(o.scratch, text...)
	if id, ok := o.versionIDs[string(o.scratch)]; ok {
		return id
	}
	s := string(o.scratch)
	id := o.newVersion(version{key: k, writer: -1}, s[4:])
	o.versionIDs[s] = id
	return id
}

func (o *observation) newVersion(v version, text string) int32 {
	o.versions = append(o.versions, v)
	o.text = append(o.text, text)
	return int32(len(o.versions) - 1)
}

// first is transaction t's first entry: its invocation, or its completion
// when the history has no invocation.
func (o *observation) first(t int32) *history.Op {
	if p := o.pairs[t]; p.Inv != nil {
		return p.Inv
	}
	return o.pairs[t].Done
}

// txnMops are transaction t's micro-ops.
func (o *observation) txnMops(t int32) []mop {
	s := o.txns[t].mops
	return o.mops[s.from:s.to]
}

// seen are the versions a read saw.
func (o *observation) seen(m mop) []int32 { return o.elems[m.seen.from:m.seen.to] }

// writerOf is the transaction that wrote v, if it may have taken effect:
// -1 for none, or one that failed.
func (o *observation) writerOf(v int32) int32 {
	w := o.versions[v].writer
	if w < 0 || o.txns[w].status == aborted {
		return -1
	}
	return w
}
