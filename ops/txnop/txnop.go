// Package txnop is the operation vocabulary of transactional workloads: a
// transaction of micro-operations on several keys, as Jepsen writes it.
package txnop

import "encoding/json"

// FTxn is a multi-register transaction (Jepsen's :txn).
const FTxn = "txn"

// Step is one micro-operation of a transaction: a read ("r") or a write
// ("w") of one key. A read's Value is absent on the invocation.
type Step struct {
	F     string          `json:"f"`
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value,omitempty"`
}
