// Package oracle holds the reference checker for the set checker
// (analysis/set): [CheckSet] judges a history straight from the checker's
// definitions, by brute force, with nothing clever to get wrong, so that
// the two can be compared. It imports nothing of the checker it checks.
//
// [CheckSet] finds lost, unexpected and recovered elements and reads from
// the future by checking every element against every read and add. Real
// time is the entries' recorded times, never their line order, as in the
// checker. Beside it, [RandomSetHistory] draws random small set histories,
// with concurrent operations, fail, info and never-completed outcomes,
// duplicates, and lines written in an order that differs from their times
// while each process keeps its own order (internal/randhistory).
//
// # Comparison tests
//
// TestOracleSet in package set (analysis/set/oracle_set_test.go) draws
// CHAOS_ORACLE_N random histories (by default 50,000), history i from a
// PCG seeded by i and the test's own stream, and checks each with the
// checker and the oracle; a disagreement is printed with its seed and the
// history (history.jsonl) to reproduce it. FuzzOracleSet compares on
// histories drawn from the fuzzer's bytes:
//
//	CHAOS_ORACLE_N=100000 go test -count=1 -run TestOracle ./analysis/...
//	go test -run '^$' -fuzz '^FuzzOracleSet$' -fuzztime 200000x ./analysis/set
package oracle
