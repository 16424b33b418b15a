package oracle

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// entries reads lines "time process type f value" (time in
// milliseconds, value JSON) into a history.
func entries(t *testing.T, lines ...string) []history.Op {
	t.Helper()
	h := make([]history.Op, len(lines))
	for i, l := range lines {
		fs := strings.SplitN(l, " ", 5)
		ms, err1 := strconv.Atoi(fs[0])
		proc, err2 := strconv.Atoi(fs[1])
		if len(fs) != 5 || err1 != nil || err2 != nil || !json.Valid([]byte(fs[4])) {
			t.Fatalf("entry %q: expected time, process, type, f and a JSON value", l)
		}
		h[i] = history.Op{Index: i, Time: time.Duration(ms) * time.Millisecond, Process: proc, Type: history.Type(fs[2]), F: fs[3], Value: json.RawMessage(fs[4])}
	}
	return h
}

func TestRegisterOracle(t *testing.T) {
	w1 := []string{`0 0 invoke write {"key":"x","value":1}`, `1 0 ok write {"key":"x","value":1}`}
	tests := []struct {
		name string
		h    []string
		opt  RegisterOptions
		want bool
	}{
		{"read after write", append(w1, `2 1 invoke read {"key":"x"}`, `3 1 ok read {"key":"x","value":1}`), RegisterOptions{}, true},
		{"stale read", append(w1, `2 0 invoke write {"key":"x","value":2}`, `3 0 ok write {"key":"x","value":2}`,
			`4 1 invoke read {"key":"x"}`, `5 1 ok read {"key":"x","value":1}`), RegisterOptions{}, false},
		{"times, not lines, order", []string{`2 1 invoke read {"key":"x"}`, `3 1 ok read {"key":"x","value":null}`, w1[0], w1[1]},
			RegisterOptions{}, false},
		{"equal times are concurrent", append(w1, `1 1 invoke read {"key":"x"}`, `2 1 ok read {"key":"x","value":null}`), RegisterOptions{}, true},
		{"absent is null", []string{`0 1 invoke read {"key":"x"}`, `1 1 ok read {"key":"x","value":null}`}, RegisterOptions{}, true},
		{"initial 0", []string{`0 1 invoke read {"key":"x"}`, `1 1 ok read {"key":"x","value":0}`}, RegisterOptions{Initial: json.RawMessage("0")}, true},
		{"initial 0 is not absent", []string{`0 1 invoke read {"key":"x"}`, `1 1 ok read {"key":"x","value":null}`}, RegisterOptions{Initial: json.RawMessage("0")}, false},
		{"nil read unknown", append(w1, `2 1 invoke read {"key":"x"}`, `3 1 ok read {"key":"x","value":null}`), RegisterOptions{NilReadsUnknown: true}, true},
		{"fail never happened", []string{`0 0 invoke write {"key":"x","value":1}`, `1 0 fail write {"key":"x","value":1}`,
			`2 1 invoke read {"key":"x"}`, `3 1 ok read {"key":"x","value":1}`}, RegisterOptions{}, false},
		{"info happens late", []string{`0 0 invoke write {"key":"x","value":1}`, `1 0 info write {"key":"x","value":1}`,
			`2 1 invoke read {"key":"x"}`, `3 1 ok read {"key":"x","value":null}`, `4 1 invoke read {"key":"x"}`, `5 1 ok read {"key":"x","value":1}`}, RegisterOptions{}, true},
		{"info cannot unhappen", []string{`0 0 invoke write {"key":"x","value":1}`, `1 0 info write {"key":"x","value":1}`,
			`2 1 invoke read {"key":"x"}`, `3 1 ok read {"key":"x","value":1}`, `4 1 invoke read {"key":"x"}`, `5 1 ok read {"key":"x","value":null}`}, RegisterOptions{}, false},
		{"never completed may happen", []string{`0 0 invoke write {"key":"x","value":1}`, `2 1 invoke read {"key":"x"}`, `3 1 ok read {"key":"x","value":1}`}, RegisterOptions{}, true},
		{"keys are apart", append(w1, `2 1 invoke read {"key":"y"}`, `3 1 ok read {"key":"y","value":null}`), RegisterOptions{}, true},
		{"cas found its value", append(w1, `2 0 invoke cas {"key":"x","from":1,"to":2}`, `3 0 ok cas {"key":"x","from":1,"to":2}`,
			`4 1 invoke read {"key":"x"}`, `5 1 ok read {"key":"x","value":2}`), RegisterOptions{Cas: true}, true},
		{"cas ok on another value", append(w1, `2 0 invoke cas {"key":"x","from":0,"to":2}`, `3 0 ok cas {"key":"x","from":0,"to":2}`), RegisterOptions{Cas: true}, false},
		{"info cas that cannot apply", append(w1, `2 0 invoke cas {"key":"x","from":0,"to":2}`, `3 0 info cas {"key":"x","from":0,"to":2}`,
			`4 1 invoke read {"key":"x"}`, `5 1 ok read {"key":"x","value":2}`), RegisterOptions{Cas: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Register(entries(t, tt.h...), tt.opt)
			if err != nil || got != tt.want {
				t.Fatalf("linearizable %v (%v), expected %v", got, err, tt.want)
			}
		})
	}
	if _, err := Register(entries(t, `0 0 invoke cas {"key":"x","from":0,"to":2}`), RegisterOptions{}); err == nil {
		t.Error("a cas in a plain register history was accepted")
	}
}

