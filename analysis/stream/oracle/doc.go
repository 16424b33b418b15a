// Package oracle holds the reference checker for the stream-order checker
// (analysis/stream): [CheckStream] judges a history straight from the
// guarantee of a log read whole, by brute force, with nothing clever to
// get wrong, so that the two can be compared. It imports nothing of the
// checker it checks.
//
// The guarantee: a stream is one log, its messages at sequences 1, 2,
// 3..., from which nothing is removed. A whole read returns the log as it
// was at some moment between its invocation and its completion (a read
// recorded without sequences holds sequences 1, 2, 3...); a publish
// acknowledged at sequence s was appended there, the log growing to s, at
// some moment between its invocation and its acknowledgment. Each is a
// look at the log: [CheckStream] asks that all agree on the message at
// every sequence, and tries every order of their moments that real time
// allows (one that completed before another was invoked comes first) for
// one along which the log never shrinks. What publishes promise by their
// values alone (lost, unexpected, future elements) is the set checker's
// and its oracle's. Beside it, [RandomStreamHistory] draws random small
// stream histories, the reads and acknowledgments drawn from a log grown
// by the publishes and then sometimes spoiled.
//
// # Comparison tests
//
// TestOracleStream in package stream (analysis/stream/oracle_stream_test.go)
// draws CHAOS_ORACLE_N random histories (by default 50,000), history i
// from a PCG seeded by i and the test's own stream, and checks each with
// the checker and the oracle; a disagreement is printed with its seed and
// the history (history.jsonl) to reproduce it. FuzzOracleStream compares
// on histories drawn from the fuzzer's bytes:
//
//	CHAOS_ORACLE_N=100000 go test -count=1 -run TestOracleStream ./analysis/stream
//	go test -run '^$' -fuzz '^FuzzOracleStream$' -fuzztime 200000x ./analysis/stream
package oracle
