// Package porcupinelog reads the two history formats of porcupine's test
// data into chaos's history schema, so that `chaos check` can judge them:
//
//   - Jepsen etcd logs (test_data/jepsen/etcd_NNN.log), one event a line:
//     `INFO  jepsen.util - <process> <type> <f> <value>`, a single register
//     (key "") read, written and compare-and-set with small integers;
//   - kv logs (test_data/kv/*.txt), one EDN map a line:
//     `{:process N, :type :invoke, :f :get, :key "K", :value "V"}`.
//
// Neither has timestamps; line order is real-time order. Each entry's Time
// is therefore its 1-based line number (in nanoseconds), and Index its
// position in the returned slice.
package porcupinelog

import (
	"bufio"
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
	"unicode/utf8"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
)

// Format is a porcupine history format.
type Format int

const (
	Unknown Format = iota
	Etcd           // Jepsen etcd logs
	KV             // EDN-like kv logs
)

func (f Format) String() string {
	switch f {
	case Etcd:
		return "porcupine etcd log"
	case KV:
		return "porcupine kv log"
	}
	return "unknown format"
}

// maxLine bounds a line, so that a file without newlines cannot take all memory.
const maxLine = 1 << 20

// Detect tells the format of a file from its first non-blank line. An empty
// file is Unknown with an error saying so.
func Detect(r io.Reader) (Format, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		switch {
		case s == "":
			continue
		case strings.HasPrefix(s, "INFO") && strings.Contains(s, "jepsen.util"):
			return Etcd, nil
		case strings.HasPrefix(s, "{") && strings.Contains(s, ":process"):
			return KV, nil
		}
		return Unknown, fmt.Errorf("line %d: expected `INFO  jepsen.util - <process> <type> <f> <value>` (porcupine etcd log) or `{:process N, :type ...}` (porcupine kv log), got %.60q", line, s)
	}
	if err := sc.Err(); err != nil {
		return Unknown, err
	}
	return Unknown, errors.New("empty file: no entries to tell the format by")
}

// ReadFile detects a file's format and reads it.
func ReadFile(path string) ([]history.Op, Format, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, Unknown, err
	}
	f, err := Detect(bytes.NewReader(b))
	if err != nil {
		return nil, Unknown, fmt.Errorf("%s: %w", path, err)
	}
	var ops []history.Op
	if f == Etcd {
		ops, err = ParseEtcd(bytes.NewReader(b), path)
	} else {
		ops, err = ParseKV(bytes.NewReader(b), path)
	}
	return ops, f, err
}

// ReadEtcd reads a Jepsen etcd log file.
func ReadEtcd(path string) ([]history.Op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseEtcd(f, path)
}

// lines calls fn on each non-blank line with its 1-based number, stopping at
// the first error, which it prefixes with name:line.
func lines(r io.Reader, name string, fn func(line int, s string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if !utf8.ValidString(s) {
			// encoding/json would turn each bad byte into U+FFFD, merging
			// distinct keys and values.
			return fmt.Errorf("%s:%d: the line has bytes that are not UTF-8 (%.40q)", name, line, s)
		}
		if err := fn(line, s); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return nil
}

// builder appends entries, numbering them and tracking each process's
// invocation in flight (whose value an :info completion repeats).
type builder struct {
	ops     []history.Op
	pending map[int]int // process -> index of its open invocation
}

func (b *builder) add(line, proc int, typ history.Type, f string, v any, errText string) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	i := len(b.ops)
	b.ops = append(b.ops, history.Op{Index: i, Time: time.Duration(line), Type: typ, Process: proc, F: f, Value: raw, Error: errText})
	if typ == history.Invoke {
		b.pending[proc] = i
	} else {
		delete(b.pending, proc)
	}
	return nil
}

// invoked returns the value of proc's invocation in flight of f, if any.
func (b *builder) invoked(proc int, f string) (json.RawMessage, bool) {
	i, ok := b.pending[proc]
	if !ok || b.ops[i].F != f {
		return nil, false
	}
	return b.ops[i].Value, true
}

