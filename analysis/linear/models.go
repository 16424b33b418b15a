// The sequential models that Checker checks histories against, one
// file each (model_*.go), and what they share. Every model is total on
// unknown outputs: an operation whose outcome is unknown is legal in any
// state, applying its effect where it can, so porcupine ordering it last
// stands for "it never happened".

package linear

import (
	"encoding/json"
	"hash/maphash"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// The checkers of linearizability, one a model, which workloads name and
// histories from elsewhere are judged by (chaos check --model, by name).
var (
	Register      = Checker{Model: registerModel(false)}
	CASRegister   = Checker{Model: registerModel(true)}
	KV            = Checker{Model: kvModel()}
	MultiRegister = Checker{Model: multiRegisterModel()}
	Mutex         = Checker{Model: mutexModel()}
)

func init() {
	for _, c := range []Checker{Register, CASRegister, KV, MultiRegister, Mutex} {
		analysis.Register(c)
	}
}

// What a register-like operation does: the register models read, write and
// cas; the kv model gets, puts and appends.
const (
	opRead uint8 = iota
	opWrite
	opCas
	opAppend
)

// UnknownMark ends the description of an operation of unknown outcome.
func UnknownMark(unknown bool) string {
	if unknown {
		return " → ?"
	}
	return ""
}

// hashString is the Hash of a model whose states are strings.
func hashString() func(any) uint64 {
	seed := maphash.MakeSeed()
	return func(s any) uint64 { return maphash.String(seed, s.(string)) }
}

// valueKey is the key of a register or kv operation: its value's "key"
// (registerop.Value, history.KVValue); "" if it has none.
func valueKey(inv *history.Op) string {
	var v struct {
		Key string `json:"key"`
	}
	_ = json.Unmarshal(inv.Value, &v) // a value without one is refused by Convert
	return v.Key
}

// lockName is the key of a mutex operation: the lock it names.
func lockName(inv *history.Op) string {
	var v lockop.Value
	_ = json.Unmarshal(inv.Value, &v)
	return v.Lock
}
