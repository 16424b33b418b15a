package history

import "encoding/json"

// Operation names of register workloads: reads, writes and
// compare-and-sets on independent keys. Writes use FWrite.
const (
	FRead = "read"
	FCas  = "cas"
)

// RegisterValue is the value of a register op. Values are JSON values,
// equal when they are the same value (see value.go: numbers exactly, by
// their mathematical value; etcd and ZooKeeper registers hold small
// integers).
//
// Value is what a write writes, or what a read returned: on a read's
// invocation it is absent, and on a read's ok completion the JSON null
// means the key did not exist. A history from Knossos, where a nil read
// means "value unknown", is told apart by the checker's options, not here.
type RegisterValue struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value,omitempty"`
	// From and To are a cas's expected and new values.
	From json.RawMessage `json:"from,omitempty"`
	To   json.RawMessage `json:"to,omitempty"`
	// Mismatch, on a cas's ok completion, says that the cas ran and found a
	// value other than From, so it changed nothing: evidence about the
	// register's value, unlike a fail, which says only that the cas did not
	// take effect. (Porcupine's etcd logs record such a cas as :fail.)
	Mismatch bool `json:"mismatch,omitempty"`
}

// FTxn is a multi-register transaction (Jepsen's :txn).
const FTxn = "txn"

// TxnStep is one micro-operation of a transaction: a read ("r") or a write
// ("w") of one key. A read's Value is absent on the invocation.
type TxnStep struct {
	F     string          `json:"f"`
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value,omitempty"`
}
