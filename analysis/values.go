// Interning of the values and keys the models compare: each distinct value
// (by its canonical JSON) or key gets a small integer id.
package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
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
	c, err := canonicalJSON(raw)
	if err != nil {
		return 0, err
	}
	if id, ok := t.ids[c]; ok {
		return id, nil
	}
	if len(t.texts) == math.MaxInt32 {
		return 0, errors.New("too many distinct values")
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
