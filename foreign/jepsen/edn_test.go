package jepsen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func readOne(t *testing.T, in string) (Value, error) {
	t.Helper()
	d := NewDecoder(strings.NewReader(in))
	v, err := d.Read()
	if err != nil {
		return v, err
	}
	if rest, err := d.Read(); err != io.EOF {
		t.Fatalf("%q: left over %v %v", in, rest, err)
	}
	return v, nil
}

func TestDecodeValues(t *testing.T) {
	for _, c := range []struct {
		in, want string
		kind     Kind
	}{
		{"nil", "nil", Nil},
		{"true", "true", Bool},
		{"42", "42", Int},
		{"-0", "0", Int},
		{"-0x1F", "-31", Int},
		{"+7", "7", Int},
		{"123456789012345678901234567890N", "123456789012345678901234567890", Int},
		{"99999999999999999999", "99999999999999999999", Int},
		{"1.5", "1.5", Float},
		{"1.5M", "1.5M", Decimal},
		{"1M", "1M", Decimal},
		{"-1e3", "-1e3", Float},
		{"2/4", "1/2", Ratio},
		{"4/2", "2", Int}, // as Clojure reads it
		{`"a\"b\\\n\t\u00e9"`, `"a\"b\\\n\té"`, String},
		{`"\ud83d\ude00"`, `"😀"`, String}, // a UTF-16 surrogate pair
		{`"line
break"`, `"line\nbreak"`, String},
		{`\a`, `\a`, Char},
		{`\newline`, `\newline`, Char},
		{`\u0041`, `\A`, Char},
		{`\(`, `\(`, Char},
		{":ok", ":ok", Keyword},
		{":jepsen.foo/bar", ":jepsen.foo/bar", Keyword},
		{"foo/bar", "foo/bar", Symbol},
		{"-", "-", Symbol},
		{"[1 2]", "[1 2]", Vector},
		{"(1, 2,, 3)", "(1 2 3)", List},
		{"#{1 2}", "#{1 2}", Set},
		{`{:a 1 "b" [2]}`, `{:a 1, "b" [2]}`, Map},
		{"[1 #_2 #_ #_ 3 4 5]", "[1 5]", Vector},
		{"; comment\n  1 ; another", "1", Int},
		{"#!/usr/bin/env bb\n1", "1", Int},
		{`#inst "2024-01-01T00:00:00.000-00:00"`, `#inst "2024-01-01T00:00:00.000-00:00"`, Tagged},
		{"#jepsen.history.Op{:index 0}", "#jepsen.history.Op {:index 0}", Tagged},
		{"#object[java.lang.Exception 0x1f \"boom\"]", `#object [java.lang.Exception 31 "boom"]`, Tagged},
		{"#:jepsen.history{:a 1, :_/b 2, :x/c 3}", "{:jepsen.history/a 1, :b 2, :x/c 3}", Map},
		{"##Inf", "##Inf", Float},
		{"[a'b c#d]", "[a'b c#d]", Vector},
	} {
		v, err := readOne(t, c.in)
		if err != nil || v.String() != c.want || v.Kind != c.kind {
			t.Errorf("%q: got %s (kind %d), %v; want %s (kind %d)", c.in, v, v.Kind, err, c.want, c.kind)
		}
	}
}

