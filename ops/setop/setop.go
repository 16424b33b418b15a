// Package setop is the operation vocabulary of set workloads: adds of
// unique elements to one set (or stream), and the reads of it whole.
package setop

// Operation names of the set workload: clients add unique numbers to one
// set and, after the faults are healed, read it whole (FRead).
const (
	FAdd  = "add"
	FRead = "read"
)

// Value is the value of an add, or of a final read. Node is the server
// that answered (on completions), so a lost add names who acknowledged it.
type Value struct {
	Element *int64  `json:"element,omitempty"`
	Read    []int64 `json:"read,omitempty"`
	Node    string  `json:"node,omitempty"`
	// Holes, on a read, are what the server counted in the set but did
	// not return (a stream's sequence numbers it skipped), as it said.
	Holes string `json:"holes,omitempty"`
	// Seqs, on a read of a stream, are the stream sequences of the
	// elements of Read, one each: what tells a skipped sequence from two
	// reads that disagree, and a message stored twice from one that moved.
	// Absent in histories recorded before the stream reads kept them.
	Seqs []uint64 `json:"seqs,omitempty"`
}
