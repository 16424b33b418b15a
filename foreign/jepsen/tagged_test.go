package jepsen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
)

// writeValue reads an EDN register history that writes each of vs (to
// key 0, so that no value is taken for a [key value] tuple) and returns
// the JSON of each written value.
func writeValue(t *testing.T, vs ...string) []string {
	t.Helper()
	var in strings.Builder
	for i, v := range vs { // a process each: one operation in flight per process
		fmt.Fprintf(&in, "{:type :invoke, :process %d, :f :write, :value [0 %s]}\n", i, v)
	}
	ops, err := Read(strings.NewReader(in.String()), "t.edn", Register)
	if err != nil {
		t.Fatalf("%q: %v", vs, err)
	}
	var out []string
	for _, op := range ops {
		var rv registerop.Value
		if err := json.Unmarshal(op.Value, &rv); err != nil {
			t.Fatal(err)
		}
		out = append(out, string(rv.Value))
	}
	return out
}

func TestTaggedForms(t *testing.T) {
	for _, c := range []struct{ edn, json string }{
		{"1", "1"},
		{"1N", "1"},
		{"-0", "0"},
		{"10000000000000000000000N", "10000000000000000000000"},
		{"1.0", `"~d1.0"`},
		{"-0.0", `"~d0.0"`},
		{"1e22", `"~d1e+22"`},
		{"9007199254740992.0", `"~d9.007199254740992e+15"`},
		{"1e999", `"~d##Inf"`},
		{"##NaN", `"~d##NaN"`},
		{"1.50M", "1.5"},
		{"1.0M", `"~f1"`},
		{"1e3M", `"~f1000"`},
		{"2/4", `"~r1/2"`},
		{`"x"`, `"x"`},
		{`"~x"`, `"~~x"`},
		{":x", `"~:x"`},
		{"x", `"~$x"`},
		{`\x`, `"~cx"`},
		{"(1 :a)", `[1,"~:a"]`},
		{"#{3 1 2}", `{"~set":[1,2,3]}`},
		{`{:b 1, "a" 2, 3 nil, nil true, true 0.5}`, `{"a":2,"~:b":1,"~?t":"~d0.5","~_":true,"~i3":null}`},
		{`{"~set" 1}`, `{"~~set":1}`},
		{"{[1] :v, :k 2}", `{"~map":["~:k",2,[1],"~:v"]}`},
		{`#inst "2024"`, `{"~#inst":"2024"}`},
	} {
		got := writeValue(t, c.edn)[0]
		if got != c.json {
			t.Errorf("%s: JSON %s, want %s", c.edn, got, c.json)
		}
	}
}

// Values are equal in JSON exactly when Clojure's = says they are equal.
func TestTaggedEquality(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		equal bool
	}{
		{"1", "1N", true},
		{"10000000000000000000000N", "10000000000000000000000", true},
		{"1e22", "1.0E22", true},
		{"1.50M", "1.5M", true},
		{"2/4", "1/2", true},
		{"[1 2]", "(1 2)", true},
		{"#{1 2}", "#{2 1}", true},
		{"{:a 1, :b 2}", "{:b 2, :a 1}", true},
		{"0.0", "-0.0", true},
		{"1", "1.0", false},
		{"1", "1M", false},
		{"1.0", "1.0M", false},
		{"1/2", "0.5", false},
		{"1/2", "0.5M", false},
		{"9007199254740992", "9007199254740992.0", false},
		{":x", `"x"`, false},
		{"x", `"x"`, false},
		{`\x`, `"x"`, false},
		{":x", "x", false},
		{`"~:x"`, ":x", false},
		{"[1 2]", "#{1 2}", false},
		{"nil", "false", false},
		{"{1 2}", `{"1" 2}`, false},
	} {
		vs := writeValue(t, c.a, c.b)
		if (vs[0] == vs[1]) != c.equal {
			t.Errorf("%s and %s: JSON %s and %s; Clojure's = says %t", c.a, c.b, vs[0], vs[1], c.equal)
		}
	}
}

// What Clojure's reader refuses, and keys that would merge, are errors
// with a position.
func TestTaggedErrors(t *testing.T) {
	for _, c := range []struct{ model, in, want string }{
		{Register, "{:type :ok, :process 0, :f :write, :value #{1 1N}}", "1:47: duplicate set element 1"},
		{Register, "{:type :ok, :process 0, :f :write, :value {:a 1, :a 2}}", "1:50: duplicate map key :a"},
		{Register, "{:type :ok, :process 0, :f :write, :value {[1] 1, (1) 2}}", "duplicate map key (1)"},
		{Register, "{:type :ok, :process 0, :f :write, :value [3 1]}\n{:type :ok, :process 0, :f :write, :value [\"3\" 1]}",
			`2:44: key "3" and key 3 (at 1:44) are different values but would both be named "3"`},
		{MultiRegister, "{:type :ok, :process 0, :f :txn, :value [[:w :x 1] [:w \"x\" 2]]}", `key "x" and key :x`},
	} {
		_, err := Read(strings.NewReader(c.in), "h.edn", c.model)
		var e *Error
		if !errors.As(err, &e) || e.File != "h.edn" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an *Error in h.edn containing %q", c.in, err, c.want)
		}
	}
}

// Write reads tagged strings back into EDN, and refuses a "~" string that
// is none of the tagged forms rather than guess.
func TestWriteTagged(t *testing.T) {
	ops := []history.Op{op(history.Ok, 0, registerop.FWrite, registerop.Value{Key: "k", Value: json.RawMessage(`["~:x","~~y","~d1.0","~f1",1.5,1e22,{"~set":[1]},{"~#inst":"2024"}]`)})}
	var buf bytes.Buffer
	if err := Write(&buf, ops); err != nil {
		t.Fatal(err)
	}
	if want := `:value ["k" [:x "~y" 1.0 1M 1.5M 10000000000000000000000 #{1} #inst "2024"]]`; !strings.Contains(buf.String(), want) {
		t.Errorf("got %s, want it to contain %s", buf.String(), want)
	}
	for _, bad := range []string{`"~q"`, `"~:a b"`, `"~d1"`, `"~r2/4"`, `{"~set":1}`, `{"~#":1}`, `1e1000000`} {
		ops[0].Value = history.MustValue(registerop.Value{Key: "k", Value: json.RawMessage(bad)})
		if err := Write(&bytes.Buffer{}, ops); err == nil {
			t.Errorf("%s: written, expected an error", bad)
		}
	}
}

// writeString writes what json.Marshal does, every ASCII byte and some text
// beyond ASCII included.
func TestWriteString(t *testing.T) {
	strs := []string{"", "plain text", "~:x", "é", "\u2028", "a\xffb", "<&>"}
	for c := range 0x80 {
		strs = append(strs, string(rune(c)), "x"+string(rune(c))+"y")
	}
	for _, s := range strs {
		var b bytes.Buffer
		if writeString(&b, s); b.String() != string(history.MustValue(s)) {
			t.Errorf("%q: wrote %s, want %s", s, b.String(), history.MustValue(s))
		}
	}
}
