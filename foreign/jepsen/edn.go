// Package jepsen reads and writes histories in the EDN form Jepsen and
// Knossos use, so that chaos can check their histories and they can check
// chaos's.
package jepsen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the type of an EDN value.
type Kind uint8

const (
	Nil Kind = iota
	Bool
	Int     // any size: Text holds the canonical decimal digits
	Float   // a double: Text holds the literal as written (##Inf, ##NaN included)
	Decimal // a BigDecimal: Text holds the literal as written, with its M
	Ratio   // Text holds the reduced "n/d"
	String
	Char
	Keyword // Text is the name without the colon: "ok", "jepsen.foo/bar"
	Symbol
	Vector
	List
	Set
	Map    // Items holds keys and values alternately, in file order
	Tagged // Text is the tag, Items[0] the tagged value
)

// Value is one EDN value and where it starts in the input.
type Value struct {
	Kind      Kind
	Text      string
	Items     []Value
	Line, Col int
}

// Get returns the value of keyword key k in a map (or a record literal,
// which is a tagged map), or a Nil value and false.
func (v Value) Get(k string) (Value, bool) {
	if v.Kind == Tagged && len(v.Items) == 1 {
		return v.Items[0].Get(k)
	}
	if v.Kind == Map {
		for i := 0; i+1 < len(v.Items); i += 2 {
			if key := v.Items[i]; key.Kind == Keyword && key.Text == k {
				return v.Items[i+1], true
			}
		}
	}
	return Value{Line: v.Line, Col: v.Col}, false
}

// Error is a syntax or conversion error at a place in the input.
type Error struct {
	File      string // empty when the input has no name
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	if e.File != "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
}

// maxDepth bounds nesting so that hostile input cannot exhaust the stack;
// real histories nest a handful of levels.
const maxDepth = 1000

// Decoder reads EDN from a stream without holding all of it in memory: a
// history is read one op at a time.
type Decoder struct {
	r         *bufio.Reader
	line, col int // position of the next byte
	depth     int
	ioErr     error // a read error other than EOF, reported instead of "unexpected end"
	// stack collects the items of the collections being read, so that each
	// gets one slice of the right size instead of growing its own.
	stack []Value
}

// NewDecoder returns a decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 64<<10), line: 1, col: 1}
}