func TestMultiRegisterOracle(t *testing.T) {
	w := []string{`0 0 invoke txn [{"f":"w","key":"x","value":1},{"f":"w","key":"y","value":1}]`,
		`1 0 ok txn [{"f":"w","key":"x","value":1},{"f":"w","key":"y","value":1}]`, `2 1 invoke txn [{"f":"r","key":"x"},{"f":"r","key":"y"}]`}
	tests := []struct {
		name    string
		h       []string
		initial string
		want    bool
	}{
		{"whole txn seen", append(w, `3 1 ok txn [{"f":"r","key":"x","value":1},{"f":"r","key":"y","value":1}]`), `0`, true},
		{"torn read", append(w, `3 1 ok txn [{"f":"r","key":"x","value":1},{"f":"r","key":"y","value":0}]`), `0`, false},
		{"nil read unknown", append(w, `3 1 ok txn [{"f":"r","key":"x","value":1},{"f":"r","key":"y","value":null}]`), `0`, true},
		{"initial per key", []string{w[2], `3 1 ok txn [{"f":"r","key":"x","value":5},{"f":"r","key":"y","value":0}]`}, `{"x":5}`, false},
		{"reads own write", []string{`0 0 invoke txn [{"f":"w","key":"x","value":2},{"f":"r","key":"x"}]`,
			`1 0 ok txn [{"f":"w","key":"x","value":2},{"f":"r","key":"x","value":2}]`}, ``, true},
		{"misses own write", []string{`0 0 invoke txn [{"f":"r","key":"x"},{"f":"w","key":"x","value":2},{"f":"r","key":"x"}]`,
			`1 0 ok txn [{"f":"r","key":"x","value":0},{"f":"w","key":"x","value":2},{"f":"r","key":"x","value":0}]`}, `0`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MultiRegister(entries(t, tt.h...), json.RawMessage(tt.initial))
			if err != nil || got != tt.want {
				t.Fatalf("linearizable %v (%v), expected %v", got, err, tt.want)
			}
		})
	}
}

func TestKVOracle(t *testing.T) {
	h := []string{`0 0 invoke put {"key":"k","value":"a"}`, `1 0 ok put {"key":"k","value":"a"}`,
		`2 0 invoke append {"key":"k","value":"b"}`, `3 0 info append {"key":"k","value":"b"}`,
		`4 1 invoke get {"key":"k"}`, `5 1 ok get {"key":"k","value":"ab"}`}
	for _, tt := range []struct {
		name string
		h    []string
		want bool
	}{
		{"append seen", h, true},
		{"append cannot unhappen", append(h, `6 1 invoke get {"key":"k"}`, `7 1 ok get {"key":"k","value":"a"}`), false},
		{"missing is empty", []string{`0 1 invoke get {"key":"k"}`, `1 1 ok get {"key":"k","value":null}`, `2 1 invoke get {"key":"k"}`, `3 1 ok get {"key":"k","value":""}`}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := KV(entries(t, tt.h...), nil)
			if err != nil || got != tt.want {
				t.Fatalf("linearizable %v (%v), expected %v", got, err, tt.want)
			}
		})
	}
}

// An execution the generator ran, before it corrupts anything, is
// linearizable: its own order of effects is a witness. The oracle must
// find one (or some other) every time.
func TestUncorruptedHistoriesAreLinearizable(t *testing.T) {
	models := []struct {
		name  string
		gen   genModel
		start []string
		judge func([]history.Op) (bool, error)
	}{
		{"cas-register", registerGen{cas: true, keys: 2}, []string{"null", "null"},
			func(h []history.Op) (bool, error) { return Register(h, RegisterOptions{Cas: true}) }},
		{"multi-register", txnGen{keys: 2}, []string{"null", "null"},
			func(h []history.Op) (bool, error) { return MultiRegister(h, nil) }},
		{"kv", kvGen{keys: 2}, []string{"", ""}, func(h []history.Op) (bool, error) { return KV(h, nil) }},
	}
	for _, m := range models {
		for i := range 2000 {
			h := generateRegister(rand.New(rand.NewPCG(0, uint64(i))), m.gen, m.start, 0)
			if ok, err := m.judge(h); !ok || err != nil {
				t.Fatalf("%s history %d: linearizable %v (%v), expected true: %v", m.name, i, ok, err, h)
			}
		}
	}
}
