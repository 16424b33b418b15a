// Package oracle holds reference checkers for the linearizability checkers
// (analysis/linear): each one judges a history straight from its model's
// definition, by brute force, with nothing clever to get wrong, so that
// the two can be compared. It imports nothing of the checkers it checks.
//
// The oracles are exhaustive and therefore slow, for small histories only
// (the searches take at most 16 operations): [Mutex], [Register] (register
// and cas-register), [MultiRegister] and [KV] decide linearizability by
// trying every order of the operations that is consistent with real time,
// with failed operations never taking effect and those of unknown outcome
// (info, or never completed) taking effect at any time after their
// invocation, or never.
//
// Real time is the entries' recorded times, never their line order, as in
// the checkers. Beside each oracle is a generator of random small
// histories of its kind ([RandomMutexHistory], [RandomRegister],
// [RandomMultiRegister], [RandomKV]), with concurrent operations, fail,
// info and never-completed outcomes, and lines written in an order that
// differs from their times while each process keeps its own order
// (internal/randhistory).
//
// # Comparison tests
//
// The checkers are compared with the oracles by the tests TestOracle<Kind>
// in package linear (analysis/linear/oracle_<kind>_test.go): each draws
// CHAOS_ORACLE_N random histories (by default at least 10,000, a few
// seconds), history i from a PCG seeded by i and the test's own stream,
// and checks each with the checker and the oracle. A disagreement is a bug
// in one of the two; the test prints the history's seed and the history
// as JSON lines, as history.jsonl is written, to reproduce it. The fuzz
// targets FuzzOracle<Kind> compare the same way on histories drawn from the
// fuzzer's bytes.
//
// Offline, for a large count (every family's oracles at once):
//
//	CHAOS_ORACLE_N=100000 go test -count=1 -run TestOracle ./analysis/...
//
// and to fuzz one kind (a count, not a duration, for -fuzztime):
//
//	go test -run '^$' -fuzz '^FuzzOracleRegister$' -fuzztime 200000x ./analysis/linear
package oracle
