package oracle

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// Result is the oracle's judgement of a history.
type Result struct {
	Valid bool
	// Why says, of an invalid history, what rules it out: a rule that no
	// order can mend, or why the first whole order tried failed. It
	// starts with the rule's name and a colon (Rule).
	Why string
	// Orders counts the orders of the operations that the search judged
	// whole (every ok answer placed).
	Orders int
}

// Rule is the name of the rule Why says was broken, "" if none.
func (r Result) Rule() string {
	rule, _, _ := strings.Cut(r.Why, ":")
	return rule
}

// call is a write or a linearizable range: its request and, when ok, its
// answer. deadline is when it took effect by the latest: its completion
// if ok, else never.
type call struct {
	inv      *history.Op
	f        string
	req      etcdop.KVRequest
	resp     *etcdop.KVResponse // nil: outcome unknown
	deadline time.Duration
}

// served is an ok serializable range.
type served struct {
	inv, done *history.Op
	op        etcdop.KVOp
	resp      etcdop.KVResponse
}

// watch is a watch and the responses it got, in order.
type watch struct {
	inv *history.Op
	req etcdop.WatchRequest
	res etcdop.WatchResult
}

const forever = time.Duration(math.MaxInt64)

// Check judges a history of etcd's KV store, leases and watches against
// etcd's documented guarantees (see the package documentation), by brute
// force: it tries every order of the writes and linearizable ranges that
// real time allows, each write of unknown outcome in every place or in
// none, and asks whether one such order of store states explains every
// ok answer, every watch's stream and every serializable read. It refuses
// (an error) what it does not model: transactions, keep-alives, leases
// that may expire within the history, compaction.
func Check(h []history.Op) (Result, error) {
	var calls []call
	var reads []served
	var watches []watch
	var end time.Duration
	for _, op := range h {
		end = max(end, op.Time)
	}
	for _, p := range history.Pairs(h, func(op *history.Op) bool { return op.Process >= 0 }) {
		failed := p.Done != nil && p.Done.Type == history.Fail
		ok := p.Done != nil && p.Done.Type == history.Ok
		switch p.Inv.F {
		case etcdop.FWatch:
			if p.Done == nil || failed || len(p.Done.Value) == 0 {
				continue
			}
			w := watch{inv: p.Inv}
			if err := decode(p, &w.req, &w.res); err != nil {
				return Result{}, err
			}
			watches = append(watches, w)
			continue
		case etcdop.FPut, etcdop.FDelete, etcdop.FRange, etcdop.FRangeSerializable, etcdop.FLeaseGrant, etcdop.FLeaseRevoke:
		default:
			return Result{}, fmt.Errorf("op #%d: the oracle does not model %s", p.Inv.Index, p.Inv.F)
		}
		c := call{inv: p.Inv, f: p.Inv.F, deadline: forever}
		if err := p.Inv.Decode(&c.req); err != nil {
			return Result{}, err
		}
		if !slices.Contains([]string{etcdop.FLeaseGrant, etcdop.FLeaseRevoke}, c.f) && (len(c.req.Then) != 1 || len(c.req.If)+len(c.req.Else) > 0) {
			return Result{}, fmt.Errorf("op #%d %s: expected one operation", p.Inv.Index, c.f)
		}
		if c.f == etcdop.FLeaseGrant && p.Inv.Time+time.Duration(c.req.TTL)*time.Second <= end {
			return Result{}, fmt.Errorf("op #%d: a lease that may expire within the history", p.Inv.Index)
		}
		if failed || !ok && (c.f == etcdop.FRange || c.f == etcdop.FRangeSerializable || c.f == etcdop.FLeaseGrant) {
			// Failed: no effect. A range of unknown answer tells
			// nothing; nor does a grant whose lease nobody learnt.
			continue
		}
		if ok {
			c.resp = &etcdop.KVResponse{}
			if err := p.Done.Decode(c.resp); err != nil {
				return Result{}, err
			}
			c.deadline = p.Done.Time
		}
		if c.f == etcdop.FRangeSerializable {
			if len(c.resp.Results) != 1 {
				return Result{}, fmt.Errorf("op #%d: a range answered with %d results", p.Done.Index, len(c.resp.Results))
			}
			reads = append(reads, served{inv: p.Inv, done: p.Done, op: c.req.Then[0], resp: *c.resp})
			continue
		}
		calls = append(calls, c)
	}
	if len(calls) > 64 {
		return Result{}, fmt.Errorf("%d operations: too many for brute force", len(calls))
	}
	for _, w := range watches {
		if why := w.alone(); why != "" {
			return Result{Why: why}, nil
		}
	}
	if why := membersForward(reads); why != "" {
		return Result{Why: why}, nil
	}
	x := &search{calls: calls, reads: reads, watches: watches}
	if x.extend(NewStore(), 0, math.MinInt64, nil) {
		return Result{Valid: true, Orders: x.orders}, nil
	}
	if x.orders == 0 {
		return Result{Why: "linearizable: no order of the operations that real time allows explains every ok write's and linearizable range's answer"}, nil
	}
	return Result{Why: x.why, Orders: x.orders}, nil
}

func decode(p history.Pair, req, res any) error {
	if err := p.Inv.Decode(req); err != nil {
		return err
	}
	return p.Done.Decode(res)
}

