// Package jepsen reads and writes histories in the EDN form Jepsen and
// Knossos use, so that chaos can check their histories and they can check
// chaos's.
package jepsen

import (
	"bytes"
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

// The buffer starts small, for the many short texts parsed alone, and
// doubles on each read up to bufSize; past that it grows only to hold a
// token (a long string) larger than itself.
const (
	minBufSize = 4 << 10
	bufSize    = 256 << 10
)

// Tokens up to maxNameLen bytes are interned in a cache of nameSlots
// strings, each token in the slot its hash picks: enough for the keywords of
// a history and the keys and values of its recent ops.
const (
	maxNameLen = 64
	nameSlots  = 1 << 10
)

// Decoder reads EDN from a stream without holding all of it in memory: a
// history is read one op at a time. It scans its own buffer, so that a
// token is found with a few comparisons a byte and taken from the buffer
// whole, rather than read byte by byte.
type Decoder struct {
	r     io.Reader
	buf   []byte // buf[pos:] is the input read and not yet consumed
	pos   int
	eof   bool  // r has no more input
	ioErr error // a read error other than EOF, reported instead of "unexpected end"
	line  int   // the line of buf[pos]
	// buf[colAt] is at column col. Columns count characters, not bytes, so
	// that they match what an editor shows; at counts them up to where a
	// value starts, each byte once.
	colAt, col int
	depth      int
	// stack collects the items of the collections being read, so that each
	// gets one slice of the right size instead of growing its own. Popped
	// items are left in place, not cleared: the next collection overwrites
	// them, and until then they hold only what was just read.
	stack []Value
	// held holds the items of the collections of the element Elements is
	// reading, and is reused for the next: a history's ops would otherwise
	// each allocate slices several times their size in the file, and
	// allocating and collecting them was most of the decoder's time.
	// reuse says whether Elements is reading.
	held  []Value
	reuse bool
	// names interns tokens: a history repeats its keywords, keys and values
	// op after op, and each would otherwise be a string of its own. It is
	// made once the input is longer than the first buffer: the short texts
	// parsed alone (tagged.go) are many, and gain nothing from it.
	names *[nameSlots]string
	// text collects a string that has escapes.
	text []byte
}

// NewDecoder returns a decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: r, line: 1, col: 1}
}

