package jepsen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/ops/txnop"
)

// normalized is what Read(Write(ops)) gives back: Renumber(ops), with
// positions as index and time, and nemesis ops :info.
func normalized(ops []history.Op) []history.Op {
	out := Renumber(ops)
	for i := range out {
		out[i].Index, out[i].Time = i, time.Duration(i)
		if out[i].Process == history.Nemesis {
			out[i].Type = history.Info
		}
	}
	return out
}

func sameOps(got, want []history.Op) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d ops, want %d", len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		if g.Index != w.Index || g.Time != w.Time || g.Type != w.Type || g.Process != w.Process ||
			g.F != w.F || !bytes.Equal(g.Value, w.Value) || g.Error != w.Error {
			return fmt.Errorf("op %d = %s (time %d), want %s (time %d)", i, g, g.Time, w, w.Time)
		}
	}
	return nil
}

func roundTrip(t *testing.T, model string, ops []history.Op) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, ops); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got, err := Read(bytes.NewReader(buf.Bytes()), "written", model)
	if err != nil {
		t.Fatalf("Read: %v\n%s", err, buf.String())
	}
	if err := sameOps(got, normalized(ops)); err != nil {
		t.Errorf("%s: round trip: %v\n%s", model, err, buf.String())
	}
	return buf.String()
}

func op(typ history.Type, p int, f string, v any) history.Op {
	return history.Op{Type: typ, Process: p, F: f, Value: history.MustValue(v)}
}

