// Package registerop is the operation vocabulary of register workloads:
// reads, writes and compare-and-sets of registers on independent keys.
package registerop

import "encoding/json"

// Operation names of register workloads: reads, writes and
// compare-and-sets on independent keys.
const (
	FRead  = "read"
	FWrite = "write"
	FCas   = "cas"
)

// Value is the value of a register op. Values are JSON values, equal when
// they are the same value (see history/value.go: numbers exactly, by their
// mathematical value; etcd and ZooKeeper registers hold small integers).
//
// Value is what a write writes, or what a read returned: on a read's
// invocation it is absent, and on a read's ok completion the JSON null
// means the key did not exist. A history from Knossos, where a nil read
// means "value unknown", is told apart by the checker's options, not here.
type Value struct {
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
