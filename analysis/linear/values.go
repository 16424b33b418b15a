// Interning of the values and keys the models compare: each distinct value
// (by its canonical JSON) or key gets a small integer id.
//
// Equality of values, which every register model uses:
//   - In chaos's own histories values are JSON, equal when they are the same
//     JSON value: objects whatever their key order, arrays element by
//     element, strings by their characters, and numbers as mathematical
//     values, exactly: 1, 1.0 and 1e0 are equal, 1e22 equals
//     10000000000000000000000, 9007199254740992 equals 9007199254740992.0,
//     and 0.1 differs from 0.10000000000000001 (no rounding to float64).
//   - Jepsen EDN histories are compared as Knossos compares them, with
//     Clojure's =, which the EDN reader (foreign/jepsen/tagged.go) keeps in
//     its JSON: integers (longs and bigints: 1 = 1N) and decimals (1.5M =
//     1.50M) are exact JSON numbers, but doubles (1.0, where 1e22 = 1.0E22),
//     integral decimals (1.0M) and ratios are tagged strings, so that 1,
//     1.0 and 1.0M differ, as do 1/2, 0.5 and 0.5M; keywords, symbols and
//     characters are tagged strings too (:x, x and \x differ from "x");
//     vectors and lists are both arrays ([1 2] = (1 2)); sets and maps are
//     written in one order. ##NaN equals nothing, itself included.

package linear

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// interner numbers strings 0, 1, 2… in the order they are first seen.
type interner struct {
	ids   map[string]int32
	texts []string
}

func (t *interner) id(s string) int32 {
	id, ok := t.ids[s]
	if !ok {
		id = int32(len(t.texts))
		t.ids[s] = id
		t.texts = append(t.texts, s)
	}
	return id
}

// valueTable interns JSON values by their canonical text, so that models
// compare small integers: id 0 is null, which a register reads as absent.
type valueTable struct{ interner }

func newValueTable() *valueTable {
	return &valueTable{interner{ids: map[string]int32{"null": 0}, texts: []string{"null"}}}
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
	c, nan, err := canonicalJSON(raw)
	if err != nil {
		return 0, err
	}
	if id, ok := t.ids[c]; ok && !nan {
		return id, nil
	}
	if len(t.texts) == math.MaxInt32 {
		return 0, errors.New("too many distinct values")
	}
	if nan { // a fresh id, equal to no other
		t.texts = append(t.texts, c)
		return int32(len(t.texts) - 1), nil
	}
	return t.interner.id(c), nil
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
// texts: no insignificant space, object keys sorted, numbers in
// history.CanonicalNumber's form. nan reports an EDN ##NaN in the value,
// which makes it equal to nothing.
func canonicalJSON(raw []byte) (text string, nan bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false, fmt.Errorf("value %s is not JSON: %w", raw, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", false, fmt.Errorf("value %s: more than one JSON value", raw)
	}
	c := canonical{}
	c.write(v)
	return c.b.String(), c.nan, c.err
}

// canonical is canonicalJSON's writer.
type canonical struct {
	b   strings.Builder
	nan bool
	err error
}

func (c *canonical) write(v any) {
	b := &c.b
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		n, _, err := history.CanonicalNumber(string(v))
		if err != nil && c.err == nil {
			c.err = err
		}
		b.WriteString(n)
	case string:
		c.nan = c.nan || v == history.EDNNaN
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
			c.write(e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range analysis.SortedKeys(v) {
			if i > 0 {
				b.WriteByte(',')
			}
			c.write(k)
			b.WriteByte(':')
			c.write(v[k])
		}
		b.WriteByte('}')
	}
}
