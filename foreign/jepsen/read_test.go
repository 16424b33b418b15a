package jepsen

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// example is a testdata file written for a model, named by its prefix.
type example struct{ file, model string }

// examples are the testdata files whose names start with a model's.
func examples(t *testing.T) []example {
	files, err := filepath.Glob("testdata/*.edn")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	var exs []example
	for _, file := range files {
		for _, m := range []string{MultiRegister, CasRegister, Register, Mutex} {
			if strings.HasPrefix(filepath.Base(file), m+"-") {
				exs = append(exs, example{file, m})
				break
			}
		}
	}
	return exs
}

// Every example reads, and every op is numbered by its position.
func TestReadTestdata(t *testing.T) {
	for _, ex := range examples(t) {
		ops, err := ReadFile(ex.file, ex.model)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(ops) == 0 {
			t.Errorf("%s: no ops", ex.file)
		}
		for i, op := range ops {
			if op.Index != i || op.Time != time.Duration(i) {
				t.Errorf("%s: op %d has index %d, time %d", ex.file, i, op.Index, op.Time)
			}
		}
	}
}

func TestReadFileError(t *testing.T) {
	_, err := ReadFile("testdata/malformed.edn", Register)
	want := "testdata/malformed.edn:3:51: unexpected ]: expected } to close the map opened at 2:2"
	var e *Error
	if err == nil || err.Error() != want || !errors.As(err, &e) || e.Line != 3 {
		t.Errorf("got %v, want %s", err, want)
	}
	if _, err := ReadFile("testdata/missing.edn", Register); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Read(strings.NewReader(""), "", "queue"); err == nil || !strings.Contains(err.Error(), `unknown model "queue"`) {
		t.Errorf("unknown model: %v", err)
	}
}