func (d *Decoder) errorf(line, col int, format string, args ...any) error {
	if d.ioErr != nil {
		return d.ioErr
	}
	return &Error{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// peek returns the next byte, or false at the end of input.
func (d *Decoder) peek() (byte, bool) {
	b, err := d.r.ReadByte()
	if err != nil {
		if !errors.Is(err, io.EOF) && d.ioErr == nil {
			d.ioErr = err
		}
		return 0, false
	}
	d.r.UnreadByte()
	return b, true
}

// peek2 returns the byte after the next one, or 0.
func (d *Decoder) peek2() byte {
	b, _ := d.r.Peek(2)
	if len(b) < 2 {
		return 0
	}
	return b[1]
}

// next consumes one byte. Columns count characters, not bytes, so they
// match what an editor shows.
func (d *Decoder) next() byte {
	b, _ := d.r.ReadByte()
	switch {
	case b == '\n':
		d.line, d.col = d.line+1, 1
	case b&0xC0 != 0x80: // not a UTF-8 continuation byte
		d.col++
	}
	return b
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == ','
}

// isDelim reports whether b ends a token (number, symbol, keyword).
func isDelim(b byte) bool {
	return isSpace(b) || strings.IndexByte(`";()[]{}\`, b) >= 0
}

// skip skips whitespace, commas, comments and #_-discarded forms.
func (d *Decoder) skip() error {
	for {
		b, ok := d.peek()
		switch {
		case !ok:
			return nil
		case isSpace(b):
			d.next()
		case b == ';' || b == '#' && d.peek2() == '!':
			for ok && b != '\n' {
				d.next()
				b, ok = d.peek()
			}
		case b == '#' && d.peek2() == '_':
			line, col := d.line, d.col
			if d.depth >= maxDepth { // #_#_#_... would recurse without reading
				return d.errorf(line, col, "values nested more than %d deep", maxDepth)
			}
			d.next()
			d.next()
			d.depth++
			_, err := d.readAfter(line, col, "#_")
			d.depth--
			if err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// Read reads the next value; it returns io.EOF when only whitespace and
// comments remain.
func (d *Decoder) Read() (Value, error) {
	if err := d.skip(); err != nil {
		return Value{}, err
	}
	if _, ok := d.peek(); !ok {
		if d.ioErr != nil {
			return Value{}, d.ioErr
		}
		return Value{}, io.EOF
	}
	return d.read()
}

// Elements calls fn on each element of the input's top-level vector or
// list, or, when the input is a bare sequence of values (one map per line,
// as in Jepsen's history.edn), on each of them.
func (d *Decoder) Elements(fn func(Value) error) error {
	if err := d.skip(); err != nil {
		return err
	}
	b, ok := d.peek()
	if !ok {
		return d.ioErr
	}
	if b != '[' && b != '(' {
		for {
			v, err := d.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := fn(v); err != nil {
				return err
			}
		}
	}
	line, col := d.line, d.col
	d.next()
	if err := d.items(b, line, col, fn); err != nil {
		return err
	}
	if v, err := d.Read(); err != io.EOF {
		if err != nil {
			return err
		}
		return d.errorf(v.Line, v.Col, "expected end of input after the history's closing %s, got %s", closer(b), describe(v))
	}
	return nil
}

func closer(open byte) string {
	switch open {
	case '[':
		return "]"
	case '(':
		return ")"
	}
	return "}"
}

var collName = map[byte]string{'[': "vector", '(': "list", '{': "map"}

// items reads the elements of a collection whose opening byte has been
// consumed, up to and including its closer.
func (d *Decoder) items(open byte, line, col int, fn func(Value) error) error {
	want := closer(open)
	for {
		if err := d.skip(); err != nil {
			return err
		}
		b, ok := d.peek()
		if !ok {
			return d.errorf(d.line, d.col, "unexpected end of input: expected %s to close the %s opened at %d:%d", want, collName[open], line, col)
		}
		if b == ']' || b == ')' || b == '}' {
			if string(b) != want {
				return d.errorf(d.line, d.col, "unexpected %c: expected %s to close the %s opened at %d:%d", b, want, collName[open], line, col)
			}
			d.next()
			return nil
		}
		v, err := d.read()
		if err != nil {
			return err
		}
		if err := fn(v); err != nil {
			return err
		}
	}
}

// readAfter reads the value that must follow a prefix such as #_ or a tag.
func (d *Decoder) readAfter(line, col int, prefix string) (Value, error) {
	if err := d.skip(); err != nil {
		return Value{}, err
	}
	if b, ok := d.peek(); !ok || b == ']' || b == ')' || b == '}' {
		return Value{}, d.errorf(line, col, "expected a value after %s", prefix)
	}
	return d.read()
}

// read reads one value; whitespace has been skipped and input remains.
func (d *Decoder) read() (Value, error) {
	line, col := d.line, d.col
	if d.depth >= maxDepth {
		return Value{}, d.errorf(line, col, "values nested more than %d deep", maxDepth)
	}
	d.depth++
	defer func() { d.depth-- }()
	v := Value{Line: line, Col: col}
	b, _ := d.peek()
	switch {
	case b == '[' || b == '(' || b == '{':
		d.next()
		switch b {
		case '[':
			v.Kind = Vector
		case '(':
			v.Kind = List
		default:
			v.Kind = Map
		}
		return d.coll(v, b)
	case b == '"':
		d.next()
		s, err := d.str(line, col)
		v.Kind, v.Text = String, s
		return v, err
	case b == '\\':
		d.next()
		return d.char(v)
	case b == '#':
		d.next()
		return d.dispatch(v)
	case b == ']' || b == ')' || b == '}':
		return v, d.errorf(line, col, "unexpected %c: no collection is open", b)
	case strings.IndexByte("^`~@'", b) >= 0:
		return v, d.errorf(line, col, "unexpected %c: reader macros are not EDN", b)
	}
	return d.token(v)
}

func (d *Decoder) coll(v Value, open byte) (Value, error) {
	start := len(d.stack)
	err := d.items(open, v.Line, v.Col, func(x Value) error {
		d.stack = append(d.stack, x)
		return nil
	})
	v.Items = slices.Clone(d.stack[start:])
	clear(d.stack[start:])
	d.stack = d.stack[:start]
	if err == nil && v.Kind == Map && len(v.Items)%2 == 1 {
		k := v.Items[len(v.Items)-1]
		err = d.errorf(k.Line, k.Col, "map key %s has no value", k)
	}
	return v, err
}

// dispatch reads what follows '#': a set, a tagged value, a namespaced map
// or a symbolic number.
func (d *Decoder) dispatch(v Value) (Value, error) {
	b, ok := d.peek()
	switch {
	case b == '{':
		d.next()
		v.Kind = Set
		return d.coll(v, '{')
	case b == '#': // ##Inf, ##-Inf, ##NaN
		d.next()
		t := d.word()
		if t != "Inf" && t != "-Inf" && t != "NaN" {
			return v, d.errorf(v.Line, v.Col, "unknown symbolic value ##%s: expected ##Inf, ##-Inf or ##NaN", t)
		}
		v.Kind, v.Text = Float, "##"+t
		return v, nil
	case b == ':':
		return d.nsMap(v)
	case ok && (b|0x20 >= 'a' && b|0x20 <= 'z'): // tags start with a letter
		v.Kind, v.Text = Tagged, d.word()
		if err := d.utf8At(v.Text, v.Line, v.Col, "tag"); err != nil {
			return v, err
		}
		x, err := d.readAfter(v.Line, v.Col, "#"+v.Text)
		v.Items = []Value{x}
		return v, err
	}
	return v, d.errorf(v.Line, v.Col, "unexpected # dispatch: expected #{, #_, #tag or #:ns{")
}

// nsMap reads #:ns{:a 1}, Clojure's namespaced map, as {:ns/a 1}.
func (d *Decoder) nsMap(v Value) (Value, error) {
	d.next()
	ns := d.word()
	if err := d.utf8At(ns, v.Line, v.Col, "namespace"); err != nil {
		return v, err
	}
	if ns == "" || ns[0] == ':' {
		return v, d.errorf(v.Line, v.Col, "expected a namespace after #: (auto-resolved #:: maps are not EDN)")
	}
	if err := d.skip(); err != nil {
		return v, err
	}
	if b, _ := d.peek(); b != '{' {
		return v, d.errorf(d.line, d.col, "expected { after #:%s", ns)
	}
	m, err := d.read()
	m.Line, m.Col = v.Line, v.Col
	for i := 0; i < len(m.Items); i += 2 {
		if k := &m.Items[i]; k.Kind == Keyword && !strings.Contains(k.Text, "/") {
			k.Text = ns + "/" + k.Text
		} else if k.Kind == Keyword && strings.HasPrefix(k.Text, "_/") {
			k.Text = k.Text[2:]
		}
	}
	return m, err
}

// utf8At refuses text that is not UTF-8 (Clojure's reader would read each
// bad byte as U+FFFD, merging distinct keys and values into one), naming
// where the token or string starts.
func (d *Decoder) utf8At(s string, line, col int, what string) error {
	if !utf8.ValidString(s) {
		return d.errorf(line, col, "%s has bytes that are not UTF-8 (%.40q)", what, s)
	}
	return nil
}

// word reads a token's bytes up to a delimiter.
func (d *Decoder) word() string {
	var sb strings.Builder
	for {
		b, ok := d.peek()
		if !ok || isDelim(b) {
			return sb.String()
		}
		sb.WriteByte(d.next())
	}
}

func (d *Decoder) str(line, col int) (string, error) {
	var sb strings.Builder
	for {
		b, ok := d.peek()
		if !ok {
			return "", d.errorf(line, col, `unexpected end of input: expected " to close the string opened here`)
		}
		d.next()
		if b == '"' {
			return sb.String(), d.utf8At(sb.String(), line, col, "string")
		}
		if b != '\\' {
			sb.WriteByte(b)
			continue
		}
		eline, ecol := d.line, d.col-1
		e, ok := d.peek()
		if !ok {
			return "", d.errorf(line, col, `unexpected end of input: expected " to close the string opened here`)
		}
		d.next()
		switch e {
		case '"', '\\':
			sb.WriteByte(e)
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'u':
			r, err := d.hex4(eline, ecol)
			if err != nil {
				return "", err
			}
			// Java strings are UTF-16: a character outside the BMP is
			// printed as two escapes, which must be joined. Half a pair
			// alone is refused: UTF-8 cannot hold it, and U+FFFD in its
			// place would merge distinct strings.
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if b, _ := d.peek(); r < 0xDC00 && b == '\\' && d.peek2() == 'u' {
					d.next()
					d.next()
					if r2, err = d.hex4(eline, ecol); err != nil {
						return "", err
					}
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", d.errorf(eline, ecol, "\\u escape of half a UTF-16 surrogate pair without its other half: chaos keeps text as UTF-8, which cannot hold it")
				}
			}
			sb.WriteRune(r)
		default:
			return "", d.errorf(eline, ecol, `unknown escape \%c in string: expected one of \" \\ \n \t \r \b \f \uXXXX`, e)
		}
	}
}

func (d *Decoder) hex4(line, col int) (rune, error) {
	var r rune
	for range 4 {
		b, _ := d.peek()
		n, err := strconv.ParseUint(string(b), 16, 8)
		if err != nil {
			return 0, d.errorf(line, col, `bad \u escape: expected 4 hex digits`)
		}
		d.next()
		r = r<<4 | rune(n)
	}
	return r, nil
}

var charNames = map[string]string{"newline": "\n", "space": " ", "tab": "\t", "return": "\r", "backspace": "\b", "formfeed": "\f"}

// char reads a character literal after its backslash: \a, \newline, \u00e9.
func (d *Decoder) char(v Value) (Value, error) {
	v.Kind = Char
	if _, ok := d.peek(); !ok {
		return v, d.errorf(v.Line, v.Col, `expected a character after \`)
	}
	// The first character is taken even if it is a delimiter: \( is "(".
	buf, _ := d.r.Peek(utf8.UTFMax)
	_, n := utf8.DecodeRune(buf)
	var first strings.Builder
	for range n {
		first.WriteByte(d.next())
	}
	name := first.String() + d.word()
	if err := d.utf8At(name, v.Line, v.Col, "character"); err != nil {
		return v, err
	}
	switch r, size := utf8.DecodeRuneInString(name); {
	case size == len(name):
		v.Text = name
	case charNames[name] != "":
		v.Text = charNames[name]
	case r == 'u' && len(name) == 5:
		n, err := strconv.ParseUint(name[1:], 16, 16)
		if err != nil || utf16.IsSurrogate(rune(n)) {
			return v, d.errorf(v.Line, v.Col, `bad character \%s: expected \uXXXX, not half a UTF-16 surrogate pair`, name)
		}
		v.Text = string(rune(n))
	default:
		return v, d.errorf(v.Line, v.Col, `unknown character \%s: expected \c, \newline, \space, \tab, \return, \backspace, \formfeed or \uXXXX`, name)
	}
	return v, nil
}

// token reads nil, true, false, a number, a keyword or a symbol.
func (d *Decoder) token(v Value) (Value, error) {
	t := d.word()
	if err := d.utf8At(t, v.Line, v.Col, "token"); err != nil {
		return v, err
	}
	switch {
	case t == "":
		return v, d.errorf(v.Line, v.Col, "expected a value")
	case t == "nil":
		v.Kind = Nil
	case t == "true" || t == "false":
		v.Kind, v.Text = Bool, t
	case t[0] == ':':
		if len(t) == 1 || t[1] == ':' || strings.HasSuffix(t, "/") {
			return v, d.errorf(v.Line, v.Col, "invalid keyword %q (auto-resolved ::keywords are not EDN)", t)
		}
		v.Kind, v.Text = Keyword, t[1:]
	case t[0] >= '0' && t[0] <= '9' || len(t) > 1 && (t[0] == '-' || t[0] == '+') && t[1] >= '0' && t[1] <= '9':
		return d.number(v, t)
	default:
		v.Kind, v.Text = Symbol, t
	}
	return v, nil
}

// number parses an integer (with optional N), a double, a decimal (with
// M) or a ratio, and Clojure's hex integers. Leading zeros are refused:
// Clojure would read 017 as octal.
func (d *Decoder) number(v Value, t string) (Value, error) {
	digits := strings.TrimLeft(t, "+-")
	bad := func() (Value, error) {
		return v, d.errorf(v.Line, v.Col, "invalid number %q: expected an integer, a float or a ratio", t)
	}
	if len(digits) > 1 && digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9' {
		return bad()
	}
	if len(digits) > 2 && (digits[:2] == "0x" || digits[:2] == "0X") {
		// Clojure prints objects as #object[java.lang.Object 0x1f2e3d4c ...].
		i, ok := new(big.Int).SetString(digits[2:], 16)
		if !ok || strings.ContainsAny(digits, "_+-") {
			return bad()
		}
		if t[0] == '-' {
			i.Neg(i)
		}
		v.Kind, v.Text = Int, i.String()
		return v, nil
	}
	if _, err := strconv.ParseInt(t, 10, 64); err == nil && t[0] != '+' && t != "-0" {
		v.Kind, v.Text = Int, t // already canonical: the common case, without big.Int
		return v, nil
	}
	if n, r := strings.CutSuffix(t, "N"); r || strings.Trim(digits, "0123456789") == "" {
		i, ok := new(big.Int).SetString(strings.TrimPrefix(n, "+"), 10)
		if !ok {
			return bad()
		}
		v.Kind, v.Text = Int, i.String()
		return v, nil
	}
	if num, den, ok := strings.Cut(t, "/"); ok {
		r, ok := new(big.Rat).SetString(strings.TrimPrefix(num, "+") + "/" + den)
		if !ok || strings.Trim(den, "0123456789") != "" || strings.ContainsAny(num[1:], "+-.eE") {
			return bad()
		}
		v.Kind, v.Text = Ratio, r.String()
		if r.IsInt() { // Clojure reads 4/2 as 2
			v.Kind, v.Text = Int, r.Num().String()
		}
		return v, nil
	}
	f := strings.TrimSuffix(t, "M")
	if strings.ContainsAny(f, "xXpP_") || strings.Trim(strings.TrimLeft(f, "+-"), "0123456789.eE+-") != "" {
		return bad() // ParseFloat would accept hex floats, underscores, "Inf"
	}
	if _, err := strconv.ParseFloat(f, 64); err != nil && !errors.Is(err, strconv.ErrRange) {
		return bad()
	}
	v.Kind, v.Text = Float, t
	if f != t {
		v.Kind = Decimal
	}
	return v, nil
}

// Float64 is a Float value's number (Inf for out of range literals).
// Decimals are exact: see history.CanonicalNumber.
func (v Value) Float64() float64 {
	switch v.Text {
	case "##Inf":
		return math.Inf(1)
	case "##-Inf":
		return math.Inf(-1)
	case "##NaN":
		return math.NaN()
	}
	f, _ := strconv.ParseFloat(v.Text, 64)
	return f
}

// String prints v as EDN, in the style of Clojure's pr-str.
func (v Value) String() string {
	var sb strings.Builder
	v.print(&sb)
	return sb.String()
}

func (v Value) print(sb *strings.Builder) {
	switch v.Kind {
	case Nil:
		sb.WriteString("nil")
	case String:
		quote(sb, v.Text)
	case Char:
		for name, c := range charNames {
			if c == v.Text {
				sb.WriteString(`\` + name)
				return
			}
		}
		sb.WriteString(`\` + v.Text)
	case Keyword:
		sb.WriteString(":" + v.Text)
	case Vector, List, Set, Map:
		sb.WriteString(opens[v.Kind])
		for i, x := range v.Items {
			switch {
			case i > 0 && v.Kind == Map && i%2 == 0:
				sb.WriteString(", ")
			case i > 0:
				sb.WriteByte(' ')
			}
			x.print(sb)
		}
		sb.WriteString(closes[v.Kind])
	case Tagged:
		sb.WriteString("#" + v.Text + " ")
		v.Items[0].print(sb)
	default: // Bool, Int, Float, Decimal, Ratio, Symbol
		sb.WriteString(v.Text)
	}
}

var opens, closes = map[Kind]string{Vector: "[", List: "(", Set: "#{", Map: "{"}, map[Kind]string{Vector: "]", List: ")", Set: "}", Map: "}"}

// quote writes s as an EDN string literal.
func quote(sb *strings.Builder, s string) {
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			sb.WriteString(`\` + string(r))
		case '\n':
			sb.WriteString(`\n`)
		case '\t':
			sb.WriteString(`\t`)
		case '\r':
			sb.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(sb, `\u%04x`, r)
			} else {
				sb.WriteRune(r)
			}
		}
	}
	sb.WriteByte('"')
}

// kindNames name the kinds in messages.
var kindNames = [...]string{"nil", "boolean", "integer", "float", "decimal", "ratio", "string", "character", "keyword", "symbol", "vector", "list", "set", "map", "tagged value"}

// describe names a value for error messages: its kind and, if short, its text.
func describe(v Value) string {
	s := v.String()
	if r := []rune(s); len(r) > 40 {
		s = string(r[:37]) + "..."
	}
	if v.Kind == Nil {
		return "nil"
	}
	return kindNames[v.Kind] + " " + s
}
