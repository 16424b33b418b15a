// Package oracle holds the reference checker for the stream-order checker
// (analysis/stream): [CheckStream] judges a history straight from the
// guarantee of a log read whole, by brute force, with nothing clever to
// get wrong, so that the two can be compared. It imports nothing of the
// checker it checks.
//
// The guarantee: a stream is one log, its messages at sequences 1, 2,
// 3..., from which nothing is removed, and a whole read returns the log
// as it was at some moment between its invocation and its completion (a
// read recorded without sequences holds sequences 1, 2, 3...).
// [CheckStream] tries every order of the reads' moments that real time
// allows (a read that completed before another was invoked comes first)
// and asks whether, along one of them, the log only grows: each read
// holds the read before it as a prefix. What the publishes themselves
// promise (lost, unexpected, future elements) is the set checker's and
// its oracle's. Beside it, [RandomStreamHistory] draws random small
// stream histories, the reads drawn from a log grown by the publishes and
// then sometimes spoiled.
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
