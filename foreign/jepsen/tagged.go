// The JSON form of EDN values, which keeps what Clojure's = tells apart.
//
// Read gives the checkers JSON, which has one kind of number and one kind
// of text, while Knossos compares values with Clojure's =: 1 and 1.0
// differ, and so do :x and "x". So EDN values that JSON cannot hold as they
// are become strings beginning with "~" (in the manner of Transit), and an
// EDN string that itself begins with "~" is escaped by another "~". Every
// value gets one canonical form, so that values Clojure calls equal have
// equal JSON, and values it tells apart do not:
//
//	nil, true, false      null, true, false
//	integer (1, 1N)       a JSON number: 1
//	decimal (1.50M)       a JSON number, 1.5, when not an integer; else "~f1"
//	double (1.0, 1e22)    "~d1.0", "~d1e+22", "~d##Inf", "~d##NaN" (-0.0 is 0.0)
//	ratio (2/4)           "~r1/2"
//	string                "s"; one beginning with ~ as "~~..."
//	keyword, symbol, char "~:name", "~$name", "~cX"
//	vector, list          an array (Clojure's = does not tell them apart)
//	set                   {"~set": [elements, sorted by their JSON]}
//	map                   an object, its keys sorted; a key that is not a
//	                      string is written as its tagged string, or, for an
//	                      integer, boolean or nil key, "~i3", "~?t", "~_";
//	                      with a collection as a key, {"~map": [k1, v1, ...]}
//	#tag value            {"~#tag": value}
//
// Integers are the one category that can be JSON numbers as they are;
// decimals that are not integers are the others, because no other EDN
// value is such a number: so a chaos history's JSON numbers are exported
// as integers or decimals (1.5 as 1.5M), and come back as they were.
package jepsen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/chaos-testing/chaos/history"
)

// The tags of the tagged strings and single-key objects.
const (
	tagKeyword = "~:"
	tagSymbol  = "~$"
	tagChar    = "~c"
	tagDouble  = "~d"
	tagDecimal = "~f"
	tagRatio   = "~r"
	tagInt     = "~i" // map keys only
	tagBool    = "~?" // map keys only
	tagNil     = "~_" // map keys only
	tagSet     = "~set"
	tagMap     = "~map"
	tagLiteral = "~#"
)

// maxPlainInt is the most digits an integer written in decimal can have and
// still be its own canonical JSON form: CanonicalNumber writes longer ones
// (past 100 digits) in scientific form; int64 is far short of that.
const maxPlainInt = len("-9223372036854775808")

// encode writes v's canonical JSON form; it refuses what Clojure's reader
// refuses too: a set or map with two equal elements or keys.
func encode(b *bytes.Buffer, v Value) error {
	switch v.Kind {
	case Nil:
		b.WriteString("null")
	case Bool:
		b.WriteString(v.Text)
	case Int:
		if len(v.Text) <= maxPlainInt && canonicalInt(v.Text) {
			b.WriteString(v.Text) // the common case, already canonical
			break
		}
		n, _, err := history.CanonicalNumber(v.Text)
		if err != nil {
			return errAt(v, "%v", err)
		}
		b.WriteString(n)
	case Decimal:
		n, integral, err := history.CanonicalNumber(strings.TrimSuffix(v.Text, "M"))
		if err != nil {
			return errAt(v, "%v", err)
		}
		if integral {
			writeString(b, tagDecimal+n)
		} else {
			b.WriteString(n)
		}
	case Vector, List:
		b.WriteByte('[')
		for i, x := range v.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encode(b, x); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case Set:
		elems, err := sortedUnique(v.Items, "set element")
		if err != nil {
			return err
		}
		b.WriteString(`{"` + tagSet + `":[`)
		for i, e := range elems {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(e.json)
		}
		b.WriteString("]}")
	case Map:
		return encodeMap(b, v)
	case Tagged:
		b.WriteByte('{')
		writeString(b, tagLiteral+v.Text)
		b.WriteByte(':')
		if err := encode(b, v.Items[0]); err != nil {
			return err
		}
		b.WriteByte('}')
	default: // strings and the scalars written as tagged strings
		writeString(b, scalarText(v))
	}
	return nil
}

