// The mutex model (Knossos's): acquire succeeds only when the lock is free,
// release only when it is held, whoever holds it. Each lock name is its own
// mutex; ops without a value share the lock "".

package linear

import (
	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

type mutexIn bool // true: acquire

type mutexOut bool // true: outcome unknown

func mutexModel() *Model {
	return &Model{
		Name:    "mutex",
		Fs:      map[string]bool{lockop.FAcquire: true, lockop.FRelease: true},
		keyed:   true,
		keyOf:   lockName,
		What:    "lock",
		Prepare: prepareMutex,
	}
}

func prepareMutex(analysis.Input) (*Spec, error) {
	return &Spec{Convert: convertMutex, Model: porcupine.Model{
		Init: func() any { return false },
		Step: func(s, i, o any) (bool, any) {
			held, acquire, unknown := s.(bool), bool(i.(mutexIn)), bool(o.(mutexOut))
			if acquire != held { // acquire when free, release when held
				return true, acquire
			}
			return unknown, s // otherwise it cannot have happened
		},
		Hash: func(s any) uint64 { return uint64(analysis.BoolInt(s.(bool))) },
		DescribeOperation: func(i, o any) string {
			s := "release"
			if i.(mutexIn) {
				s = "acquire"
			}
			return s + UnknownMark(bool(o.(mutexOut)))
		},
		DescribeState: func(s any) string {
			if s.(bool) {
				return "held"
			}
			return "free"
		},
	}}, nil
}

func convertMutex(inv, done *history.Op) (Op, error) {
	var v lockop.Value
	if len(inv.Value) > 0 && string(inv.Value) != "null" {
		if err := inv.Decode(&v); err != nil {
			return Op{}, err
		}
	}
	return Op{key: v.Lock, Input: mutexIn(inv.F == lockop.FAcquire), Output: mutexOut(done == nil)}, nil
}