// ParseEtcd reads a Jepsen etcd log. Fields are split on runs of white
// space (files 100-102 use spaces, the rest tabs). Following porcupine's
// reading of these logs (see the reference MANIFEST):
//   - `:ok :read nil` means the key is absent: the value is JSON null;
//   - `:info :write|:cas :timed-out` is an info completion (unknown outcome)
//     with the invocation's value and error "timed-out" (any error keyword
//     in place of a value is read the same way);
//   - `:fail :read :timed-out` is a fail with error "timed-out": porcupine
//     gives it an unknown output, which its model accepts in any state, and
//     a read changes nothing, so dropping it, as chaos does a fail, is the same;
//   - `:fail :cas [a b]` means the compare did not match: porcupine's model
//     takes it as evidence (legal only if the value was not a), so it is an
//     ok completion with registerop.Value.Mismatch, not a fail (which
//     chaos drops as "did not take effect").
func ParseEtcd(r io.Reader, name string) ([]history.Op, error) {
	b := &builder{pending: map[int]int{}}
	err := lines(r, name, func(line int, s string) error {
		fs := strings.Fields(s)
		if len(fs) < 7 || fs[0] != "INFO" || fs[1] != "jepsen.util" || fs[2] != "-" {
			return fmt.Errorf("expected `INFO  jepsen.util - <process> <type> <f> <value>`, got %.80q", s)
		}
		proc, err := strconv.Atoi(fs[3])
		if err != nil || proc < 0 {
			return fmt.Errorf("process %q: expected a number >= 0", fs[3])
		}
		typ, err := keywordType(fs[4])
		if err != nil {
			return err
		}
		f := strings.TrimPrefix(fs[5], ":")
		val := strings.Join(fs[6:], " ")
		if strings.HasPrefix(val, ":") { // an error keyword instead of a value
			if typ == history.Invoke || typ == history.Ok {
				return fmt.Errorf("%s %s %s: expected a value; only :info and :fail carry an error", fs[4], fs[5], val)
			}
			v, ok := b.invoked(proc, f) // keep the invocation's value
			if !ok {
				v = json.RawMessage(`{"key":""}`)
			}
			return b.add(line, proc, typ, f, v, strings.TrimPrefix(val, ":"))
		}
		var v registerop.Value
		switch f {
		case registerop.FRead:
			if typ == history.Invoke {
				if val != "nil" {
					return fmt.Errorf(":invoke :read value %q: expected nil", val)
				}
				break // a read's invocation has no value
			}
			if v.Value, err = etcdValue(val, true); err != nil {
				return fmt.Errorf("%s :read value %q: expected nil or an integer", fs[4], val)
			}
		case registerop.FWrite:
			if v.Value, err = etcdValue(val, false); err != nil {
				return fmt.Errorf("%s :write value %q: expected an integer", fs[4], val)
			}
		case registerop.FCas:
			inner, ok := strings.CutPrefix(val, "[")
			if inner, ok = strings.CutSuffix(inner, "]"); ok {
				from, to, _ := strings.Cut(inner, " ")
				if v.From, err = etcdValue(from, false); err == nil {
					v.To, err = etcdValue(to, false)
				}
			}
			if !ok || err != nil {
				return fmt.Errorf("%s :cas value %q: expected [<from> <to>] with two integers", fs[4], val)
			}
			if typ == history.Fail {
				typ, v.Mismatch = history.Ok, true
			}
		default:
			return fmt.Errorf("operation %q: expected :read, :write or :cas", fs[5])
		}
		return b.add(line, proc, typ, f, v, "")
	})
	if err != nil {
		return nil, err
	}
	return b.ops, nil
}