// encoded is a value, its position in its collection, and its JSON form.
type encoded struct {
	v    Value
	at   int
	json []byte
}

// sortedUnique encodes vs and sorts them by their JSON, refusing two equal
// ones (what names them in the error).
func sortedUnique(vs []Value, what string) ([]encoded, error) {
	out := make([]encoded, len(vs))
	for i, v := range vs {
		var b bytes.Buffer
		if err := encode(&b, v); err != nil {
			return nil, err
		}
		out[i] = encoded{v, i, b.Bytes()}
	}
	slices.SortFunc(out, func(a, b encoded) int { return bytes.Compare(a.json, b.json) })
	for i := 1; i < len(out); i++ {
		if bytes.Equal(out[i-1].json, out[i].json) {
			dup := later(out[i-1].v, out[i].v)
			return nil, errAt(dup, "duplicate %s %s", what, dup)
		}
	}
	return out, nil
}

// later is whichever of two values comes later in the input: the one a
// duplicate error names.
func later(a, b Value) Value {
	if a.Line > b.Line || a.Line == b.Line && a.Col > b.Col {
		return a
	}
	return b
}

// scalarText is the string that stands for a string, keyword, symbol,
// character, double or ratio.
func scalarText(v Value) string {
	switch v.Kind {
	case Keyword:
		return tagKeyword + v.Text
	case Symbol:
		return tagSymbol + v.Text
	case Char:
		return tagChar + v.Text
	case Float:
		return tagDouble + doubleText(v)
	case Ratio:
		return tagRatio + v.Text
	}
	if strings.HasPrefix(v.Text, "~") { // a string
		return "~" + v.Text
	}
	return v.Text
}

