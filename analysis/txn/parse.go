package txn

import (
	"encoding/json"
	"errors"
	"fmt"
)

// scanner reads the JSON of one transaction's micro-ops without building
// generic values: a million-transaction history is mostly micro-ops, and
// decoding each into interfaces would cost more than the whole analysis.
type scanner struct {
	b []byte
	i int
}

// rawMop is one micro-op as written: its function, its key as canonical
// JSON text, and the raw JSON of its value (nil when absent).
type rawMop struct {
	f, key, value []byte
}

// scalarKind tells the JSON scalars apart.
type scalarKind uint8

const (
	jsonNull scalarKind = iota
	jsonString
	jsonNumber
	jsonBool
)

var errEnd = errors.New("unexpected end of value")

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", s.i, fmt.Sprintf(format, args...))
}

// peek skips white space and returns the next byte, 0 at the end.
func (s *scanner) peek() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

func (s *scanner) expect(c byte) error {
	if got := s.peek(); got != c {
		if got == 0 {
			return errEnd
		}
		return s.errorf("expected %q, got %q", c, got)
	}
	s.i++
	return nil
}

// more consumes a ',' between elements, or reports (false) the closing
// bracket close, consuming it.
func (s *scanner) more(close byte) (bool, error) {
	switch s.peek() {
	case ',':
		s.i++
		return true, nil
	case close:
		s.i++
		return false, nil
	case 0:
		return false, errEnd
	}
	return false, s.errorf("expected ',' or %q, got %q", close, s.b[s.i])
}

// empty consumes close if it comes next: an empty array or object.
func (s *scanner) empty(close byte) bool {
	if s.peek() == close {
		s.i++
		return true
	}
	return false
}

// scalar reads a string, number, boolean or null, returning its canonical
// text: numbers as written, strings re-encoded only when they hold escapes
// (so that "\u0031" and "1" are one value).
func (s *scanner) scalar() ([]byte, scalarKind, error) {
	c := s.peek()
	start := s.i
	switch {
	case c == '"':
		escaped := false
		for s.i++; s.i < len(s.b) && s.b[s.i] != '"'; s.i++ {
			if s.b[s.i] == '\\' {
				escaped = true
				s.i++
			}
		}
		if s.i >= len(s.b) {
			return nil, 0, errEnd
		}
		s.i++
		text := s.b[start:s.i]
		if escaped {
			var str string
			if err := json.Unmarshal(text, &str); err != nil {
				return nil, 0, s.errorf("bad string %s: %v", text, err)
			}
			text, _ = json.Marshal(str)
		}
		return text, jsonString, nil
	case c == '-' || c >= '0' && c <= '9':
		for s.i < len(s.b) && isNumberByte(s.b[s.i]) {
			s.i++
		}
		text := s.b[start:s.i]
		if !validNumber(text) {
			return nil, 0, s.errorf("bad number %q", text)
		}
		return text, jsonNumber, nil
	case c == 0:
		return nil, 0, errEnd
	}
	for _, lit := range []struct {
		text string
		kind scalarKind
	}{{"null", jsonNull}, {"true", jsonBool}, {"false", jsonBool}} {
		if end := s.i + len(lit.text); end <= len(s.b) && string(s.b[s.i:end]) == lit.text {
			s.i = end
			return s.b[start:end], lit.kind, nil
		}
	}
	return nil, 0, s.errorf("expected a string, number, boolean or null, got %q", s.b[s.i])
}

// validNumber checks JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	digits := func(i int) int { // the end of the run of digits from i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch end := digits(i); {
	case end == i, b[i] == '0' && end > i+1:
		return false
	default:
		i = end
	}
	if i < len(b) && b[i] == '.' {
		end := digits(i + 1)
		if end == i+1 {
			return false
		}
		i = end
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		end := digits(i)
		if end == i {
			return false
		}
		i = end
	}
	return i == len(b)
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// skip passes over one JSON value of any kind and returns its text.
func (s *scanner) skip() ([]byte, error) {
	start := s.peek()
	from := s.i
	if start != '[' && start != '{' {
		_, _, err := s.scalar()
		return s.b[from:s.i], err
	}
	depth := 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				s.i++
				return s.b[from:s.i], nil
			}
		case '"':
			if _, _, err := s.scalar(); err != nil {
				return nil, err
			}
			continue
		}
		s.i++
	}
	return nil, errEnd
}

// key reads a micro-op's key: a string or a number.
func (s *scanner) key() ([]byte, error) {
	text, kind, err := s.scalar()
	if err == nil && kind != jsonString && kind != jsonNumber {
		err = s.errorf("a key must be a string or a number, got %s", text)
	}
	return text, err
}

