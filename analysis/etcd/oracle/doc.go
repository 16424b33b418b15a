// Package oracle holds the reference checker for the etcd checkers
// (analysis/etcd: etcd-kv, etcd-watch, etcd-serializable): [Check] judges
// a small history straight from etcd's documented guarantees (etcd.io,
// "API guarantees": KV, Watch and Lease APIs), by brute force, with
// nothing clever to get wrong, so that the checkers can be compared with
// it. It imports nothing of the checkers it checks.
//
// What a history must be, for [Check]: one sequence of store states, each
// made by one write at one new revision (a write that changes nothing
// keeps the revision), that explains every answer:
//
//   - strict serializability: the writes and linearizable ranges take
//     effect in a total order that real time allows (an operation that
//     completed before another was invoked takes effect first); an ok
//     answer is what the store gives there (the header revision; a
//     range's keys with their create and mod revisions, versions and
//     leases; a delete's count; a grant's lease); a write of unknown
//     outcome took effect at one place in that order or never; a failed
//     one never did. A lease revoke deletes its keys at one revision; a
//     put to a lease the store does not have is refused.
//   - serializable ranges: a member answers from its store at the revision
//     in the header, which the cluster had made by the time the answer
//     came; a member's revision never goes back.
//   - watches: only the events of the keys asked; ordered by revision;
//     unique; atomic (a revision's events in one response); reliable and
//     resumable: exactly the events of its keys at every revision from
//     the one it asked to start from (or, from now, its first event) up
//     to the last it reports, each as the store made it, with the key
//     before it when prev_kv was asked; bookmarkable: a progress
//     notification at r comes after every event up to r. An event or a
//     progress notification comes after its revision was made.
//
// What it assumes of a history: it holds every write (the store starts
// empty at revision 1, as etcd-kv's does without Input.Initial), there is
// no compaction (so a previous key asked for is always given), and no
// lease expires within it (Check refuses a grant whose TTL ends before
// the history does).
//
// The search tries every order of the writes and linearizable ranges that
// real time allows, placing each at the earliest instant it can take
// effect, and judges each whole order against the watches and the
// serializable reads: slow, for histories of a handful of operations.
// [RandomHistory] draws such histories from a true store, and half of
// them get one of the [Perturbations].
//
// # Comparison tests
//
// TestOracleEtcdStore in package etcd (analysis/etcd/oracle_store_test.go)
// draws CHAOS_ORACLE_N random histories (by default 5,000), history i
// from a PCG seeded by i and the test's own stream, and judges each with
// the three checkers and the oracle. A checker that finds invalid what
// the oracle finds valid fails the test (a false alarm); the checkers
// all finding valid what the oracle finds invalid is a miss, counted by
// perturbation and by the rule the oracle found broken, and logged; but
// in a history without watches and serializable reads etcd-kv decides
// what the oracle does, and must agree with it exactly.
// CHAOS_ORACLE_SHOW=1 logs the first miss of each rule, shrunk.
// FuzzOracleEtcdStore draws the histories from a fuzzer's bytes.
// TestOracleEtcdCases holds the disagreements found, shrunk by hand: it
// checks the oracle's verdict on each and logs the checkers'.
//
//	CHAOS_ORACLE_N=100000 go test -count=1 -run 'TestOracleEtcdStore$' -v ./analysis/etcd/
//	go test -run '^$' -fuzz '^FuzzOracleEtcdStore$' -fuzztime 200000x ./analysis/etcd
package oracle