// doubleText is a double's canonical EDN literal: the shortest that reads
// back as the same double.
func doubleText(v Value) string {
	f := v.Float64()
	switch {
	case math.IsNaN(f):
		return "##NaN"
	case math.IsInf(f, 1):
		return "##Inf"
	case math.IsInf(f, -1):
		return "##-Inf"
	case f == 0:
		return "0.0" // Clojure's = has 0.0 = -0.0
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// keyString is the object key standing for a scalar map key, or false
// for a collection or tagged value.
func keyString(k Value) (string, bool) {
	switch k.Kind {
	case Nil:
		return tagNil, true
	case Bool:
		return tagBool + k.Text[:1], true
	case Int:
		n, _, err := history.CanonicalNumber(k.Text)
		return tagInt + n, err == nil
	case Decimal:
		n, _, err := history.CanonicalNumber(strings.TrimSuffix(k.Text, "M"))
		return tagDecimal + n, err == nil
	case String, Keyword, Symbol, Char, Float, Ratio:
		return scalarText(k), true
	}
	return "", false
}

func encodeMap(b *bytes.Buffer, m Value) error {
	type entry struct {
		key string
		k   Value
		v   Value
	}
	entries := make([]entry, 0, len(m.Items)/2)
	scalar := true
	for i := 0; i+1 < len(m.Items); i += 2 {
		s, ok := keyString(m.Items[i])
		scalar = scalar && ok
		entries = append(entries, entry{s, m.Items[i], m.Items[i+1]})
	}
	if !scalar { // {"~map": [k1, v1, ...]}, pairs sorted by key
		keys := make([]Value, len(entries))
		for i, e := range entries {
			keys[i] = e.k
		}
		enc, err := sortedUnique(keys, "map key")
		if err != nil {
			return err
		}
		b.WriteString(`{"` + tagMap + `":[`)
		for n, k := range enc {
			if n > 0 {
				b.WriteByte(',')
			}
			b.Write(k.json)
			b.WriteByte(',')
			if err := encode(b, entries[k.at].v); err != nil {
				return err
			}
		}
		b.WriteString("]}")
		return nil
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	b.WriteByte('{')
	for n, e := range entries {
		if n > 0 && entries[n-1].key == e.key {
			k := later(entries[n-1].k, e.k)
			return errAt(k, "duplicate map key %s", k)
		}
		if n > 0 {
			b.WriteByte(',')
		}
		writeString(b, e.key)
		b.WriteByte(':')
		if err := encode(b, e.v); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// writeString writes s as a JSON string, as encoding/json writes it:
// printable ASCII that needs no escape as it is, without the cost of
// json.Marshal, which is left the rest (control characters, HTML's <, >
// and &, and text beyond ASCII, which it escapes its own way).
func writeString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b.Write(history.MustValue(s))
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// decode reads JSON into the EDN value whose form it is (the inverse of
// encode). Absent JSON is nil. A string that begins with "~" must be one
// of the tagged forms.
func decode(raw json.RawMessage) (Value, error) {
	if len(raw) == 0 {
		return Value{}, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	v, err := decodeNext(d)
	if err == nil {
		if _, e := d.Token(); e != io.EOF {
			err = fmt.Errorf("trailing data after JSON value")
		}
	}
	return v, err
}

func decodeNext(d *json.Decoder) (Value, error) {
	t, err := d.Token()
	if err != nil {
		return Value{}, err
	}
	switch t := t.(type) {
	case bool:
		return Value{Kind: Bool, Text: strconv.FormatBool(t)}, nil
	case json.Number:
		return decodeNumber(string(t))
	case string:
		return decodeString(t, false)
	case json.Delim:
		if t == '[' {
			v := vec()
			for d.More() {
				x, err := decodeNext(d)
				if err != nil {
					return v, err
				}
				v.Items = append(v.Items, x)
			}
			_, err := d.Token() // ]
			return v, err
		}
		return decodeObject(d)
	}
	return Value{}, nil // null
}

// maxIntDigits bounds the digits of an integer written out, so that a
// number such as 1e1000000000 is refused rather than spelled out.
const maxIntDigits = 100_000

// decodeNumber makes an integer of an integral number and a decimal of
// any other.
func decodeNumber(s string) (Value, error) {
	n, integral, err := history.CanonicalNumber(s)
	if err != nil {
		return Value{}, err
	}
	if !integral {
		return Value{Kind: Decimal, Text: n + "M"}, nil
	}
	mant, e, sci := strings.Cut(n, "e") // d.ddde+n: spell it out
	if !sci {
		return Value{Kind: Int, Text: n}, nil
	}
	exp, _ := strconv.Atoi(e)
	digits := strings.Replace(mant, ".", "", 1)
	zeros := exp - (len(strings.TrimPrefix(digits, "-")) - 1)
	if exp > maxIntDigits {
		return Value{}, fmt.Errorf("number %s has more than %d digits: too long to write as an EDN integer", s, maxIntDigits)
	}
	return Value{Kind: Int, Text: digits + strings.Repeat("0", zeros)}, nil
}

// decodeString reads a plain or tagged string; key allows the tags of map
// keys.
func decodeString(s string, key bool) (Value, error) {
	if !strings.HasPrefix(s, "~") {
		return str(s), nil
	}
	if strings.HasPrefix(s, "~~") {
		return str(s[1:]), nil
	}
	var v Value
	tag, payload := s, ""
	if len(s) >= 2 {
		tag, payload = s[:2], s[2:]
	}
	switch {
	case tag == tagKeyword:
		v = kw(payload)
	case tag == tagSymbol:
		v = Value{Kind: Symbol, Text: payload}
	case tag == tagChar:
		v = Value{Kind: Char, Text: payload}
	case tag == tagDouble:
		v = Value{Kind: Float, Text: payload}
	case tag == tagDecimal:
		v = Value{Kind: Decimal, Text: payload + "M"}
	case tag == tagRatio:
		v = Value{Kind: Ratio, Text: payload}
	case key && tag == tagInt:
		v = Value{Kind: Int, Text: payload}
	case key && tag == tagBool && (payload == "t" || payload == "f"):
		return Value{Kind: Bool, Text: map[string]string{"t": "true", "f": "false"}[payload]}, nil
	case key && s == tagNil:
		return Value{}, nil
	default:
		return v, fmt.Errorf("string %q begins with ~ but is none of the tagged forms of EDN values (~: keyword, ~$ symbol, ~c character, ~d double, ~f decimal, ~r ratio, ~~ for a ~ of its own)", s)
	}
	// The payload must read back as the value it stands for.
	if back, err := parseOne(v.String()); err != nil || back.Kind != v.Kind || back.String() != v.String() {
		return v, fmt.Errorf("string %q: %q is not an EDN %s", s, v.String(), kindNames[v.Kind])
	}
	return v, nil
}

func decodeObject(d *json.Decoder) (Value, error) {
	m := mapOf()
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return m, err
		}
		key := t.(string) // object keys are strings
		switch {
		case len(m.Items) == 0 && (key == tagSet || key == tagMap || strings.HasPrefix(key, tagLiteral)):
			v, err := decodeNext(d)
			if err != nil {
				return v, err
			}
			if end, err := d.Token(); err != nil || end != json.Delim('}') {
				return v, fmt.Errorf("object with the tag %q has other keys: expected it alone", key)
			}
			return decodeTagged(key, v)
		}
		k, err := decodeString(key, true)
		if err != nil {
			return m, err
		}
		v, err := decodeNext(d)
		if err != nil {
			return m, err
		}
		m.Items = append(m.Items, k, v)
	}
	_, err := d.Token() // }
	return m, err
}

// decodeTagged reads the value of a single-key tagged object.
func decodeTagged(tag string, v Value) (Value, error) {
	switch {
	case tag == tagSet && v.Kind == Vector:
		v.Kind = Set
		return v, nil
	case tag == tagMap && v.Kind == Vector && len(v.Items)%2 == 0:
		v.Kind = Map
		return v, nil
	case strings.HasPrefix(tag, tagLiteral):
		name := tag[len(tagLiteral):]
		if t, err := parseOne("#" + name + " nil"); err != nil || t.Kind != Tagged || t.Text != name {
			return v, fmt.Errorf("%q is not an EDN tag", "#"+name)
		}
		return Value{Kind: Tagged, Text: name, Items: []Value{v}}, nil
	}
	return v, fmt.Errorf("tag %q: expected an array (of pairs, for %s)", tag, tagMap)
}

// parseOne reads one EDN value from s, and nothing else.
func parseOne(s string) (Value, error) {
	d := NewDecoder(strings.NewReader(s))
	v, err := d.Read()
	if err == nil {
		if _, e := d.Read(); e != io.EOF {
			err = fmt.Errorf("more than one value in %q", s)
		}
	}
	return v, err
}

// InitialJSON is the JSON form of a register's initial value written as
// EDN on the command line ("0", ":none", "1.0") for a history of model.
// A multi-register's map gives each key its own value ({:x 0, :y 0}): its
// keys are named as the history's keys are (the keyword :x is the key
// "x"), so that each initial value reaches its register.
func InitialJSON(text, model string) (json.RawMessage, error) {
	v, err := parseOne(text)
	if err != nil {
		return nil, err
	}
	if model == MultiRegister && v.Kind == Map {
		obj := map[string]json.RawMessage{}
		var c converter
		for i := 0; i+1 < len(v.Items); i += 2 {
			k, err := c.key(v.Items[i])
			if err != nil {
				return nil, err
			}
			if obj[k], err = jsonValue(v.Items[i+1]); err != nil {
				return nil, err
			}
		}
		return json.Marshal(obj)
	}
	var b bytes.Buffer
	if err := encode(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
