package porcupinelog

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
)

const etcdSample = "INFO  jepsen.util - 0\t:invoke\t:read\tnil\n" +
	"INFO  jepsen.util - 1\t:invoke\t:write\t4\n" +
	"INFO  jepsen.util - 0\t:ok\t:read\tnil\n" +
	"INFO  jepsen.util - 2   :invoke :cas    [1 2]\n" + // files 100-102 use spaces
	"INFO  jepsen.util - 1\t:info\t:write\t:timed-out\n" +
	"\n" +
	"INFO  jepsen.util - 2\t:fail\t:cas\t[1 2]\n" +
	"INFO  jepsen.util - 3   :invoke :read   nil\n" +
	"INFO  jepsen.util - 3   :fail   :read   :timed-out\n" +
	"INFO  jepsen.util - 6\t:invoke\t:read\tnil\n" +
	"INFO  jepsen.util - 6\t:ok\t:read\t3\n"

func TestParseEtcd(t *testing.T) {
	ops, err := ParseEtcd(strings.NewReader(etcdSample), "sample.log")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		time        int
		proc        int
		typ         history.Type
		f, value    string
		errorString string
	}{
		{1, 0, history.Invoke, "read", `{"key":""}`, ""},
		{2, 1, history.Invoke, "write", `{"key":"","value":4}`, ""},
		{3, 0, history.Ok, "read", `{"key":"","value":null}`, ""},
		{4, 2, history.Invoke, "cas", `{"key":"","from":1,"to":2}`, ""},
		{5, 1, history.Info, "write", `{"key":"","value":4}`, "timed-out"},
		// The compare did not match: evidence, not a cas that never happened.
		{7, 2, history.Ok, "cas", `{"key":"","from":1,"to":2,"mismatch":true}`, ""},
		{8, 3, history.Invoke, "read", `{"key":""}`, ""},
		{9, 3, history.Fail, "read", `{"key":""}`, "timed-out"},
		{10, 6, history.Invoke, "read", `{"key":""}`, ""},
		{11, 6, history.Ok, "read", `{"key":"","value":3}`, ""},
	}
	if len(ops) != len(want) {
		t.Fatalf("%d entries, expected %d: %v", len(ops), len(want), ops)
	}
	for i, w := range want {
		op := ops[i]
		if op.Index != i || int(op.Time) != w.time || op.Process != w.proc || op.Type != w.typ || op.F != w.f ||
			string(op.Value) != w.value || op.Error != w.errorString {
			t.Errorf("entry %d: %+v (value %s), expected %+v", i, op, op.Value, w)
		}
	}
}

func TestParseEtcdMalformed(t *testing.T) {
	good := "INFO  jepsen.util - 0\t:invoke\t:read\tnil\n"
	tests := []struct{ line, want string }{
		{"WARN  jepsen.util - 0\t:invoke\t:read\tnil", "expected `INFO  jepsen.util"},
		{"INFO  jepsen.util - 0\t:invoke\t:read", "expected `INFO  jepsen.util"},
		{"INFO  jepsen.util - x\t:invoke\t:read\tnil", `process "x": expected a number`},
		{"INFO  jepsen.util - -1\t:invoke\t:read\tnil", "expected a number >= 0"},
		{"INFO  jepsen.util - 0\tinvoke\t:read\tnil", "expected :invoke, :ok, :fail or :info"},
		{"INFO  jepsen.util - 0\t:done\t:read\tnil", "expected :invoke, :ok, :fail or :info"},
		{"INFO  jepsen.util - 0\t:invoke\t:delete\t1", "expected :read, :write or :cas"},
		{"INFO  jepsen.util - 0\t:invoke\t:read\t3", "expected nil"},
		{"INFO  jepsen.util - 0\t:ok\t:read\tfoo", "expected nil or an integer"},
		{"INFO  jepsen.util - 0\t:invoke\t:write\tnil", "expected an integer"},
		{"INFO  jepsen.util - 0\t:invoke\t:write\t1.5", "expected an integer"},
		{"INFO  jepsen.util - 0\t:invoke\t:cas\t[1 2", "expected [<from> <to>]"},
		{"INFO  jepsen.util - 0\t:invoke\t:cas\t[1]", "expected [<from> <to>]"},
		{"INFO  jepsen.util - 0\t:invoke\t:cas\t[1 2 3]", "expected [<from> <to>]"},
		{"INFO  jepsen.util - 0\t:ok\t:write\t:timed-out", "only :info and :fail carry an error"},
		{"INFO  jepsen.util - 0\t:invoke\t:write\t1\xff", "not UTF-8"},
	}
	for _, tt := range tests {
		_, err := ParseEtcd(strings.NewReader(good+tt.line+"\n"+good), "bad.log")
		if err == nil || !strings.HasPrefix(err.Error(), "bad.log:2: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, expected bad.log:2: ... %s", tt.line, err, tt.want)
		}
	}
	long := strings.Repeat("x", maxLine+1)
	if _, err := ParseEtcd(strings.NewReader(good+long), "long.log"); err == nil || !strings.HasPrefix(err.Error(), "long.log:2: ") {
		t.Errorf("over-long line: error %v, expected long.log:2: ...", err)
	}
}