func (d *Decoder) errorf(line, col int, format string, args ...any) error {
	if d.ioErr != nil {
		return d.ioErr
	}
	return &Error{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// more reads more input after buf[pos:], which it keeps, moved to the
// front of the buffer; it reports whether any came.
func (d *Decoder) more() bool {
	for !d.eof {
		if d.pos > 0 {
			d.at() // the columns of the bytes about to go
			n := copy(d.buf, d.buf[d.pos:])
			d.buf, d.colAt, d.pos = d.buf[:n], d.colAt-d.pos, 0
		}
		if c := cap(d.buf); c < bufSize || len(d.buf) == c {
			d.buf = slices.Grow(d.buf, max(2*c, minBufSize)-len(d.buf)) // double it
		}
		n, err := d.r.Read(d.buf[len(d.buf):cap(d.buf)])
		d.buf = d.buf[:len(d.buf)+n]
		if err != nil {
			d.eof = true
			if !errors.Is(err, io.EOF) {
				d.ioErr = err
			}
		}
		if n > 0 {
			return true
		}
	}
	return false
}

// avail reports whether n bytes of input remain, reading more as needed.
func (d *Decoder) avail(n int) bool {
	for len(d.buf)-d.pos < n {
		if !d.more() {
			return false
		}
	}
	return true
}

// peek returns the next byte, or false at the end of input.
func (d *Decoder) peek() (byte, bool) {
	if !d.avail(1) {
		return 0, false
	}
	return d.buf[d.pos], true
}

// peek2 returns the byte after the next one, or 0.
func (d *Decoder) peek2() byte {
	if !d.avail(2) {
		return 0
	}
	return d.buf[d.pos+1]
}

// at returns the line and column of the next byte.
func (d *Decoder) at() (line, col int) {
	for _, b := range d.buf[d.colAt:d.pos] {
		if b&0xC0 != 0x80 { // not a UTF-8 continuation byte
			d.col++
		}
	}
	d.colAt = d.pos
	return d.line, d.col
}

// advance consumes n bytes that may hold newlines (in a string or a
// character); the other tokens cannot.
func (d *Decoder) advance(n int) {
	end := d.pos + n
	for {
		i := bytes.IndexByte(d.buf[d.pos:end], '\n')
		if i < 0 {
			break
		}
		d.pos += i
		d.newline()
	}
	d.pos = end
}

// newline consumes the newline that is the next byte.
func (d *Decoder) newline() {
	d.pos++
	d.line, d.colAt, d.col = d.line+1, d.pos, 1
}

// spaces and delims are the bytes isSpace and isDelim accept.
var spaces, delims = byteSet(" \t\n\r\f,"), byteSet(" \t\n\r\f,\";()[]{}\\")

func byteSet(s string) (set [256]bool) {
	for _, b := range []byte(s) {
		set[b] = true
	}
	return set
}

func isSpace(b byte) bool { return spaces[b] }

// isDelim reports whether b ends a token (number, symbol, keyword).
func isDelim(b byte) bool { return delims[b] }

// skip skips whitespace, commas, comments and #_-discarded forms.
func (d *Decoder) skip() error {
	for {
		b, ok := d.peek()
		switch {
		case !ok:
			return nil
		case b == '\n':
			d.newline()
		case isSpace(b):
			d.pos++
		case b == ';' || b == '#' && d.peek2() == '!':
			d.skipComment()
		case b == '#' && d.peek2() == '_':
			line, col := d.at()
			if d.depth >= maxDepth { // #_#_#_... would recurse without reading
				return d.errorf(line, col, "values nested more than %d deep", maxDepth)
			}
			d.pos += 2
			d.depth++
			var discarded Value
			err := d.readAfter(&discarded, line, col, "#_")
			d.depth--
			if err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// skipComment consumes a comment up to the newline that ends it.
func (d *Decoder) skipComment() {
	for {
		if i := bytes.IndexByte(d.buf[d.pos:], '\n'); i >= 0 {
			d.pos += i
			return
		}
		d.pos = len(d.buf)
		if !d.more() {
			return
		}
	}
}

// Read reads the next value; it returns io.EOF when only whitespace and
// comments remain.
func (d *Decoder) Read() (Value, error) {
	var v Value
	if err := d.skip(); err != nil {
		return v, err
	}
	if _, ok := d.peek(); !ok {
		if d.ioErr != nil {
			return v, d.ioErr
		}
		return v, io.EOF
	}
	err := d.read(&v)
	return v, err
}

// Elements calls fn on each element of the input's top-level vector or
// list, or, when the input is a bare sequence of values (one map per line,
// as in Jepsen's history.edn), on each of them. The items of an element's
// collections are valid only until fn returns: fn must copy what it keeps
// of them, as they are reused for the next element.
func (d *Decoder) Elements(fn func(Value) error) error {
	d.reuse = true
	defer func() { d.reuse = false }()
	each := fn
	fn = func(v Value) error {
		err := each(v)
		d.held = d.held[:0]
		return err
	}
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
	line, col := d.at()
	d.pos++
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
// consumed, up to and including its closer, and passes each to fn, or, if
// fn is nil, appends it to the stack. Values are passed by pointer here and
// below, and read into a variable that stays on the goroutine's stack:
// they are large enough for their copies and allocations to cost.
func (d *Decoder) items(open byte, line, col int, fn func(Value) error) error {
	want := closer(open)
	var v Value
	for {
		if err := d.skip(); err != nil {
			return err
		}
		b, ok := d.peek()
		if !ok {
			l, c := d.at()
			return d.errorf(l, c, "unexpected end of input: expected %s to close the %s opened at %d:%d", want, collName[open], line, col)
		}
		if b == ']' || b == ')' || b == '}' {
			if b != want[0] {
				l, c := d.at()
				return d.errorf(l, c, "unexpected %c: expected %s to close the %s opened at %d:%d", b, want, collName[open], line, col)
			}
			d.pos++
			return nil
		}
		if err := d.read(&v); err != nil {
			return err
		}
		if fn == nil {
			d.stack = append(d.stack, v)
		} else if err := fn(v); err != nil {
			return err
		}
	}
}

// readAfter reads the value that must follow a prefix such as #_ or a tag.
func (d *Decoder) readAfter(v *Value, line, col int, prefix string) error {
	if err := d.skip(); err != nil {
		return err
	}
	if b, ok := d.peek(); !ok || b == ']' || b == ')' || b == '}' {
		return d.errorf(line, col, "expected a value after %s", prefix)
	}
	return d.read(v)
}

// read reads one value into v; whitespace has been skipped and input
// remains.
func (d *Decoder) read(v *Value) error {
	line, col := d.at()
	*v = Value{Line: line, Col: col}
	if d.depth >= maxDepth {
		return d.errorf(line, col, "values nested more than %d deep", maxDepth)
	}
	d.depth++
	err := d.value(v)
	d.depth--
	return err
}

// value reads the value that starts at v's position.
func (d *Decoder) value(v *Value) error {
	b, _ := d.peek()
	switch b {
	case '[', '(', '{':
		d.pos++
		switch b {
		case '[':
			v.Kind = Vector
		case '(':
			v.Kind = List
		default:
			v.Kind = Map
		}
		return d.coll(v, b)
	case '"':
		d.pos++
		s, err := d.str(v.Line, v.Col)
		v.Kind, v.Text = String, s
		return err
	case '\\':
		d.pos++
		return d.char(v)
	case '#':
		d.pos++
		return d.dispatch(v)
	case ']', ')', '}':
		return d.errorf(v.Line, v.Col, "unexpected %c: no collection is open", b)
	case '^', '`', '~', '@', '\'':
		return d.errorf(v.Line, v.Col, "unexpected %c: reader macros are not EDN", b)
	}
	return d.token(v)
}

func (d *Decoder) coll(v *Value, open byte) error {
	start := len(d.stack)
	err := d.items(open, v.Line, v.Col, nil)
	if items := d.stack[start:]; !d.reuse {
		v.Items = slices.Clone(items)
	} else {
		if len(items) > cap(d.held)-len(d.held) {
			// The items already taken stay where they are, in the
			// array they were taken from.
			d.held = make([]Value, 0, max(2*cap(d.held), len(items), 256))
		}
		n := len(d.held)
		d.held = append(d.held, items...)
		v.Items = d.held[n:len(d.held):len(d.held)]
	}
	d.stack = d.stack[:start]
	if err == nil && v.Kind == Map && len(v.Items)%2 == 1 {
		k := v.Items[len(v.Items)-1]
		err = d.errorf(k.Line, k.Col, "map key %s has no value", k)
	}
	return err
}

// dispatch reads what follows '#': a set, a tagged value, a namespaced map
// or a symbolic number.
func (d *Decoder) dispatch(v *Value) error {
	b, ok := d.peek()
	switch {
	case b == '{':
		d.pos++
		v.Kind = Set
		return d.coll(v, '{')
	case b == '#': // ##Inf, ##-Inf, ##NaN
		d.pos++
		t := string(d.word())
		if t != "Inf" && t != "-Inf" && t != "NaN" {
			return d.errorf(v.Line, v.Col, "unknown symbolic value ##%s: expected ##Inf, ##-Inf or ##NaN", t)
		}
		v.Kind, v.Text = Float, "##"+t
		return nil
	case b == ':':
		return d.nsMap(v)
	case ok && (b|0x20 >= 'a' && b|0x20 <= 'z'): // tags start with a letter
		v.Kind, v.Text = Tagged, d.intern(d.word())
		if err := d.utf8At(v.Text, v.Line, v.Col, "tag"); err != nil {
			return err
		}
		v.Items = make([]Value, 1)
		return d.readAfter(&v.Items[0], v.Line, v.Col, "#"+v.Text)
	}
	return d.errorf(v.Line, v.Col, "unexpected # dispatch: expected #{, #_, #tag or #:ns{")
}

// nsMap reads #:ns{:a 1}, Clojure's namespaced map, as {:ns/a 1}.
func (d *Decoder) nsMap(v *Value) error {
	d.pos++
	ns := string(d.word())
	if err := d.utf8At(ns, v.Line, v.Col, "namespace"); err != nil {
		return err
	}
	if ns == "" || ns[0] == ':' {
		return d.errorf(v.Line, v.Col, "expected a namespace after #: (auto-resolved #:: maps are not EDN)")
	}
	if err := d.skip(); err != nil {
		return err
	}
	if b, _ := d.peek(); b != '{' {
		l, c := d.at()
		return d.errorf(l, c, "expected { after #:%s", ns)
	}
	line, col := v.Line, v.Col
	err := d.read(v)
	v.Line, v.Col = line, col
	for i := 0; i < len(v.Items); i += 2 {
		if k := &v.Items[i]; k.Kind == Keyword && !strings.Contains(k.Text, "/") {
			k.Text = ns + "/" + k.Text
		} else if k.Kind == Keyword && strings.HasPrefix(k.Text, "_/") {
			k.Text = k.Text[2:]
		}
	}
	return err
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

// word consumes a token's bytes up to a delimiter. They stay valid until
// the decoder reads more input.
func (d *Decoder) word() []byte {
	n := d.tokenLen(0)
	w := d.buf[d.pos : d.pos+n]
	d.pos += n
	return w
}

// tokenLen is the length of the token at the next byte, up to a delimiter
// or the end of input, reading more input as needed; its first n bytes
// are taken whatever they are.
func (d *Decoder) tokenLen(n int) int {
	for {
		for ; d.pos+n < len(d.buf); n++ {
			if isDelim(d.buf[d.pos+n]) {
				return n
			}
		}
		if !d.more() {
			return n
		}
	}
}

// intern returns a token's text, as the same string each time it comes
// while it keeps its slot.
func (d *Decoder) intern(b []byte) string {
	if len(b) > maxNameLen || d.names == nil && cap(d.buf) <= minBufSize {
		return string(b)
	}
	h := uint32(2166136261) // FNV-1a: cheaper for short tokens than a map's hash
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	if d.names == nil {
		d.names = new([nameSlots]string)
	}
	slot := &d.names[h%nameSlots]
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot
}

// str reads a string after its opening quote at line:col. Its text is
// taken from the buffer whole, and copied piece by piece only if it has
// escapes.
func (d *Decoder) str(line, col int) (string, error) {
	text, escaped := d.text[:0], false
	for {
		n := 0 // up to the next quote or backslash
		for {
			rest := d.buf[d.pos+n:]
			i := 0
			for i < len(rest) && rest[i] != '"' && rest[i] != '\\' {
				i++
			}
			if n += i; i < len(rest) {
				break
			}
			if !d.more() {
				return "", d.errorf(line, col, `unexpected end of input: expected " to close the string opened here`)
			}
		}
		if d.buf[d.pos+n] == '"' && !escaped {
			s := string(d.buf[d.pos : d.pos+n])
			d.advance(n + 1)
			return s, d.utf8At(s, line, col, "string")
		}
		text = append(text, d.buf[d.pos:d.pos+n]...)
		d.advance(n)
		if d.buf[d.pos] == '"' {
			d.pos++
			d.text = text
			return string(text), d.utf8At(string(text), line, col, "string")
		}
		eline, ecol := d.at()
		d.pos++
		e, ok := d.peek()
		if !ok {
			return "", d.errorf(line, col, `unexpected end of input: expected " to close the string opened here`)
		}
		d.advance(1)
		escaped = true
		switch e {
		case '"', '\\':
			text = append(text, e)
		case 'n':
			text = append(text, '\n')
		case 't':
			text = append(text, '\t')
		case 'r':
			text = append(text, '\r')
		case 'b':
			text = append(text, '\b')
		case 'f':
			text = append(text, '\f')
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
				if r < 0xDC00 && d.avail(2) && d.buf[d.pos] == '\\' && d.buf[d.pos+1] == 'u' {
					d.pos += 2
					if r2, err = d.hex4(eline, ecol); err != nil {
						return "", err
					}
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", d.errorf(eline, ecol, "\\u escape of half a UTF-16 surrogate pair without its other half: chaos keeps text as UTF-8, which cannot hold it")
				}
			}
			text = utf8.AppendRune(text, r)
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
		d.pos++
		r = r<<4 | rune(n)
	}
	return r, nil
}

var charNames = map[string]string{"newline": "\n", "space": " ", "tab": "\t", "return": "\r", "backspace": "\b", "formfeed": "\f"}

// char reads a character literal after its backslash: \a, \newline, \u00e9.
func (d *Decoder) char(v *Value) error {
	v.Kind = Char
	if _, ok := d.peek(); !ok {
		return d.errorf(v.Line, v.Col, `expected a character after \`)
	}
	// The first character is taken even if it is a delimiter: \( is "(".
	d.avail(utf8.UTFMax)
	_, first := utf8.DecodeRune(d.buf[d.pos:])
	n := d.tokenLen(first)
	name := string(d.buf[d.pos : d.pos+n])
	d.advance(n) // the first character may be a newline
	if err := d.utf8At(name, v.Line, v.Col, "character"); err != nil {
		return err
	}
	switch r, size := utf8.DecodeRuneInString(name); {
	case size == len(name):
		v.Text = name
	case charNames[name] != "":
		v.Text = charNames[name]
	case r == 'u' && len(name) == 5:
		n, err := strconv.ParseUint(name[1:], 16, 16)
		if err != nil || utf16.IsSurrogate(rune(n)) {
			return d.errorf(v.Line, v.Col, `bad character \%s: expected \uXXXX, not half a UTF-16 surrogate pair`, name)
		}
		v.Text = string(rune(n))
	default:
		return d.errorf(v.Line, v.Col, `unknown character \%s: expected \c, \newline, \space, \tab, \return, \backspace, \formfeed or \uXXXX`, name)
	}
	return nil
}

// token reads nil, true, false, a number, a keyword or a symbol.
func (d *Decoder) token(v *Value) error {
	t := d.word()
	if !utf8.Valid(t) {
		return d.utf8At(string(t), v.Line, v.Col, "token")
	}
	switch {
	case len(t) == 0:
		return d.errorf(v.Line, v.Col, "expected a value")
	case string(t) == "nil":
		v.Kind = Nil
	case string(t) == "true" || string(t) == "false":
		v.Kind, v.Text = Bool, d.intern(t)
	case t[0] == ':':
		if len(t) == 1 || t[1] == ':' || t[len(t)-1] == '/' {
			return d.errorf(v.Line, v.Col, "invalid keyword %q (auto-resolved ::keywords are not EDN)", t)
		}
		v.Kind, v.Text = Keyword, d.intern(t[1:])
	case canonicalInt(t): // the common case, without big.Int
		v.Kind, v.Text = Int, d.intern(t)
	case isDigit(t[0]) || len(t) > 1 && (t[0] == '-' || t[0] == '+') && isDigit(t[1]):
		return d.number(v, string(t))
	default:
		v.Kind, v.Text = Symbol, d.intern(t)
	}
	return nil
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// canonicalInt reports whether t is an integer as an Int's Text has it:
// decimal digits with no leading zero, after a minus sign if negative.
func canonicalInt[T string | []byte](t T) bool {
	i := 0
	if len(t) > 1 && t[0] == '-' {
		i = 1
	}
	if i == len(t) || t[i] == '0' && len(t) > 1 {
		return false // "", "-", "-0", "01"
	}
	for ; i < len(t); i++ {
		if !isDigit(t[i]) {
			return false
		}
	}
	return true
}

// number parses an integer (with optional N), a double, a decimal (with
// M) or a ratio, and Clojure's hex integers; token has taken the
// integers already in canonical form. Leading zeros are refused: Clojure
// would read 017 as octal.
func (d *Decoder) number(v *Value, t string) error {
	digits := strings.TrimLeft(t, "+-")
	bad := func() error {
		return d.errorf(v.Line, v.Col, "invalid number %q: expected an integer, a float or a ratio", t)
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
		return nil
	}
	if n, r := strings.CutSuffix(t, "N"); r || strings.Trim(digits, "0123456789") == "" {
		i, ok := new(big.Int).SetString(strings.TrimPrefix(n, "+"), 10)
		if !ok {
			return bad()
		}
		v.Kind, v.Text = Int, i.String()
		return nil
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
		return nil
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
	return nil
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
