package oracle

import (
	"slices"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/randhistory"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// Case is a random history and the perturbation it got, "" for none.
type Case struct {
	History []history.Op
	Kind    string
}

// genOp is an operation as the generator draws it, before its lines.
type genOp struct {
	proc      int
	f         string
	req       any // etcdop.KVRequest or etcdop.WatchRequest
	inv, done time.Duration
	outcome   history.Type // "" never completed
	resp      *etcdop.KVResponse
	watch     *etcdop.WatchResult
}

const u = randhistory.Tick

// The generator's lease: granted with a TTL far past any history's end.
const (
	genLease = 7
	genTTL   = 600
)

// RandomHistory draws a small history from a true store: maybe a lease
// grant, then 3 to 8 puts (values from a few, so that puts repeat them;
// some leased), deletes (of a key or a range), a lease revoke, and
// linearizable and serializable ranges (members m1 and m2, each at a
// revision that lags but never goes back), each its own process, taking
// effect in order at points 10 ticks apart, invoked up to 25 ticks before
// and completed up to 25 after; writes end ok, fail (no effect), info or
// never (with or without effect). Up to three watches, of a key or a
// range, from a revision or from now, some with prev_kv and progress
// notifications, get each revision's events some ticks after it was
// made, until they end. Half the histories then get one perturbation
// (perturb). Lines are in time order, or interleaved across processes.
func RandomHistory(r randhistory.Rand) Case {
	g := &gen{r: r, s: NewStore()}
	g.byRev = map[int64]Store{1: g.s}
	g.made = map[int64]time.Duration{1: 0}
	g.member = map[string]int64{}
	if r.IntN(2) == 0 {
		g.grant()
	}
	for range 3 + r.IntN(6) {
		g.next()
	}
	for j := range r.IntN(4) {
		g.watch(100 + j)
	}
	c := Case{}
	if r.IntN(2) == 0 {
		c.Kind = g.perturb()
	}
	var lines [][]history.Op
	for _, o := range g.ops {
		lines = append(lines, o.lines())
	}
	if r.IntN(2) == 0 {
		c.History = randhistory.Interleave(r, lines)
	} else {
		c.History = randhistory.InTimeOrder(slices.Concat(lines...))
	}
	return c
}

type gen struct {
	r       randhistory.Rand
	s       Store
	byRev   map[int64]Store
	made    map[int64]time.Duration
	member  map[string]int64 // each member's revision
	ops     []*genOp
	point   time.Duration
	granted bool
	// grantDone is when the grant's answer came: a client learns the
	// lease from it, and only then can name it.
	grantDone time.Duration
}

func (o *genOp) lines() []history.Op {
	out := []history.Op{{Time: o.inv, Type: history.Invoke, Process: o.proc, F: o.f, Value: history.MustValue(o.req)}}
	switch {
	case o.outcome == "":
	case o.watch != nil:
		out = append(out, history.Op{Time: o.done, Type: o.outcome, Process: o.proc, F: o.f, Value: history.MustValue(o.watch)})
	case o.outcome == history.Ok:
		out = append(out, history.Op{Time: o.done, Type: o.outcome, Process: o.proc, F: o.f, Value: history.MustValue(o.resp)})
	default:
		out = append(out, history.Op{Time: o.done, Type: o.outcome, Process: o.proc, F: o.f, Value: history.MustValue(o.req)})
	}
	return out
}

// at is an operation taking effect at the next point.
func (g *gen) at(f string, req any) *genOp {
	g.point += 10 * u
	o := &genOp{proc: len(g.ops), f: f, req: req,
		inv:  max(0, g.point-time.Duration(g.r.IntN(26))*u),
		done: g.point + time.Duration(g.r.IntN(26))*u}
	g.ops = append(g.ops, o)
	return o
}

func (g *gen) grant() {
	o := g.at(etcdop.FLeaseGrant, etcdop.KVRequest{TTL: genTTL})
	o.done = g.point + time.Duration(g.r.IntN(10))*u
	g.grantDone = o.done
	next, resp, _ := g.s.Apply(etcdop.FLeaseGrant, etcdop.KVRequest{}, genLease)
	g.s, o.resp, o.outcome, g.granted = next, &resp, history.Ok, true
}

var (
	genKeys   = []string{"a", "b", "c"}
	genValues = []string{"1", "2", "3"}
	genRanges = [][2]string{{"a", ""}, {"b", ""}, {"a", "c"}, {"a", "\x00"}}
)

// next draws one operation and runs it on the true store.
func (g *gen) next() {
	r := g.r
	kind := r.IntN(11)
	if kind == 10 && !g.granted {
		kind = 0
	}
	one := func(op etcdop.KVOp) etcdop.KVRequest { return etcdop.KVRequest{Then: []etcdop.KVOp{op}} }
	var f string
	var req etcdop.KVRequest
	switch kind {
	case 0, 1, 2, 3, 4:
		f, req = etcdop.FPut, one(etcdop.KVOp{F: etcdop.FPut, Key: randhistory.OneOf(r, genKeys...), Value: randhistory.OneOf(r, genValues...)})
		if g.granted && r.IntN(3) == 0 {
			req.Then[0].Lease = genLease
		}
	case 5:
		op := etcdop.KVOp{F: etcdop.FDelete, Key: randhistory.OneOf(r, genKeys...)}
		if r.IntN(4) == 0 {
			op.Key, op.End = "a", "c"
		}
		f, req = etcdop.FDelete, one(op)
	case 6, 7:
		rg := randhistory.OneOf(r, genRanges...)
		f, req = etcdop.FRange, one(etcdop.KVOp{F: etcdop.FRange, Key: rg[0], End: rg[1]})
	case 8, 9:
		rg := randhistory.OneOf(r, genRanges...)
		f, req = etcdop.FRangeSerializable, one(etcdop.KVOp{F: etcdop.FRange, Key: rg[0], End: rg[1]})
	default:
		f, req = etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: genLease}
	}
	o := g.at(f, req)
	if f == etcdop.FLeaseRevoke || req.Then[0].Lease != 0 {
		o.inv = max(o.inv, g.grantDone+u)
	}
	if f == etcdop.FRange || f == etcdop.FRangeSerializable {
		o.outcome = randhistory.OneOf(r, history.Ok, history.Ok, history.Ok, history.Ok, history.Info, history.Fail)
		if o.outcome != history.Ok {
			return
		}
		_, resp, _ := g.s.Apply(f, req, 0)
		if f == etcdop.FRangeSerializable {
			m := randhistory.OneOf(r, "m1", "m2")
			rev := max(g.member[m], 1)
			rev += int64(r.IntN(int(g.s.Rev - rev + 1)))
			g.member[m] = rev
			resp = etcdop.KVResponse{Revision: rev, Member: m, Results: []etcdop.KVResult{{KVs: g.byRev[rev].Range(req.Then[0].Key, req.Then[0].End)}}}
		}
		o.resp = &resp
		return
	}
	o.outcome = randhistory.OneOf(r, history.Ok, history.Ok, history.Ok, history.Ok, history.Ok, history.Ok, history.Info, history.Info, history.Fail, "")
	applied := o.outcome == history.Ok || o.outcome != history.Fail && r.IntN(2) == 0
	next, resp, refused := g.s.Apply(f, req, 0)
	if refused {
		// etcd refuses a put to, or a revoke of, a lease it does not have.
		o.outcome = randhistory.OneOf(r, history.Fail, history.Info)
		return
	}
	if !applied {
		return
	}
	o.resp = &resp
	if next.Rev != g.s.Rev {
		g.byRev[next.Rev], g.made[next.Rev] = next, g.point
	}
	g.s = next
}