const kvSample = `{:process 0, :type :invoke, :f :get, :key "1", :value nil}
{:process 1, :type :invoke, :f :put, :key "1", :value "x 1 0 y"}
{:process 0, :type :ok, :f :get, :key "1", :value ""}
{:process 1, :type :ok, :f :put, :key "1", :value "x 1 0 y"}
{:process 2, :type :invoke, :f :append, :key "2", :value "a \"q\" \\ b"}
{:process 0, :type :invoke, :f :get, :key "2", :value nil}
`

func TestParseKV(t *testing.T) {
	ops, err := ParseKV(strings.NewReader(kvSample), "kv.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		time  int
		proc  int
		typ   history.Type
		f     string
		value string
	}{
		{1, 0, history.Invoke, "get", `{"key":"1"}`},
		{2, 1, history.Invoke, "put", `{"key":"1","value":"x 1 0 y"}`},
		{3, 0, history.Ok, "get", `{"key":"1","value":""}`},
		{4, 1, history.Ok, "put", `{"key":"1","value":"x 1 0 y"}`},
		{5, 2, history.Invoke, "append", `{"key":"2","value":"a \"q\" \\ b"}`},
		{6, 0, history.Invoke, "get", `{"key":"2"}`},
		// Open at the end: porcupine appends an empty return to each.
		{7, 2, history.Ok, "append", `{"key":"2","value":"a \"q\" \\ b"}`},
		{8, 0, history.Ok, "get", `{"key":"2","value":""}`},
	}
	if len(ops) != len(want) {
		t.Fatalf("%d entries, expected %d: %v", len(ops), len(want), ops)
	}
	for i, w := range want {
		op := ops[i]
		if op.Index != i || int(op.Time) != w.time || op.Process != w.proc || op.Type != w.typ || op.F != w.f || string(op.Value) != w.value {
			t.Errorf("entry %d: %+v (value %s), expected %+v", i, op, op.Value, w)
		}
	}
}

