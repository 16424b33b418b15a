// Package randhistory is random small histories: the draws and line
// orders that every oracle's generator shares. A generator draws each of
// its choices from a [Rand] (a seeded *rand.Rand in the comparison tests,
// a fuzzer's bytes as [FuzzBytes] in the fuzz targets), and writes the
// lines of its processes in an order that may differ from their times
// ([Interleave], [WrittenLate], [InTimeOrder]), as chaos's own histories
// can be written.
package randhistory
