// Package oracle holds reference checkers for the analysis checkers: each
// one judges a history straight from its checker's definitions, by brute
// force, with nothing clever to get wrong, so that the two can be compared.
//
// The oracles are exhaustive and therefore slow, for small histories only
// (the linearizability searches take at most 16 operations):
//
//   - [CheckSet]: lost, unexpected, recovered elements and reads from the
//     future, checking every element against every read and add;
//   - [Lock]: mutual exclusion, stale writes (from the history or the
//     resource log) and token order, checking every pair of holds, writes,
//     log entries and grants;
//   - [Mutex], [Register] (register and cas-register), [MultiRegister] and
//     [KV]: linearizability, trying every order of the operations that is
//     consistent with real time, with failed operations never taking
//     effect and those of unknown outcome (info, or never completed) taking
//     effect at any time after their invocation, or never.
//
// Real time is the entries' recorded times, never their line order, as in
// the checkers. Beside each oracle is a generator of random small histories
// of its kind ([RandomSetHistory], [RandomLockHistory], [RandomMutexHistory],
// [RandomRegister], [RandomMultiRegister], [RandomKV]), with concurrent
// operations, fail, info and never-completed outcomes, duplicates, and
// lines written in an order that differs from their times while each
// process keeps its own order. A generator draws every choice from a
// [Rand]: a seeded *rand.Rand, or a fuzzer's bytes as [FuzzBytes].
//
// # Comparison tests
//
// The production checkers are compared with the oracles by the tests
// TestOracle<Kind> in package analysis (analysis/oracle_<kind>_test.go):
// each draws CHAOS_ORACLE_N random histories (by default at least 10,000,
// a few seconds), history i from a PCG seeded by i and the test's own
// stream, and checks each with the checker and the oracle. A disagreement
// is a bug in one of the two; the test prints the history's seed and the
// history as JSON lines, as history.jsonl (and resource.jsonl) are
// written, to reproduce it. The fuzz targets FuzzOracle<Kind> compare the
// same way on histories drawn from the fuzzer's bytes.
//
// Offline, for a large count:
//
//	CHAOS_ORACLE_N=100000 go test -count=1 -run TestOracle ./analysis
//
// and to fuzz one kind (a count, not a duration, for -fuzztime):
//
//	go test -run '^$' -fuzz '^FuzzOracleSet$' -fuzztime 200000x ./analysis
package oracle
