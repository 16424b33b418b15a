// Package setop is the operation vocabulary of set workloads: adds of
// unique elements to one set (or stream), and the reads of it whole.
package setop

import (
	"strconv"
	"strings"
)

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
	// Seq, on an acknowledged add to a stream, is the sequence the stream
	// said it stored the element at (absent likewise).
	Seq uint64 `json:"seq,omitempty"`
}

// SeqRanges are ranges of stream sequences, in order: the holes a read
// of a stream left, as the workload says them and the checker finds them.
type SeqRanges [][2]uint64

// Add appends from..to, if not empty.
func (r *SeqRanges) Add(from, to uint64) {
	if from <= to {
		*r = append(*r, [2]uint64{from, to})
	}
}

// Count is how many sequences the ranges hold.
func (r SeqRanges) Count() uint64 {
	n := uint64(0)
	for _, g := range r {
		n += g[1] - g[0] + 1
	}
	return n
}

// String writes the ranges as "2, 7-9".
func (r SeqRanges) String() string {
	parts := make([]string, len(r))
	for i, g := range r {
		parts[i] = strconv.FormatUint(g[0], 10)
		if g[1] > g[0] {
			parts[i] += "-" + strconv.FormatUint(g[1], 10)
		}
	}
	return strings.Join(parts, ", ")
}
