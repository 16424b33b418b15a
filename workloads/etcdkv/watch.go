package etcdkv

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/workloads"
)

// watchSpan is how long one watch runs before the watcher ends it and
// resumes with a new one, so that every history holds many resumptions.
const watchSpan = 5 * time.Second

// progressEvery is how often a watcher asks for a progress notification.
const progressEvery = time.Second

// watcher watches every key of the workload on its client's member, as
// etcd's robustness tests do: each watch from the revision after the last
// one it got to, the first from revision 1, half of them with prev_kv, all
// asking for progress notifications. Every watch is one operation whose
// completion holds each response with the time it came.
type watcher struct {
	cli   *clientv3.Client
	h     *history.Appender
	clock history.Clock
	rng   *rand.Rand
	next  int64 // the revision the next watch starts from
}

func (w *watcher) run(ctx context.Context) error {
	w.next = 1
	for ctx.Err() == nil {
		req := history.WatchRequest{Key: prefix, End: prefixEnd, Rev: w.next, PrevKV: w.rng.IntN(2) == 0, Progress: true}
		_, err := workloads.Record(context.Background(), w.h, workloads.Op[*history.WatchResult]{
			F: history.FWatch, Value: req, Timeout: watchSpan + opTimeout,
			Call: func(cctx context.Context) (*history.WatchResult, error) {
				return w.watch(ctx, cctx, req), nil
			},
			Completion: func(res *history.WatchResult, _ error) any { return res },
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// watch runs one watch until the run ends (ctx), its span is over or the
// stream breaks, and returns what it got. It never fails: what came before
// a break is what the watch got, and the break is noted in the result.
func (w *watcher) watch(ctx, cctx context.Context, req history.WatchRequest) *history.WatchResult {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(cctx))
	defer cancel()
	opts := []clientv3.OpOption{clientv3.WithRange(req.End), clientv3.WithRev(req.Rev), clientv3.WithProgressNotify()}
	if req.PrevKV {
		opts = append(opts, clientv3.WithPrevKV())
	}
	ch := w.cli.Watch(wctx, req.Key, opts...)
	res := &history.WatchResult{Responses: []history.WatchResponse{}}
	span := time.NewTimer(watchSpan)
	defer span.Stop()
	progress := time.NewTicker(progressEvery)
	defer progress.Stop()
	for {
		select {
		case <-ctx.Done():
			return res
		case <-span.C:
			return res
		case <-progress.C:
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
		}
	}
}

// response records one response and moves the next start past it.
func (w *watcher) response(wr clientv3.WatchResponse) history.WatchResponse {
	r := history.WatchResponse{Time: w.clock.Now(), Revision: wr.Header.Revision, Progress: wr.IsProgressNotify(),
		Compacted: wr.CompactRevision, Canceled: wr.Canceled}
	for _, e := range wr.Events {
		ev := history.WatchEvent{Type: "put", KV: kvs([]*mvccpb.KeyValue{e.Kv})[0]}
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
	return r
}