// mops reads a transaction: an array of micro-ops, each either
// [f, key, value] or {"f": f, "key": key, "value": value}.
func (s *scanner) mops(into []rawMop) ([]rawMop, error) {
	if err := s.expect('['); err != nil {
		return into, err
	}
	if s.empty(']') {
		return into, nil
	}
	for {
		var m rawMop
		var err error
		switch s.peek() {
		case '[':
			m, err = s.tupleMop()
		case '{':
			m, err = s.objectMop()
		default:
			err = s.errorf("expected a micro-op [f, key, value]")
		}
		if err != nil {
			return into, fmt.Errorf("micro-op %d: %w", len(into), err)
		}
		into = append(into, m)
		if more, err := s.more(']'); err != nil || !more {
			return into, err
		}
	}
}

func (s *scanner) tupleMop() (rawMop, error) {
	var m rawMop
	s.i++ // '['
	f, kind, err := s.scalar()
	if err != nil {
		return m, err
	}
	if kind != jsonString {
		return m, s.errorf("f must be a string, got %s", f)
	}
	m.f = f[1 : len(f)-1]
	if err := s.expect(','); err != nil {
		return m, err
	}
	if m.key, err = s.key(); err != nil {
		return m, err
	}
	if err := s.expect(','); err != nil {
		return m, err
	}
	if m.value, err = s.skip(); err != nil {
		return m, err
	}
	return m, s.expect(']')
}

// objectMop reads {"f": .., "key": .., "value": ..} in any member order;
// other members are skipped.
func (s *scanner) objectMop() (rawMop, error) {
	var m rawMop
	s.i++ // '{'
	if s.empty('}') {
		return m, s.errorf("empty micro-op")
	}
	for {
		name, kind, err := s.scalar()
		if err != nil {
			return m, err
		}
		if kind != jsonString {
			return m, s.errorf("expected a member name, got %s", name)
		}
		if err := s.expect(':'); err != nil {
			return m, err
		}
		switch string(name) {
		case `"f"`:
			f, kind, err := s.scalar()
			if err != nil {
				return m, err
			}
			if kind != jsonString {
				return m, s.errorf("f must be a string, got %s", f)
			}
			m.f = f[1 : len(f)-1]
		case `"key"`:
			if m.key, err = s.key(); err != nil {
				return m, err
			}
		case `"value"`:
			if m.value, err = s.skip(); err != nil {
				return m, err
			}
		default:
			if _, err := s.skip(); err != nil {
				return m, err
			}
		}
		more, err := s.more('}')
		if err != nil {
			return m, err
		}
		if !more {
			break
		}
	}
	if m.f == nil || m.key == nil {
		return m, s.errorf("micro-op without f or key")
	}
	return m, nil
}

// readValue parses a read's value: each element's canonical text, in
// order, handed to add. A list read holds an array (null for the empty
// list); a register read holds one scalar, or null for no value.
func readValue(raw []byte, list bool, add func([]byte) error) error {
	s := scanner{b: raw}
	if s.peek() == 0 {
		return nil // absent: as null
	}
	if !list || s.peek() != '[' {
		text, kind, err := s.scalar()
		switch {
		case err != nil:
			return err
		case kind != jsonNull && list:
			return fmt.Errorf("a list read's value must be an array or null, got %s", text)
		case kind != jsonNull:
			if err := add(text); err != nil {
				return err
			}
		}
		return s.end()
	}
	s.i++
	if !s.empty(']') {
		for {
			text, kind, err := s.scalar()
			if err != nil {
				return err
			}
			if kind == jsonNull {
				return s.errorf("a list element cannot be null")
			}
			if err := add(text); err != nil {
				return err
			}
			if more, err := s.more(']'); err != nil {
				return err
			} else if !more {
				break
			}
		}
	}
	return s.end()
}

// writeValue parses the value an append or write adds: one scalar, not null.
func writeValue(raw []byte) ([]byte, error) {
	s := scanner{b: raw}
	text, kind, err := s.scalar()
	if err == nil && kind == jsonNull {
		err = errors.New("a written value cannot be null")
	}
	if err == nil {
		err = s.end()
	}
	return text, err
}

func (s *scanner) end() error {
	if c := s.peek(); c != 0 {
		return s.errorf("unexpected %q after the value", c)
	}
	return nil
}

// parseMops reads a transaction's micro-ops from an op's value.
func parseMops(value []byte, into []rawMop) ([]rawMop, error) {
	s := scanner{b: value}
	mops, err := s.mops(into[:0])
	if err == nil {
		err = s.end()
	}
	return mops, err
}