// brief renders ops compactly for comparison: "p0 invoke read {...}".
func brief(ops []history.Op) string {
	var sb strings.Builder
	for _, op := range ops {
		sb.WriteString(history.ProcessName(op.Process) + " " + string(op.Type) + " " + op.F)
		if op.Value != nil {
			sb.WriteString(" " + string(op.Value))
		}
		if op.Error != "" {
			sb.WriteString(" !" + op.Error)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

func TestReadConversion(t *testing.T) {
	for _, c := range []struct{ name, model, in, want string }{
		{"register", Register, `
			{:type :invoke, :process 0, :f :read, :value nil}
			{:type :ok, :process 0, :f :read, :value nil}
			{:type :invoke, :process 1, :f :write, :value "x"}
			{:type :info, :process 1, :f :write, :value :kw, :error :timed-out}
			{:type :invoke, :process 2, :f :read}
			{:type :fail, :process 2, :f :read, :value nil, :error [:not-found "no"]}
			{:type :ok, :process 3, :f :write, :value 1.50, :index 99, :time -5}`, `
p0 invoke read {"key":""}
p0 ok read {"key":"","value":null}
p1 invoke write {"key":"","value":"x"}
p1 info write {"key":"","value":"~:kw"} !:timed-out
p2 invoke read {"key":""}
p2 fail read {"key":""} ![:not-found "no"]
p3 ok write {"key":"","value":"~d1.5"}
`},
		{"cas", CasRegister, `[
			{:type :invoke, :process 0, :f :cas, :value [1 2]}
			{:type :fail, :process 0, :f :cas, :value nil}
			{:type :invoke, :process 0, :f :cas, :value [nil "a"]}]`, `
p0 invoke cas {"key":"","from":1,"to":2}
p0 fail cas {"key":""}
p0 invoke cas {"key":"","from":null,"to":"a"}
`},
		{"independent", CasRegister, `[
			{:type :invoke, :process 0, :f :read, :value [:x nil]}
			{:type :ok, :process 0, :f :read, :value [:x nil]}
			{:type :invoke, :process 1, :f :cas, :value [7 [1 2]]}
			{:type :info, :process 1, :f :cas, :value [7 nil]}
			{:type :ok, :process 2, :f :write, :value ["k" [1 2]]}]`, `
p0 invoke read {"key":"x"}
p0 ok read {"key":"x","value":null}
p1 invoke cas {"key":"7","from":1,"to":2}
p1 info cas {"key":"7"}
p2 ok write {"key":"k","value":[1,2]}
`},
		{"nemesis", Register, `[
			{:type :info, :process :nemesis, :f :start, :value nil}
			{:type :info, :process :nemesis, :f :start-partition, :value [:isolated {"n1" #{"n2"}, :n3 1.0}]}
			{:type :info, :process :nemesis, :f :kill, :value {1 :n1}}
			{:type :info, :process "checker", :f :x, :value #inst "2024"}
			{:type :info, :process nil, :f :x, :value 1/3}]`, `
nemesis info start
nemesis info start-partition ["~:isolated",{"n1":{"~set":["n2"]},"~:n3":"~d1.0"}]
nemesis info kill {"~i1":"~:n1"}
nemesis info x {"~#inst":"2024"}
nemesis info x "~r1/3"
`},
		{"multi-register", MultiRegister, `[
			{:type :invoke, :process 0, :f :txn, :value [[:r 0 nil] [:w :y 2] [:read "z" nil] [:write 1 nil]]}
			{:type :ok, :process 0, :f :txn, :value [[:r 0 nil] [:w :y 2] [:read "z" 5] (:write 1 nil)]}
			{:type :info, :process 1, :f :txn, :value nil}
			{:type :invoke, :process 2, :f :txn, :value []}]`, `
p0 invoke txn [{"f":"r","key":"0"},{"f":"w","key":"y","value":2},{"f":"r","key":"z"},{"f":"w","key":"1","value":null}]
p0 ok txn [{"f":"r","key":"0","value":null},{"f":"w","key":"y","value":2},{"f":"r","key":"z","value":5},{"f":"w","key":"1","value":null}]
p1 info txn
p2 invoke txn []
`},
		{"list-append", ListAppend, `[
			{:type :invoke, :process 0, :f :txn, :value [[:r :x nil] [:append :x 2]]}
			{:type :ok, :process 0, :f :txn, :value [[:r :x [1]] [:append :x 2] [:r 5 []]]}
			{:type :fail, :process 1, :f :txn, :value [[:append :y 3]]}]`, `
p0 invoke txn [{"f":"r","key":"x"},{"f":"append","key":"x","value":2}]
p0 ok txn [{"f":"r","key":"x","value":[1]},{"f":"append","key":"x","value":2},{"f":"r","key":"5","value":[]}]
p1 fail txn [{"f":"append","key":"y","value":3}]
`},
		{"mutex", Mutex, `(
			{:type :invoke, :process 0, :f :acquire, :value nil}
			{:type :ok, :process 0, :f :acquire, :value "n1"}
			{:type :ok, :process 0, :f :acquire, :value {:lock "l", :session 2, :token 7}}
			{:type :invoke, :process 0, :f :release, :value {:lock "l", :other 1}}
			{:type :ok, :process 0, :f :write, :value ["l" "p0-s2"], :session 2, :token 7}
			{:type :ok, :process 0, :f :write, :value [:m 5]})`, `
p0 invoke acquire
p0 ok acquire
p0 ok acquire {"lock":"l","session":2,"token":7}
p0 invoke release
p0 ok write {"key":"l","value":"p0-s2","session":2,"token":7}
p0 ok write {"key":"m","value":"5","session":0,"token":null}
`},
	} {
		ops, err := Read(strings.NewReader(c.in), c.name, c.model)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := brief(ops); got != c.want[1:] {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want[1:])
		}
	}
}

func TestReadConversionErrors(t *testing.T) {
	for _, c := range []struct{ model, in, want string }{
		{Register, "[1]", "1:2: expected an op map like {:type :invoke, :process 0, :f :read}, got integer 1"},
		{Register, "{:process 0, :f :read}", "1:1: op has no :type"},
		{Register, "{:type :done, :process 0, :f :read}", "1:8: expected :type to be :invoke, :ok, :fail or :info, got keyword :done"},
		{Register, `{:type "ok", :process 0, :f :read}`, "expected :type to be"},
		{Register, "{:type :ok, :f :read}", "op has no :process"},
		{Register, "{:type :ok, :process -2, :f :read}", "1:22: expected :process to be a client number >= 0 or :nemesis, got -2"},
		{Register, "{:type :ok, :process 99999999999999999999, :f :read}", "expected :process to be a client number"},
		{Register, "{:type :ok, :process 0}", "op has no :f"},
		{Register, "{:type :ok, :process 0, :f 3}", "expected :f to be a keyword"},
		{Register, "{:type :ok, :process 0, :f :cas, :value [1 2]}", "1:28: the register model has no :cas (use cas-register)"},
		{CasRegister, "{:type :ok, :process 0, :f :add, :value 1}", "expected :f to be :read, :write or :cas for model cas-register, got :add"},
		{CasRegister, "{:type :invoke, :process 0, :f :cas, :value 1}", "1:45: expected a cas value [from to], got integer 1"},
		{CasRegister, "{:type :invoke, :process 0, :f :cas, :value nil}", "expected a cas value [from to], got nil"},
		{Register, "{:type :ok, :process 0, :f :write, :value [1 2]}\n{:type :ok, :process 0, :f :write, :value 3}",
			"2:43: expected an independent [key value] tuple, as at 1:43, got integer 3"},
		{MultiRegister, "{:type :ok, :process 0, :f :read, :value []}", "expected :f to be :txn"},
		{MultiRegister, "{:type :ok, :process 0, :f :txn, :value 1}", "expected a transaction"},
		{MultiRegister, "{:type :ok, :process 0, :f :txn, :value [[:r 1]]}", "1:42: expected a step [:r k v] or [:w k v], got vector [:r 1]"},
		{MultiRegister, "{:type :ok, :process 0, :f :txn, :value [[:append 1 2]]}", "1:43: expected a step function :r, :w, :read or :write, got :append"},
		{ListAppend, "{:type :ok, :process 0, :f :txn, :value [[:w 1 2]]}", "1:43: expected a step function :r or :append, got :w"},
		{ListAppend, "{:type :ok, :process 0, :f :txn, :value [[:append 1]]}", "expected a step [:r k v] or [:append k v]"},
		{RwRegister, "{:type :ok, :process 0, :f :txn, :value [[:append 1 2]]}", "expected a step function :r, :w, :read or :write"},
		{Mutex, "{:type :ok, :process 0, :f :lock}", "expected :f to be :acquire or :release"},
		{Mutex, "{:type :ok, :process 0, :f :write, :value 1}", "expected a lock workload write [key value]"},
		{Mutex, `{:type :ok, :process 0, :f :write, :value [1 2], :session "s"}`, "expected :session to be an integer"},
		{Mutex, `{:type :ok, :process 0, :f :write, :value [1 2], :token 1.5}`, "expected :token to be an integer or nil"},
	} {
		_, err := Read(strings.NewReader(c.in), "h.edn", c.model)
		var e *Error
		if !errors.As(err, &e) || e.File != "h.edn" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: got %v, want an *Error in h.edn containing %q", c.model, c.in, err, c.want)
		}
	}
}

// The info example: :time is ignored, nemesis ops are kept inline, and the
// process that ended :info continues under a fresh number.
func TestReadInfoExample(t *testing.T) {
	ops, err := ReadFile("testdata/cas-register-info-valid.edn", CasRegister)
	if err != nil {
		t.Fatal(err)
	}
	got := brief(ops[2:8])
	want := `nemesis info start
nemesis info start ["~:isolated",{"n1":{"~set":["n2","n3"]}}]
p0 invoke cas {"key":"","from":0,"to":4}
p1 invoke read {"key":""}
p1 ok read {"key":"","value":0}
p0 info cas {"key":"","from":0,"to":4} !:timed-out
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if ops[10].Process != 3 || ops[10].Time != 10 {
		t.Errorf("op 10 = %s, want p3 at 10ns", ops[10])
	}
}

// A process that invokes again before its operation completed is refused
// as Jepsen's history refuses it, saying so, not read into a history whose
// verdict would be about something else (issue 35, item 15); a completion
// with no invocation stands alone.
func TestTwoInFlightRefused(t *testing.T) {
	two := `{:type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}
{:type :invoke, :process 0, :f :txn, :value [[:append :x 2]]}
{:type :ok, :process 0, :f :txn, :value [[:append :x 1]]}`
	_, err := Read(strings.NewReader(two), "h.edn", ListAppend)
	if err == nil || !strings.Contains(err.Error(), "h.edn:2:1: process 0 invokes again while its operation invoked at line 1 is still in flight") {
		t.Errorf("two in flight: %v", err)
	}
	alone := `{:type :ok, :process 0, :f :txn, :value [[:append :x 1]]}
{:type :invoke, :process 0, :f :txn, :value [[:r :x nil]]}
{:type :ok, :process 0, :f :txn, :value [[:r :x [1]]]}`
	if _, err := Read(strings.NewReader(alone), "h.edn", ListAppend); err != nil {
		t.Errorf("a completion alone, then a pair: %v", err)
	}
}

// Elle takes every client op for a transaction, with or without :f, and
// its own tests write them without: so do rw-register and list-append
// here. The other models still need :f, which says what an op does.
func TestReadTxnWithoutF(t *testing.T) {
	in := `{:type :ok, :process 0, :value [[:append :x 1] [:r :x [1]]]}`
	ops, err := Read(strings.NewReader(in), "", ListAppend)
	if err != nil {
		t.Fatal(err)
	}
	want := "p0 ok txn [{\"f\":\"append\",\"key\":\"x\",\"value\":1},{\"f\":\"r\",\"key\":\"x\",\"value\":[1]}]\n"
	if got := brief(ops); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := Read(strings.NewReader(`{:type :ok, :process 0, :value [[:r :x 1]]}`), "", MultiRegister); err == nil || !strings.Contains(err.Error(), "op has no :f") {
		t.Errorf("multi-register without :f: %v", err)
	}
}
