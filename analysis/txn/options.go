package txn

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Options are what Elle's list-append and rw-register checkers are told
// (their opts map); the zero value is chaos's default: Elle's default,
// strict serializability, with writes following reads in rw-register, and
// garbage-read (chaos's own) ruling a history out too.
type Options struct {
	// ConsistencyModels are the models the history must satisfy (Elle's
	// :consistency-models), by any of Elle's names: nil is Elle's default,
	// strict-serializable; empty is none (Elle's nil), for Anomalies alone.
	ConsistencyModels []string
	// Anomalies are further anomalies the history must not show (Elle's
	// :anomalies), each standing for every anomaly that implies it: G1 for
	// G1a, G1b and G1c, G2 for G-single and G2-item, and so on.
	Anomalies []string
	// For rw-register, how its version orders are inferred: from each
	// process's order of transactions (Elle's :sequential-keys?), from
	// real-time order (:linearizable-keys?), and, unless WithoutWFR, from
	// each transaction's read of a key before its write (:wfr-keys?).
	//
	// Elle's :wfr-keys? is off unless asked for; chaos has always assumed
	// it, as every database it tests gives it (a transaction writes over
	// what it read), so it stays on unless WithoutWFR.
	SequentialKeys, LinearizableKeys, WithoutWFR bool
}

// orDefault is *o, or the zero Options for nil.
func (o *Options) orDefault() Options {
	if o == nil {
		return Options{}
	}
	return *o
}

// chosen says whether models or anomalies were chosen: then the verdict is
// Elle's alone, and garbage-read is reported beside it.
func (o Options) chosen() bool { return o.ConsistencyModels != nil || o.Anomalies != nil }

// Validate refuses names Elle does not know. Elle refuses an unknown model
// too, but not an unknown anomaly: here a misspelt one is refused rather
// than silently looked for and never found.
func (o Options) Validate() error {
	models := knownModels()
	for _, m := range o.ConsistencyModels {
		if !slices.Contains(models, m) {
			return fmt.Errorf("unknown consistency model %q: Elle knows %s", m, strings.Join(models, ", "))
		}
	}
	anomalies := knownAnomalies()
	for _, a := range o.Anomalies {
		if !slices.Contains(anomalies, a) {
			return fmt.Errorf("unknown anomaly %q: Elle knows %s", a, strings.Join(anomalies, ", "))
		}
	}
	return nil
}

// prohibited are the anomalies that rule the history out (Elle's
// prohibited-anomaly-types): those implying a chosen anomaly, and those
// the chosen models, or the models they imply, proscribe. Without a
// choice, garbage-read too.
func (o Options) prohibited() map[string]bool {
	models := o.ConsistencyModels
	if models == nil {
		models = []string{"strict-serializable"}
	}
	var direct []string
	for m := range reach(modelsImplied, canonicalModels(models)) {
		direct = append(direct, proscribed[m]...)
	}
	p := reach(reverse(impliedAnomalies), append(direct, o.Anomalies...))
	if o.chosen() {
		delete(p, garbageRead)
	}
	return p
}

// needs says whether an anomaly of the kinds named by suffix ("-process",
// "-realtime") is prohibited: Elle builds the process and real-time graphs
// only then (its additional-graphs).
func needs(prohibited map[string]bool, suffix string) bool {
	for a := range prohibited {
		if strings.HasSuffix(a, suffix) {
			return true
		}
	}
	return false
}

// canonicalModels are models by their canonical names (Elle's
// canonical-model-name).
func canonicalModels(ms []string) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m
		if c, ok := canonicalModel[m]; ok {
			out[i] = c
		}
	}
	return out
}

// knownModels are all the names of models Elle knows (its all-models):
// canonical, friendly and other names, sorted.
func knownModels() []string {
	set := map[string]bool{}
	for m, ms := range modelsImplied {
		set[m] = true
		for _, n := range ms {
			set[n] = true
		}
	}
	for m := range proscribed {
		set[m] = true
	}
	for a, c := range canonicalModel {
		set[a], set[c] = true, true
	}
	return slices.Sorted(maps.Keys(set))
}

// knownAnomalies are all the anomalies the tables name (Elle's
// all-anomalies), sorted.
func knownAnomalies() []string {
	set := map[string]bool{}
	for _, g := range []map[string][]string{impliedAnomalies, anomalySeverity} {
		for a, as := range g {
			set[a] = true
			for _, b := range as {
				set[b] = true
			}
		}
	}
	for _, as := range proscribed { // its keys are models
		for _, a := range as {
			set[a] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
