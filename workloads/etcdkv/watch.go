package etcdkv

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
	"github.com/chaos-testing/chaos/workloads"
)

// progressEvery is how often a watcher asks for a progress notification.
const progressEvery = time.Second

// watcher watches every key of the workload on its client's member, as
// etcd's robustness tests do: each watch from the revision after the last
// one it got to, the first from revision 1, half of them with prev_kv,
// half requiring a leader (the others wait on a member cut off, and see it
// come back: etcd #15271's watches went back in time there), all asking
// for progress notifications. Every watch is one operation whose
// completion holds each response with the time it came.
type watcher struct {
	cli   *clientv3.Client
	h     *history.Appender
	clock history.Clock
	rng   *rand.Rand
	next  int64 // the revision the next watch starts from
	// progress asks for progress notifications every progressEvery.
	progress bool
	// span is how long one watch runs before the watcher ends it and
	// resumes with a new one (the plan's watch_span).
	span    time.Duration
	watches int // opened so far
	// fromCompacted starts each watch at the member's compaction
	// revision (the plan's watch_from: compacted); compacted says the
	// last watch was answered that its start was compacted.
	fromCompacted, compacted bool
}

// The plan's watch_from.
const (
	watchFromLast      = "last"
	watchFromCompacted = "compacted"
)

func (w *watcher) run(ctx context.Context) error {
	w.next = 1
	for ctx.Err() == nil {
		broke, err := w.record(ctx, 0)
		if err != nil {
			return err
		}
		if w.fromCompacted && !w.compacted {
			w.next = 1 // to be told the compaction revision, and open there next
		}
		if broke { // a member without a leader cancels at once: not a hot loop
			select {
			case <-ctx.Done():
			case <-time.After(retryAfter):
			}
		}
	}
	return w.catchUp()
}

// retryAfter spaces a watch from the one that broke before it.
const retryAfter = 200 * time.Millisecond

// catchUpTime bounds the final watch.
const catchUpTime = 10 * time.Second

// catchUp is the watcher's final phase, once the run is over: after the
// writes in flight have had their time, it learns the store's last
// revision and watches until it gets there, so that the watches vouch for
// every revision an answer named (the etcd-kv model relies on it to
// decide writes whose answers were lost).
func (w *watcher) catchUp() error {
	time.Sleep(opTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), catchUpTime)
	defer cancel()
	resp, err := w.cli.Get(ctx, prefix, clientv3.WithRange(prefixEnd), clientv3.WithCountOnly())
	if err != nil {
		return nil // a cluster that cannot answer now: the watches vouch for less
	}
	for ctx.Err() == nil && w.next <= resp.Header.Revision {
		if _, err := w.record(ctx, resp.Header.Revision); err != nil {
			return err
		}
	}
	return nil
}

// record runs one watch as an operation, until ctx ends, its span is over,
// it broke, or (until > 0) it got to revision until; broke says which.
func (w *watcher) record(ctx context.Context, until int64) (broke bool, err error) {
	req := etcdop.WatchRequest{Key: prefix, End: prefixEnd, Rev: w.next, PrevKV: w.rng.IntN(2) == 0, Progress: w.progress, RequireLeader: w.rng.IntN(2) == 0}
	d, err := workloads.Record(context.Background(), w.h, workloads.Op[*etcdop.WatchResult]{
		F: etcdop.FWatch, Value: req, Timeout: w.span + opTimeout,
		Call: func(cctx context.Context) (*etcdop.WatchResult, error) {
			return w.watch(ctx, cctx, req, until), nil
		},
		Completion: func(res *etcdop.WatchResult, _ error) any { return res },
	})
	return d.Result != nil && d.Result.End != "", err
}

// watch runs one watch until ctx ends, its span is over, the stream
// breaks or (until > 0) it got to revision until, and returns what it
// got. It never fails: what came before a break is what the watch got,
// and the break is noted in the result.
func (w *watcher) watch(ctx, cctx context.Context, req etcdop.WatchRequest, until int64) *etcdop.WatchResult {
	if req.RequireLeader {
		cctx = clientv3.WithRequireLeader(cctx)
	}
	// A gRPC stream of its own: the client sends every watch with the same
	// metadata on one stream and hands a progress notification to each
	// watch on it, one opened after the request was sent included (it
	// would then hold a notification its events have not caught up with:
	// seen when a paused member answered requests queued for the watch
	// before). The client keys streams by the context's metadata.
	w.watches++
	cctx = metadata.AppendToOutgoingContext(cctx, "chaos-watch", strconv.Itoa(w.watches))
	wctx, cancel := context.WithCancel(cctx)
	defer cancel()
	opts := []clientv3.OpOption{clientv3.WithRange(req.End), clientv3.WithRev(req.Rev)}
	if req.PrevKV {
		opts = append(opts, clientv3.WithPrevKV())
	}
	var progress <-chan time.Time // none asked: never
	if req.Progress {
		opts = append(opts, clientv3.WithProgressNotify())
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		progress = tick.C
	}
	ch := w.cli.Watch(wctx, req.Key, opts...)
	res := &etcdop.WatchResult{Responses: []etcdop.WatchResponse{}}
	span := time.NewTimer(w.span)
	defer span.Stop()
	for {
		select {
		case <-ctx.Done():
			return res
		case <-span.C:
			return res
		case <-progress:
			// Best effort: a request that fails leaves the stream as it was.
			_ = w.cli.RequestProgress(wctx)
		case wr, ok := <-ch:
			if !ok {
				res.End = "the stream closed"
				return res
			}
			res.Responses = append(res.Responses, w.response(wr))
			if res.Member == "" && wr.Header.MemberId != 0 {
				res.Member = member(&wr.Header)
			}
			if err := wr.Err(); err != nil || wr.Canceled {
				res.End = errors.Join(err, errors.New("canceled")).Error()
				return res
			}
			if until > 0 && w.next > until {
				return res
			}
		}
	}
}

// response records one response and moves the next start past it.
func (w *watcher) response(wr clientv3.WatchResponse) etcdop.WatchResponse {
	r := etcdop.WatchResponse{Time: w.clock.Now(), Revision: wr.Header.Revision, Progress: wr.IsProgressNotify(),
		Compacted: wr.CompactRevision, Canceled: wr.Canceled}
	for _, e := range wr.Events {
		ev := etcdop.WatchEvent{Type: "put", KV: kvs([]*mvccpb.KeyValue{e.Kv})[0]}
		if e.Type == clientv3.EventTypeDelete {
			ev.Type = "delete"
		}
		if e.PrevKv != nil {
			prev := kvs([]*mvccpb.KeyValue{e.PrevKv})[0]
			ev.Prev = &prev
		}
		r.Events = append(r.Events, ev)
		w.next = max(w.next, e.Kv.ModRevision+1)
	}
	switch {
	case r.Progress:
		w.next = max(w.next, r.Revision+1)
	case r.Compacted > 0:
		w.next = max(w.next, r.Compacted) // what came before it is gone
	}
	w.compacted = r.Compacted > 0
	return r
}