// revAt is the store's revision at time t.
func (g *gen) revAt(t time.Duration) int64 {
	rev := int64(1)
	for v, at := range g.made {
		if at <= t {
			rev = max(rev, v)
		}
	}
	return rev
}

// watch draws a watch by proc: it gets, in order, one response per
// revision with events of its keys, some ticks after the revision was
// made, and progress notifications between them, until it ends.
func (g *gen) watch(proc int) {
	r := g.r
	rg := randhistory.OneOf(r, genRanges...)
	req := etcdop.WatchRequest{Key: rg[0], End: rg[1], PrevKV: r.IntN(2) == 0, Progress: r.IntN(2) == 0}
	inv := time.Duration(r.IntN(int(g.point/u)/2+10)) * u
	start := g.revAt(inv) + 1 // a watch from now starts after the member's revision
	if r.IntN(2) == 0 {
		req.Rev = 1 + int64(r.IntN(3))
		start = req.Rev
	}
	end := inv + time.Duration(r.IntN(int(g.point/u)+40))*u
	if r.IntN(2) == 0 {
		end = g.point + 40*u // to the end
	}
	var resps []etcdop.WatchResponse // every response it would get, ending never
	d := inv
	for v := max(start, 2); v <= g.s.Rev; v++ {
		var evs []Event
		for _, e := range Events(g.byRev[v-1], g.byRev[v]) {
			if InRange(req.Key, req.End, e.KV.Key) {
				if !req.PrevKV {
					e.Prev = nil
				}
				evs = append(evs, e)
			}
		}
		if len(evs) > 0 {
			d = max(d, g.made[v]+time.Duration(r.IntN(15))*u)
			resps = append(resps, etcdop.WatchResponse{Time: d, Revision: v, Events: evs})
		}
	}
	res := &etcdop.WatchResult{Member: randhistory.OneOf(r, "m1", "m2")}
	last := inv
	for k := 0; k <= len(resps); k++ {
		nextRev, nextAt := g.s.Rev+1, end
		if k < len(resps) {
			nextRev, nextAt = resps[k].Revision, min(end, resps[k].Time)
		}
		if req.Progress && r.IntN(3) == 0 && nextAt >= last {
			t := last + time.Duration(r.IntN(int((nextAt-last)/u)+1))*u
			res.Responses = append(res.Responses, etcdop.WatchResponse{Time: t, Revision: min(g.revAt(t), nextRev-1), Progress: true})
			last = t
		}
		if k == len(resps) || resps[k].Time > end {
			break
		}
		res.Responses = append(res.Responses, resps[k])
		last = resps[k].Time
	}
	g.ops = append(g.ops, &genOp{proc: proc, f: etcdop.FWatch, req: req, inv: inv, done: end, outcome: history.Ok, watch: res})
}
