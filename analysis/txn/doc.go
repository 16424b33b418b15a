// Package txn checks transactional histories as Elle does (Kingsbury and
// Alvaro, "Elle: Inferring Isolation Anomalies from Experimental
// Observations", VLDB 2020): it infers the dependencies between
// transactions from what they read, and looks for the cycles and the
// single-transaction anomalies that isolation levels forbid. It registers
// two checkers: "list-append" and "rw-register".
//
// # History format
//
// A transaction is an operation with F "txn" (txnop.FTxn); ops with any
// other F, and the nemesis's and observer's, are ignored. Its Value is a
// JSON array of micro-ops, each [f, key, value]:
//
//   - list-append: ["append", k, v] appends v to the list at k, and
//     ["r", k, null] reads it. On the ok completion each read holds the
//     list it saw: ["r", k, [1, 2, 3]] (null or [] for an empty or absent
//     list).
//   - rw-register: ["w", k, v] sets k to v, and ["r", k, v] reads it, v
//     null for a key never written.
//
// The completion's value has the same micro-ops in the same order. Keys
// are JSON strings or numbers; values are compared as canonical JSON text
// (numbers as written; strings with escapes decoded), so they may be
// numbers or strings, and each value may be written to a key only once.
// A micro-op may also be an object {"f": f, "key": k, "value": v}
// (txnop.Step), which is how chaos's list-append workload and the
// Jepsen history reader write them.
//
// # Outcomes and order
//
// An ok completion means the transaction committed, and its reads are
// known; fail means it certainly did not take effect; info, or no
// completion at all, means it may or may not have: its writes may be
// read, its reads are unknown. Real-time order comes only from the
// recorded times (T1 precedes T2 if T1 completed before T2 was invoked,
// strictly), never from the order of the lines; process order is the
// order in which one process invoked its committed transactions.
package txn
