// Package oracle holds the reference checker for the lock checker
// (analysis/lock): [Lock] judges a history straight from the checker's
// definitions, by brute force, with nothing clever to get wrong, so that
// the two can be compared. It imports nothing of the checker it checks.
//
// [Lock] finds mutual exclusion, stale writes (from the history or the
// resource log) and token order by checking every pair of holds, writes,
// log entries and grants: slow, for small histories only. Real time is the
// entries' recorded times, never their line order, as in the checker.
// Beside it, [RandomLockHistory] draws random small lock and election
// histories, with concurrent operations, fail, info and never-completed
// outcomes, and lines written in an order that differs from their times
// while each process keeps its own order (internal/randhistory).
//
// # Comparison tests
//
// TestOracleLock in package lock (analysis/lock/oracle_lock_test.go)
// draws CHAOS_ORACLE_N random histories (by default 20,000), history i
// from a PCG seeded by i and the test's own stream, and checks each with
// the checker and the oracle; a disagreement is printed with its seed and
// the history (history.jsonl and resource.jsonl) to reproduce it.
// FuzzOracleLock compares on histories drawn from the fuzzer's bytes:
//
//	CHAOS_ORACLE_N=100000 go test -count=1 -run TestOracle ./analysis/...
//	go test -run '^$' -fuzz '^FuzzOracleLock$' -fuzztime 200000x ./analysis/lock
package oracle