// search tries the orders of calls.
type search struct {
	calls   []call
	reads   []served
	watches []watch
	orders  int
	why     string // why the first whole order failed
}

// step is one call placed in an order: at the earliest instant it can
// take effect there, and the store after it.
type step struct {
	call  int
	at    time.Duration
	after Store
}

// extend tries every way to go on from path, at store s, placed being
// the calls in it and at the instant of the last: it places next any call
// whose interval allows it (no earlier than at, no later than its
// deadline, and no call still to place left with a deadline passed) and
// whose answer the store gives. When every call of known answer is
// placed, the calls of unknown outcome not placed never took effect, and
// the order is judged whole. The instants are the earliest each call can
// have: any other instants that fit the intervals are later, call by
// call, so a bound on when a revision was made holds for some instants
// exactly when it holds for these.
func (x *search) extend(s Store, placed uint64, at time.Duration, path []step) bool {
	complete := true
	for i, c := range x.calls {
		complete = complete && (c.resp == nil || placed&(1<<i) != 0)
	}
	if complete {
		x.orders++
		why := x.judge(path)
		if why == "" {
			return true
		}
		if x.why == "" {
			x.why = why
		}
	}
next:
	for i, c := range x.calls {
		if placed&(1<<i) != 0 {
			continue
		}
		t := max(at, c.inv.Time)
		if t > c.deadline {
			continue
		}
		for j, d := range x.calls {
			if j != i && placed&(1<<j) == 0 && d.deadline < t {
				continue next // j could never be placed after i
			}
		}
		after, want, refused := s.Apply(c.f, c.req, leaseOf(c))
		switch {
		case c.resp == nil && (refused || after.Rev == s.Rev && len(after.Leases) == len(s.Leases)):
			continue // of unknown outcome and no effect here: as if never applied
		case c.resp != nil && (refused || !sameAnswer(c.f, *c.resp, want)):
			continue
		}
		if x.extend(after, placed|1<<i, t, append(path, step{i, t, after})) {
			return true
		}
	}
	return false
}

// leaseOf is the lease a grant created, as its answer names it.
func leaseOf(c call) int64 {
	if c.resp == nil {
		return 0
	}
	return c.resp.Lease
}

// sameAnswer says whether an ok answer is the one the store gives: the
// revision in the header, and what the request asks for: a range's keys,
// a delete's count, a grant's lease.
func sameAnswer(f string, got, want etcdop.KVResponse) bool {
	if got.Revision != want.Revision {
		return false
	}
	switch f {
	case etcdop.FRange:
		return len(got.Results) == 1 && slices.Equal(got.Results[0].KVs, want.Results[0].KVs)
	case etcdop.FDelete:
		return len(got.Results) == 1 && got.Results[0].Deleted == want.Results[0].Deleted
	}
	return true
}

// timeline is what an order made: the store at each revision and the
// earliest instant the revision existed.
type timeline struct {
	at    map[int64]Store
	made  map[int64]time.Duration
	final int64
}

func (x *search) timeline(path []step) timeline {
	init := NewStore()
	tl := timeline{at: map[int64]Store{init.Rev: init}, made: map[int64]time.Duration{init.Rev: math.MinInt64}, final: init.Rev}
	for _, st := range path {
		if _, ok := tl.at[st.after.Rev]; !ok {
			tl.at[st.after.Rev], tl.made[st.after.Rev], tl.final = st.after, st.at, st.after.Rev
		}
	}
	return tl
}

// judge says what in the history the order of path cannot explain: a
// serializable read or a watch; "" if nothing.
func (x *search) judge(path []step) string {
	tl := x.timeline(path)
	for _, r := range x.reads {
		if why := tl.serves(r); why != "" {
			return why
		}
	}
	for _, w := range x.watches {
		if why := tl.delivers(w); why != "" {
			return why
		}
	}
	return ""
}

// existed says whether revision rev was made by time t.
func (tl timeline) existed(rev int64, t time.Duration) bool {
	made, ok := tl.made[rev]
	return ok && made <= t
}

// serves judges a serializable read: a member answers from its own store
// at the revision in the header, which the cluster had made by the time
// the answer came (a member applies only what the cluster committed), so
// its keys are the store's at that revision.
func (tl timeline) serves(r served) string {
	rev := r.resp.Revision
	if !tl.existed(rev, r.done.Time) {
		return fmt.Sprintf("serializable-future: serializable read #%d answered at revision %d, which did not exist by its answer", r.inv.Index, rev)
	}
	if want := tl.at[rev].Range(r.op.Key, r.op.End); !slices.Equal(r.resp.Results[0].KVs, want) {
		return fmt.Sprintf("serializable-keys: serializable read #%d got %v at revision %d, where the store had %v", r.inv.Index, r.resp.Results[0].KVs, rev, want)
	}
	return ""
}

// membersForward finds a member whose revision went back: a serializable
// read answered at r completed before another read of the same member
// was invoked, which was answered below r. A member's store only moves
// forward.
func membersForward(reads []served) string {
	for _, a := range reads {
		for _, b := range reads {
			if a.resp.Member == b.resp.Member && a.done.Time < b.inv.Time && b.resp.Revision < a.resp.Revision {
				return fmt.Sprintf("member-back: member %s answered read #%d at revision %d, then read #%d at %d", a.resp.Member, a.inv.Index, a.resp.Revision, b.inv.Index, b.resp.Revision)
			}
		}
	}
	return ""
}
