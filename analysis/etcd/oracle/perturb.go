package oracle

import (
	"slices"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/randhistory"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// Perturbations are the kinds of change perturb makes, each to one answer
// of a history drawn from a true store. Most make it invalid, not all
// (a value changed to the one it had); to-info never does: an answer
// lost is no anomaly.
var Perturbations = []string{
	"revision",     // an ok answer's header revision, one off
	"value",        // a key's value in a range's answer or a put event
	"kv-field",     // a key's create or mod revision or version, one off
	"drop-event",   // one event a watch got, taken out
	"dup-event",    // one event or response a watch got, twice
	"reorder",      // two adjacent responses of a watch, swapped
	"prev-kv",      // an event's previous key, wrong, or given where the key did not exist
	"prev-kv-gone", // an event's previous key left out where the key existed
	"event-rev",    // an event's revision, one off
	"progress",     // a progress notification at any revision, anywhere
	"early",        // a watch response received earlier
	"phantom",      // an event of a put nobody made
	"stale-serial", // a serializable read's revision, or its keys, older
	"future-serial",
	"stale-linear", // a linearizable range answered from an older store
	"to-info",      // an ok write's answer lost
	"to-fail",      // an ok write said to have failed
}

// perturb makes one change of a kind drawn at random to one answer, and
// names the kind; "" when no answer of the kinds tried can take one.
func (g *gen) perturb() string {
	for range 5 {
		kind := randhistory.OneOf(g.r, Perturbations...)
		if g.change(kind) {
			return kind
		}
	}
	return ""
}

// pick is one of the ops that keep, or nil.
func (g *gen) pick(keep func(o *genOp) bool) *genOp {
	var os []*genOp
	for _, o := range g.ops {
		if keep(o) {
			os = append(os, o)
		}
	}
	if len(os) == 0 {
		return nil
	}
	return randhistory.OneOf(g.r, os...)
}

func okKV(fs ...string) func(o *genOp) bool {
	return func(o *genOp) bool { return o.outcome == history.Ok && o.resp != nil && slices.Contains(fs, o.f) }
}

func readKVs(o *genOp) bool {
	return okKV(etcdop.FRange, etcdop.FRangeSerializable)(o) && len(o.resp.Results[0].KVs) > 0
}

func watching(min int) func(o *genOp) bool {
	return func(o *genOp) bool { return o.watch != nil && len(o.watch.Responses) >= min }
}

// event is a pointer to one event of a watch's responses, or nil.
func (g *gen) event(o *genOp, keep func(e *Event) bool) *Event {
	var es []*Event
	for i := range o.watch.Responses {
		for j := range o.watch.Responses[i].Events {
			if e := &o.watch.Responses[i].Events[j]; keep(e) {
				es = append(es, e)
			}
		}
	}
	if len(es) == 0 {
		return nil
	}
	return randhistory.OneOf(g.r, es...)
}

func anyEvent(*Event) bool { return true }

func (g *gen) change(kind string) bool {
	r := g.r
	one := func() int64 { return randhistory.OneOf(r, int64(-1), 1) }
	switch kind {
	case "revision":
		if o := g.pick(okKV(etcdop.FPut, etcdop.FDelete, etcdop.FRange, etcdop.FRangeSerializable, etcdop.FLeaseRevoke)); o != nil {
			o.resp.Revision += one()
			return true
		}
	case "value", "kv-field":
		var kv *etcdop.KV
		if o := g.pick(readKVs); o != nil && r.IntN(2) == 0 {
			kvs := slices.Clone(o.resp.Results[0].KVs)
			o.resp.Results = []etcdop.KVResult{{KVs: kvs}}
			kv = &kvs[r.IntN(len(kvs))]
		} else if o := g.pick(watching(1)); o != nil {
			if e := g.event(o, func(e *Event) bool { return e.Type == "put" }); e != nil {
				kv = &e.KV
			}
		}
		if kv == nil {
			return false
		}
		if kind == "value" {
			kv.Value = randhistory.OneOf(r, "1", "2", "3", "9")
		} else {
			*randhistory.OneOf(r, &kv.Create, &kv.Mod, &kv.Version) += one()
		}
		return true
	case "drop-event", "dup-event", "reorder", "early":
		least := 1
		if kind == "reorder" {
			least = 2
		}
		o := g.pick(watching(least))
		if o == nil {
			return false
		}
		rs := o.watch.Responses
		i := r.IntN(len(rs))
		switch kind {
		case "drop-event":
			if len(rs[i].Events) == 0 {
				return false
			}
			rs[i].Events = slices.Delete(slices.Clone(rs[i].Events), 0, 1)
			if r.IntN(2) == 0 && len(rs[i].Events) > 0 {
				rs[i].Events = rs[i].Events[:len(rs[i].Events)-1]
			}
			if len(rs[i].Events) == 0 {
				rs = slices.Delete(rs, i, i+1)
			}
		case "dup-event":
			if len(rs[i].Events) > 0 && r.IntN(2) == 0 {
				rs[i].Events = append(slices.Clone(rs[i].Events), rs[i].Events[0])
			} else {
				rs = slices.Insert(rs, i+1, rs[i])
			}
		case "reorder":
			i = r.IntN(len(rs) - 1)
			rs[i], rs[i+1] = rs[i+1], rs[i]
			rs[i].Time, rs[i+1].Time = rs[i+1].Time, rs[i].Time
		case "early":
			t := o.inv + time.Duration(r.IntN(int((rs[i].Time-o.inv)/u)+1))*u
			for j := range i + 1 {
				rs[j].Time = min(rs[j].Time, t)
			}
		}
		o.watch.Responses = rs
		return true
	case "prev-kv", "prev-kv-gone":
		o := g.pick(func(o *genOp) bool { return watching(1)(o) && o.req.(etcdop.WatchRequest).PrevKV })
		if o == nil {
			return false
		}
		e := g.event(o, func(e *Event) bool { return kind == "prev-kv" || e.Prev != nil })
		if e == nil {
			return false
		}
		switch {
		case kind == "prev-kv-gone":
			e.Prev = nil
		case e.Prev != nil:
			p := *e.Prev
			p.Value = randhistory.OneOf(r, "1", "2", "3", "9")
			e.Prev = &p
		default:
			p := e.KV
			p.Value, p.Mod, p.Version = "9", p.Mod-1, max(1, p.Version-1)
			e.Prev = &p
		}
		return true
	case "event-rev":
		if o := g.pick(watching(1)); o != nil {
			if e := g.event(o, anyEvent); e != nil {
				e.KV.Mod += one()
				return true
			}
		}
	case "progress":
		o := g.pick(watching(0))
		if o == nil {
			return false
		}
		rs := o.watch.Responses
		i := r.IntN(len(rs) + 1)
		t := o.inv
		if i > 0 {
			t = rs[i-1].Time
		}
		rs = slices.Insert(rs, i, etcdop.WatchResponse{Time: t, Revision: 1 + int64(r.IntN(int(g.s.Rev)+1)), Progress: true})
		o.watch.Responses = rs
		return true
	case "phantom":
		o := g.pick(watching(0))
		if o == nil {
			return false
		}
		req := o.req.(etcdop.WatchRequest)
		rev := 2 + int64(r.IntN(int(g.s.Rev)))
		e := Event{Type: "put", KV: etcdop.KV{Key: req.Key, Value: "9", Create: rev, Mod: rev, Version: 1}}
		rs := o.watch.Responses
		i := slices.IndexFunc(rs, func(x etcdop.WatchResponse) bool { return len(x.Events) > 0 && x.Events[0].KV.Mod > rev })
		if i < 0 {
			i = len(rs)
		}
		t := o.done
		if i < len(rs) {
			t = rs[i].Time
		}
		o.watch.Responses = slices.Insert(rs, i, etcdop.WatchResponse{Time: t, Revision: rev, Events: []Event{e}})
		return true
	case "stale-serial", "future-serial", "stale-linear":
		f := etcdop.FRangeSerializable
		if kind == "stale-linear" {
			f = etcdop.FRange
		}
		o := g.pick(okKV(f))
		if o == nil {
			return false
		}
		op := o.req.(etcdop.KVRequest).Then[0]
		switch {
		case kind == "future-serial":
			o.resp.Revision += 1 + int64(r.IntN(2))
		case kind == "stale-serial" && r.IntN(2) == 0:
			o.resp.Revision = max(1, o.resp.Revision-1-int64(r.IntN(2)))
		default:
			rev := max(1, o.resp.Revision-1-int64(r.IntN(2)))
			o.resp.Results = []etcdop.KVResult{{KVs: g.byRev[rev].Range(op.Key, op.End)}}
			if kind == "stale-linear" {
				o.resp.Revision = rev
			}
		}
		return true
	case "to-info", "to-fail":
		o := g.pick(okKV(etcdop.FPut, etcdop.FDelete, etcdop.FLeaseRevoke))
		if o == nil {
			return false
		}
		o.outcome, o.resp = history.Info, nil
		if kind == "to-fail" {
			o.outcome = history.Fail
		}
		return true
	}
	return false
}