func TestWriteFormat(t *testing.T) {
	ops := []history.Op{
		op(history.Invoke, 0, registerop.FWrite, registerop.Value{Key: "r1", Value: json.RawMessage("3")}),
		op(history.Invoke, history.Nemesis, "partition", []string{"n1", "n2"}),
		op(history.Info, 0, registerop.FWrite, registerop.Value{Key: "r1", Value: json.RawMessage("3")}),
		op(history.Invoke, 0, registerop.FRead, registerop.Value{Key: "7"}),
		op(history.Ok, 0, registerop.FRead, registerop.Value{Key: "7", Value: json.RawMessage("null")}),
		op(history.Invoke, 1, registerop.FCas, registerop.Value{Key: "", From: json.RawMessage(`"a"`), To: json.RawMessage(`{"b":[1.5]}`)}),
		op(history.Fail, 1, "odd f", nil),
		op(history.Ok, 1, txnop.FTxn, []txnop.Step{{F: "cas", Key: "x", Value: json.RawMessage("1")}}),
	}
	for i := range ops {
		ops[i].Time = time.Duration(i+1) * time.Millisecond
	}
	ops[2].Error = `timeout "5s"`
	var buf bytes.Buffer
	if err := Write(&buf, ops); err != nil {
		t.Fatal(err)
	}
	want := `[{:index 0, :time 1000000, :type :invoke, :process 0, :f :write, :value ["r1" 3]}
 {:index 1, :time 2000000, :type :info, :process :nemesis, :f :partition, :value ["n1" "n2"]}
 {:index 2, :time 3000000, :type :info, :process 0, :f :write, :value ["r1" 3], :error "timeout \"5s\""}
 {:index 3, :time 4000000, :type :invoke, :process 2, :f :read, :value [7 nil]}
 {:index 4, :time 5000000, :type :ok, :process 2, :f :read, :value [7 nil]}
 {:index 5, :time 6000000, :type :invoke, :process 1, :f :cas, :value ["a" {"b" [1.5M]}]}
 {:index 6, :time 7000000, :type :fail, :process 1, :f "odd f", :value nil}
 {:index 7, :time 8000000, :type :ok, :process 1, :f :txn, :value [{"f" "cas", "key" "x", "value" 1}]}]
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestWriteErrors(t *testing.T) {
	for _, c := range []struct {
		op   history.Op
		want string
	}{
		{history.Op{Type: "done", F: "read"}, `type "done"`},
		{history.Op{Type: history.Ok, Process: -3, F: "read"}, "process -3"},
		{history.Op{Type: history.Ok, F: "x", Value: json.RawMessage("{")}, "value {"},
		{history.Op{Type: history.Ok, F: "x", Value: json.RawMessage("1 2")}, "trailing data"},
	} {
		if err := Write(&bytes.Buffer{}, []history.Op{c.op}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.op, err, c.want)
		}
	}
}

func TestRenumber(t *testing.T) {
	ops := []history.Op{
		{Process: 0, Type: history.Invoke}, {Process: 1, Type: history.Invoke},
		{Process: 0, Type: history.Info}, {Process: history.Nemesis, Type: history.Info},
		{Process: 0, Type: history.Invoke}, {Process: 2, Type: history.Invoke},
		{Process: 0, Type: history.Info}, {Process: 1, Type: history.Ok},
		{Process: 0, Type: history.Invoke}, {Process: 2, Type: history.Fail},
	}
	var got []int
	for _, op := range Renumber(ops) {
		got = append(got, op.Process)
	}
	// Three clients: p0 becomes p3 after its first :info and p6 after its second.
	want := []int{0, 1, 0, -1, 3, 2, 3, 1, 6, 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if ops[4].Process != 0 {
		t.Error("Renumber changed its input")
	}
	// Clients 1 and 3 (not 0..n-1): fresh ids start above the largest.
	got = nil
	for _, op := range Renumber([]history.Op{{Process: 1, Type: history.Info}, {Process: 3}, {Process: 1}}) {
		got = append(got, op.Process)
	}
	if fmt.Sprint(got) != "[1 3 5]" {
		t.Errorf("sparse clients: got %v, want [1 3 5]", got)
	}
}

// Chaos histories of each workload survive Write and Read.
func TestRoundTrip(t *testing.T) {
	num := func(s string) json.RawMessage { return json.RawMessage(s) }
	tok := int64(34)
	nemesis := []history.Op{
		op(history.Invoke, history.Nemesis, "pause", []string{"n1"}),
		op(history.Info, history.Nemesis, "pause", map[string]any{"n1": "paused", "at": 1.5}),
	}
	register := append([]history.Op{
		op(history.Invoke, 0, registerop.FRead, registerop.Value{Key: "r0"}),
		op(history.Invoke, 1, registerop.FWrite, registerop.Value{Key: "r0", Value: num("3")}),
		op(history.Ok, 0, registerop.FRead, registerop.Value{Key: "r0", Value: num("null")}),
		op(history.Invoke, 2, registerop.FCas, registerop.Value{Key: "r0", From: num("3"), To: num("4")}),
		op(history.Info, 1, registerop.FWrite, registerop.Value{Key: "r0", Value: num("3")}),
		op(history.Fail, 2, registerop.FCas, registerop.Value{Key: "r0", From: num("3"), To: num("4")}),
		op(history.Invoke, 1, registerop.FRead, registerop.Value{Key: "0012"}),
		op(history.Fail, 1, registerop.FRead, registerop.Value{Key: "0012"}),
		op(history.Invoke, 2, registerop.FWrite, registerop.Value{Key: "12", Value: num(`"a<b\n"`)}),
	}, nemesis...)
	register[7].Error = "context deadline exceeded"
	out := roundTrip(t, CasRegister, register)
	if !strings.Contains(out, ":process 4, :f :read") {
		t.Errorf("p1's read after its :info write is not p4:\n%s", out)
	}

	lock := append([]history.Op{
		op(history.Invoke, 0, lockop.FAcquire, lockop.Value{Lock: "l"}),
		op(history.Ok, 0, lockop.FAcquire, lockop.Value{Lock: "l", Session: 1, Token: &tok}),
		op(history.Invoke, 0, lockop.FWrite, lockop.WriteValue{Key: "l", Value: "p0-s1", Session: 1, Token: &tok}),
		op(history.Fail, 0, lockop.FWrite, lockop.WriteValue{Key: "l", Value: "p0-s1", Session: 1, Token: &tok}),
		op(history.Invoke, 0, lockop.FRelease, lockop.Value{Lock: "l", Session: 1}),
		op(history.Info, 0, lockop.FRelease, lockop.Value{Lock: "l", Session: 1}),
		op(history.Invoke, 0, lockop.FAcquire, nil),
		op(history.Invoke, 1, lockop.FWrite, lockop.WriteValue{Key: "l", Value: "p1-s0"}),
	}, nemesis...)
	lock[3].Error = "stale token 34 < 35"
	roundTrip(t, Mutex, lock)

	txn := append([]history.Op{
		op(history.Invoke, 0, txnop.FTxn, []txnop.Step{{F: "r", Key: "x"}, {F: "w", Key: "1", Value: num("2")}}),
		op(history.Ok, 0, txnop.FTxn, []txnop.Step{{F: "r", Key: "x", Value: num("null")}, {F: "w", Key: "1", Value: num("2")}}),
		op(history.Info, 0, txnop.FTxn, nil),
	}, nemesis...)
	roundTrip(t, MultiRegister, txn)

	appends := append([]history.Op{
		op(history.Invoke, 0, txnop.FTxn, []txnop.Step{{F: "r", Key: "x"}, {F: "append", Key: "1", Value: num("2")}}),
		op(history.Ok, 0, txnop.FTxn, []txnop.Step{{F: "r", Key: "x", Value: num("[3,4]")}, {F: "append", Key: "1", Value: num("2")}}),
		op(history.Fail, 0, txnop.FTxn, []txnop.Step{{F: "append", Key: "x", Value: num("5")}}),
	}, nemesis...)
	roundTrip(t, ListAppend, appends)
}

// Read, Write, Read gives the same history for every example: they are
// Jepsen histories already, so renumbering leaves them alone.
func TestRoundTripTestdata(t *testing.T) {
	for _, ex := range examples(t) {
		ops, err := ReadFile(ex.file, ex.model)
		if err != nil {
			t.Fatal(err)
		}
		for i, op := range Renumber(ops) {
			if op.Process != ops[i].Process {
				t.Errorf("%s: op %d: a process invokes again after :info", ex.file, i)
			}
		}
		roundTrip(t, ex.model, ops)
	}
}

// FuzzRead checks that no input makes Read panic, that it fails only with
// a positioned *Error, and that whatever it accepts survives Write and Read.
func FuzzRead(f *testing.F) {
	files, _ := os.ReadDir("testdata")
	for _, e := range files {
		if b, err := os.ReadFile("testdata/" + e.Name()); err == nil && strings.HasSuffix(e.Name(), ".edn") {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{:type :ok, :process 0, :f :write, :value [1 2]} {:type :ok, :process 1, :f :cas, :value [[1 2] [3 4]]}`,
		`[{:type :ok, :process 0, :f :txn, :value [[:r :x 1/2] [:w "y" #{1}]]}]`,
		`#:a{:b 1} #jepsen.history.Op{:type :info, :process :nemesis, :f :x, :value #object[Foo 0x1f {:a ##NaN}]}`,
		`({:type :ok :process 0 :f :acquire :value {:lock "l" :session 1 :token nil}} #_ #_ 1 2)`,
		`"\ud83d\ude00\u12" \newline 1e999 -0x1F 0x1G`,
		`{:type :ok, :process 0, :f :write, :value [1.0 1.0M 1.50M 1e400M 3/6 "~x" :x \x x ##NaN -0.0 #{[1] 2} {[1] 2, :k #{}} {nil 1, true 2, 3 4, 5.5 6, 7M 8, "~" 9} #inst "x"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, model := range Models {
			ops, err := Read(bytes.NewReader(in), "fuzz", model)
			var e *Error
			if err != nil {
				if !errors.As(err, &e) || e.Line < 1 || e.Col < 1 {
					t.Fatalf("%s: error without a position: %v", model, err)
				}
				continue
			}
			var buf bytes.Buffer
			if err := Write(&buf, ops); err != nil {
				t.Fatalf("%s: Write: %v", model, err)
			}
			again, err := Read(&buf, "written", model)
			if err != nil {
				t.Fatalf("%s: reading what Write wrote: %v\n%s", model, err, buf.String())
			}
			if err := sameOps(again, normalized(ops)); err != nil {
				t.Fatalf("%s: round trip: %v\n%s", model, err, buf.String())
			}
		}
	})
}

// BenchmarkRead reads a 100k-op independent cas-register history.
func BenchmarkRead(b *testing.B) {
	var ops []history.Op
	for i := range 50_000 {
		v := registerop.Value{Key: fmt.Sprint(i % 7), From: json.RawMessage("1"), To: json.RawMessage("2")}
		ops = append(ops, op(history.Invoke, i%5, registerop.FCas, v), op(history.Ok, i%5, registerop.FCas, v))
	}
	var buf bytes.Buffer
	if err := Write(&buf, ops); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	defer perCPUSecond(b, buf.Len())()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(buf.Bytes()), "", CasRegister); err != nil {
			b.Fatal(err)
		}
	}
}