// etcdValue reads an integer as JSON, and nil as null when allowed.
func etcdValue(s string, nilOK bool) (json.RawMessage, error) {
	if s == "nil" && nilOK {
		return json.RawMessage("null"), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(strconv.FormatInt(n, 10)), nil
}

func keywordType(s string) (history.Type, error) {
	t := history.Type(strings.TrimPrefix(s, ":"))
	if !strings.HasPrefix(s, ":") || !t.Valid() {
		return "", fmt.Errorf("type %q: expected :invoke, :ok, :fail or :info", s)
	}
	return t, nil
}

// ParseKV reads a porcupine kv log: get, put and append on string values,
// as f "get", "put", "append" with a registerop.Value whose Value is a
// JSON string (a get's "" means the key is missing). As porcupine does, an
// invocation still open at the end of the file gets an ok completion after
// the last line: an empty get, or the put or append as invoked.
func ParseKV(r io.Reader, name string) ([]history.Op, error) {
	b := &builder{pending: map[int]int{}}
	last := 0
	err := lines(r, name, func(line int, s string) error {
		last = line
		m, err := ednMap(s)
		if err != nil {
			return fmt.Errorf("%w; expected {:process N, :type :invoke|:ok, :f :get|:put|:append, :key \"K\", :value \"V\"|nil}", err)
		}
		proc, ok := m["process"]
		if !ok || proc.kind != 'i' || proc.n < 0 || proc.n > 1<<31 {
			return errors.New(`expected ":process" with a number >= 0`)
		}
		t, ok := m["type"]
		if !ok || t.kind != 'k' {
			return errors.New(`expected ":type" with :invoke, :ok, :fail or :info`)
		}
		typ, err := keywordType(":" + t.s)
		if err != nil {
			return err
		}
		f, ok := m["f"]
		if !ok || f.kind != 'k' || f.s != "get" && f.s != "put" && f.s != "append" {
			return errors.New(`expected ":f" with :get, :put or :append`)
		}
		key, ok := m["key"]
		if !ok || key.kind != 's' {
			return errors.New(`expected ":key" with a string`)
		}
		val, ok := m["value"]
		if !ok || val.kind != 's' && val.kind != 'n' {
			return errors.New(`expected ":value" with a string or nil`)
		}
		v := registerop.Value{Key: key.s}
		switch {
		case f.s == "get" && typ == history.Invoke:
			if val.kind != 'n' {
				return errors.New(`a get's invocation has ":value nil"`)
			}
		case val.kind == 's':
			v.Value, _ = json.Marshal(val.s) // a string always marshals
		case f.s != "get" && (typ == history.Invoke || typ == history.Ok):
			return fmt.Errorf(`a %s's :value must be a string, not nil`, f.s)
		}
		return b.add(line, int(proc.n), typ, f.s, v, "")
	})
	if err != nil {
		return nil, err
	}
	open := make([]int, 0, len(b.pending))
	for _, i := range b.pending {
		open = append(open, i)
	}
	slices.Sort(open)
	for k, i := range open {
		inv := b.ops[i]
		v := inv.Value
		if inv.F == "get" {
			var rv registerop.Value
			_ = json.Unmarshal(v, &rv) // we wrote it
			rv.Value = json.RawMessage(`""`)
			v, _ = json.Marshal(rv)
		}
		if err := b.add(last+1+k, inv.Process, history.Ok, inv.F, v, ""); err != nil {
			return nil, err
		}
	}
	return b.ops, nil
}

// ednValue is a scalar of a flat EDN map: an integer ('i'), a keyword
// ('k', without its colon), a string ('s') or nil ('n').
type ednValue struct {
	kind byte
	s    string
	n    int64
}

// ednMap parses a one-line EDN map of keywords to scalars, the only EDN
// the kv logs use. Commas are white space, as in EDN.
func ednMap(s string) (map[string]ednValue, error) {
	if !strings.HasPrefix(s, "{") {
		return nil, errors.New("expected a map starting with {")
	}
	m := map[string]ednValue{}
	i := 1
	space := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ',') {
			i++
		}
	}
	token := func() string { // up to white space or the map's end
		j := i
		for i < len(s) && !strings.ContainsRune(" \t,}", rune(s[i])) {
			i++
		}
		return s[j:i]
	}
	for {
		space()
		if i >= len(s) {
			return nil, errors.New("map not closed with }")
		}
		if s[i] == '}' {
			if i != len(s)-1 {
				return nil, fmt.Errorf("text after the map's closing }: %.20q", s[i+1:])
			}
			return m, nil
		}
		if s[i] != ':' {
			return nil, fmt.Errorf("at column %d: expected a keyword such as :process", i+1)
		}
		col := i + 1
		i++
		k := token()
		if k == "" {
			return nil, fmt.Errorf("at column %d: empty keyword", col)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("at column %d: :%s given twice", col, k)
		}
		space()
		if i >= len(s) || s[i] == '}' {
			return nil, fmt.Errorf("at column %d: :%s has no value", col, k)
		}
		var v ednValue
		switch c := s[i]; {
		case c == '"':
			str, n, err := ednString(s[i:])
			if err != nil {
				return nil, fmt.Errorf("at column %d: %w", i+1, err)
			}
			v, i = ednValue{kind: 's', s: str}, i+n
		case c == ':':
			i++
			if v = (ednValue{kind: 'k', s: token()}); v.s == "" {
				return nil, fmt.Errorf("at column %d: empty keyword", i)
			}
		default:
			at := i + 1
			t := token()
			if t == "nil" {
				v = ednValue{kind: 'n'}
				break
			}
			n, err := strconv.ParseInt(t, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("at column %d: value %.20q: expected a string, keyword, integer or nil", at, t)
			}
			v = ednValue{kind: 'i', n: n}
		}
		m[k] = v
	}
}

// ednString reads the string literal at the start of s and returns it and
// the length of the literal.
func ednString(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			i++
			if i >= len(s) {
				return "", 0, errors.New("string not closed")
			}
			r, ok := map[byte]byte{'"': '"', '\\': '\\', 'n': '\n', 't': '\t', 'r': '\r'}[s[i]]
			if !ok {
				return "", 0, fmt.Errorf(`unknown escape \%c in a string`, s[i])
			}
			b.WriteByte(r)
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("string not closed")
}