func TestValuePositions(t *testing.T) {
	v, err := readOne(t, "[\n  {:a 1}\n\t\"é\" x]")
	if err != nil {
		t.Fatal(err)
	}
	got := [][2]int{{v.Line, v.Col}, {v.Items[0].Line, v.Items[0].Col}, {v.Items[1].Line, v.Items[1].Col}, {v.Items[2].Line, v.Items[2].Col}}
	want := [][2]int{{1, 1}, {2, 3}, {3, 2}, {3, 6}} // columns count characters
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d at %v, want %v", i, got[i], want[i])
		}
	}
	if m, _ := v.Items[0].Get("a"); m.String() != "1" || m.Line != 2 || m.Col != 7 {
		t.Errorf("Get(a) = %s at %d:%d", m, m.Line, m.Col)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"[1 2", "1:5: unexpected end of input: expected ] to close the vector opened at 1:1"},
		{"[1 2)", "1:5: unexpected ): expected ] to close the vector opened at 1:1"},
		{"[\n  {:a 1}\n  {:b}]", "3:4: map key :b has no value"},
		{`["é" )`, "1:6: unexpected )"},
		{`"abc`, `1:1: unexpected end of input: expected " to close the string`},
		{`"ab\`, `1:1: unexpected end of input: expected " to close the string`},
		{`  "a\qb"`, `1:5: unknown escape \q in string`},
		{`"\u12"`, `1:2: bad \u escape`},
		{"017", `1:1: invalid number "017"`},
		{"1.2.3", `invalid number "1.2.3"`},
		{"12abc", `invalid number "12abc"`},
		{"0x1G", `invalid number "0x1G"`},
		{"0x_1", `invalid number "0x_1"`},
		{"1/0", `invalid number "1/0"`},
		{"::foo", `1:1: invalid keyword "::foo"`},
		{":", `invalid keyword ":"`},
		{"#?(:clj 1)", "1:1: unexpected # dispatch"},
		{"##Foo", "unknown symbolic value ##Foo"},
		{"#::{:a 1}", "expected a namespace after #:"},
		{"#:a [1]", "expected { after #:a"},
		{"[#_]", "1:2: expected a value after #_"},
		{"#inst", "1:1: expected a value after #inst"},
		{`\`, `1:1: expected a character after \`},
		{`\foo`, `1:1: unknown character \foo`},
		{"]", "1:1: unexpected ]: no collection is open"},
		{"'a", "1:1: unexpected ': reader macros are not EDN"},
		{"@a", "reader macros are not EDN"},
		{strings.Repeat("[", 5000), "values nested more than 1000 deep"},
		{strings.Repeat("#_", 5000) + "1", "values nested more than 1000 deep"},
		// Text that is not UTF-8 is refused, not read as U+FFFD: "a\xff"
		// and "a\xfe" are different strings.
		{"[1 \"a\xff\"]", `1:4: string has bytes that are not UTF-8`},
		{"[:a\xff]", `1:2: token has bytes that are not UTF-8`},
		{"\\\xff", `1:1: character has bytes that are not UTF-8`},
		{"#t\xff 1", `1:1: tag has bytes that are not UTF-8`},
		{`"\ud83d"`, `1:2: \u escape of half a UTF-16 surrogate pair`},
		{`"\ude00\ud83d"`, `half a UTF-16 surrogate pair`},
		{`"\ud83d\u0041"`, `half a UTF-16 surrogate pair`},
		{`\ud800`, `bad character \ud800`},
	} {
		_, err := readOne(t, c.in)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.20q: got %v, want an *Error containing %q", c.in, err, c.want)
		}
	}
}

func TestElements(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"[{:a 1} {:a 2}]", "{:a 1}|{:a 2}|"},
		{"({:a 1}\n {:a 2})\n; done\n", "{:a 1}|{:a 2}|"},
		{"{:a 1}\n{:a 2}\n", "{:a 1}|{:a 2}|"},
		{"#_[junk] [{:a 1}]", "{:a 1}|"},
		{"", ""},
		{"; only a comment", ""},
		{"[]", ""},
		{"[1] 2", "1|error: 1:5: expected end of input after the history's closing ], got integer 2"},
		{"{:a 1}\n{:a", "{:a 1}|error: 2:4: unexpected end of input: expected } to close the map opened at 2:1"},
	} {
		var sb strings.Builder
		err := NewDecoder(strings.NewReader(c.in)).Elements(func(v Value) error {
			sb.WriteString(v.String() + "|")
			return nil
		})
		if err != nil {
			sb.WriteString("error: " + err.Error())
		}
		if sb.String() != c.want {
			t.Errorf("%q: got %q, want %q", c.in, sb.String(), c.want)
		}
	}
}

// A read error other than EOF is reported as itself, not as a syntax error.
func TestReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	r := io.MultiReader(strings.NewReader("[{:a 1}"), errReader{boom})
	err := NewDecoder(r).Elements(func(Value) error { return nil })
	if !errors.Is(err, boom) {
		t.Errorf("got %v, want %v", err, boom)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// dump prints values with their kinds and positions, which String leaves
// out.
func dump(sb *strings.Builder, v Value) {
	fmt.Fprintf(sb, "(%d %q %d:%d", v.Kind, v.Text, v.Line, v.Col)
	for _, x := range v.Items {
		dump(sb, x)
	}
	sb.WriteString(")")
}

// decodeAll reads values from r until an error or the end, and dumps them
// and how reading ended.
func decodeAll(r io.Reader) string {
	var sb strings.Builder
	d := NewDecoder(r)
	for {
		v, err := d.Read()
		if err != nil {
			return sb.String() + "end: " + err.Error()
		}
		dump(&sb, v)
	}
}

// FuzzDecodeChunked checks that the decoder reads the same values, at the
// same positions, with the same errors, whether its input comes in one
// piece or a byte at a time: every token, string and comment can straddle
// the buffer's refills.
func FuzzDecodeChunked(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.edn")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"[1 :a \"s\\n\\u00e9\" \\newline \\é #{x} {:k [1.5M 2/4]} #_ 3 ; c\n é]",
		"#!x\n#inst \"2024\" #:ns{:a 1} ##-Inf -0x1F 99999999999999999999 (a, b)",
		"\"line\nbreak\" \\\n x \"\\ud83d\\ude00\" \"\\ud83d\" [1 2",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		whole := decodeAll(bytes.NewReader(in))
		if bytewise := decodeAll(iotest.OneByteReader(bytes.NewReader(in))); bytewise != whole {
			t.Fatalf("in one piece:\n%s\na byte at a time:\n%s", whole, bytewise)
		}
	})
}