func TestParseKVMalformed(t *testing.T) {
	good := `{:process 0, :type :invoke, :f :get, :key "1", :value nil}` + "\n"
	tests := []struct{ line, want string }{
		{`[:process 0]`, "expected a map starting with {"},
		{`{:process 0, :type :invoke, :f :get, :key "1", :value nil`, "map not closed"},
		{`{:process 0, :type :invoke, :f :get, :key "1", :value nil} x`, "text after the map"},
		{`{process 0}`, "expected a keyword"},
		{`{:process 0, :process 1}`, ":process given twice"},
		{`{:process}`, ":process has no value"},
		{`{:process 0, :type :invoke, :f :get, :key "1, :value nil}`, "string not closed"},
		{`{:process 0, :type :invoke, :f :get, :key "\x", :value nil}`, `unknown escape \x`},
		{`{:process 0, :type :invoke, :f :get, :key "1", :value [1]}`, "expected a string, keyword, integer or nil"},
		{`{:type :invoke, :f :get, :key "1", :value nil}`, `expected ":process"`},
		{`{:process "0", :type :invoke, :f :get, :key "1", :value nil}`, `expected ":process"`},
		{`{:process 0, :type :begin, :f :get, :key "1", :value nil}`, "expected :invoke, :ok, :fail or :info"},
		{`{:process 0, :type :invoke, :f :cas, :key "1", :value nil}`, `expected ":f" with :get, :put or :append`},
		{`{:process 0, :type :invoke, :f :get, :key 1, :value nil}`, `expected ":key" with a string`},
		{`{:process 0, :type :invoke, :f :get, :key "1"}`, `expected ":value"`},
		{`{:process 0, :type :invoke, :f :get, :key "1", :value "v"}`, "a get's invocation has"},
		{`{:process 0, :type :invoke, :f :put, :key "1", :value nil}`, "must be a string"},
		// Two keys that differ only in bytes that are not UTF-8 must not
		// both become "\ufffd".
		{"{:process 0, :type :invoke, :f :get, :key \"\xff\", :value nil}", "not UTF-8"},
	}
	for _, tt := range tests {
		_, err := ParseKV(strings.NewReader(good+tt.line+"\n"), "bad.txt")
		if err == nil || !strings.HasPrefix(err.Error(), "bad.txt:2: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, expected bad.txt:2: ... %s", tt.line, err, tt.want)
		}
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		text string
		want Format
		err  string
	}{
		{"\n" + etcdSample, Etcd, ""},
		{kvSample, KV, ""},
		{"", Unknown, "empty file"},
		{"  \n\n", Unknown, "empty file"},
		{`{"index":0,"type":"invoke"}`, Unknown, "line 1: expected"},
	}
	for _, tt := range tests {
		f, err := Detect(strings.NewReader(tt.text))
		if f != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%.30q: %v, %v; expected %v, %q", tt.text, f, err, tt.want, tt.err)
		}
	}
}

// TestReadFileRefdata reads every reference history, through detection:
// each gives one entry per line (etcd) or per line plus none appended (kv,
// whose files leave no invocation open).
func TestReadFileRefdata(t *testing.T) {
	dir := "../../testdata/porcupine" // part of the repository: missing is a failure
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	n := 0
	for _, path := range files {
		if strings.HasSuffix(path, ".md") {
			continue
		}
		n++
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Count(string(b), "\n")
		ops, f, err := ReadFile(path)
		if lines == 0 { // etcd_095 is empty
			if err == nil || !strings.Contains(err.Error(), "empty file") {
				t.Errorf("%s: empty file gave %v", path, err)
			}
			continue
		}
		wantF := Etcd
		if strings.Contains(path, "/kv/") {
			wantF = KV
		}
		if err != nil || f != wantF || len(ops) != lines {
			t.Errorf("%s: %v, %d entries for %d lines, %v", path, f, len(ops), lines, err)
		}
	}
	if n != 109 {
		t.Errorf("%d reference files, expected 103 etcd logs and 6 kv logs", n)
	}
}

func FuzzEtcdLog(f *testing.F) {
	f.Add([]byte(etcdSample))
	f.Add([]byte("INFO  jepsen.util - 0\t:invoke\t:cas\t[1 2]\nINFO  jepsen.util - 0\t:info\t:cas\t:timed-out\n"))
	f.Add([]byte("INFO jepsen.util - 0 :ok :read 99999999999999999999\n"))
	f.Add([]byte("INFO jepsen.util - 0 :ok :cas [ 1 2 ]\r\n"))
	fuzzParse(f, ParseEtcd)
}

func FuzzKVLog(f *testing.F) {
	f.Add([]byte(kvSample))
	fuzzParse(f, ParseKV)
}

// fuzzParse checks that parse fails only with an error naming file and
// line, and that every entry it returns is well formed.
func fuzzParse(f *testing.F, parse func(io.Reader, string) ([]history.Op, error)) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := parse(strings.NewReader(string(data)), "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error without file:line: %v", err)
			}
			return
		}
		for i, op := range ops {
			var v registerop.Value
			if op.Index != i || !op.Type.Valid() || op.Process < 0 || json.Unmarshal(op.Value, &v) != nil {
				t.Fatalf("entry %d is malformed: %+v", i, op)
			}
		}
	})
}
