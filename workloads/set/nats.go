package set

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/stream"
	"github.com/chaos-testing/chaos/ops/setop"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/natsclient"
)

func init() {
	workloads.Register[Params]("nats-stream", Workload{Backend: workloads.Backend{TargetKind: "nats", Modules: []string{natsclient.Module}}, Open: openStream, Also: []analysis.Checker{stream.OrderChecker{}}, Pads: true, Replicates: true})
}

const (
	// streamName is the stream the clients publish to, on disk, on as
	// many servers as the plan's replicas says; subject is its one subject.
	streamName, subject = "CHAOS", "chaos.stream"
	// fetchBatch is how many messages a final read asks for at a time.
	fetchBatch = 1000
	// notFoundTries is how many answers must say the stream is gone.
	notFoundTries = 3
	// unservedPause is the wait before a fetch that nobody answered is
	// made again.
	unservedPause = 200 * time.Millisecond
)

// streamStore is a JetStream stream as a set: an add publishes a unique
// number and waits for the stream's acknowledgment; a read reads the
// whole stream in order with an ordered consumer.
type streamStore struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	node    string // the server the client is bound to
	payload int    // the size of a message, its number padded with filler
}

func openStream(ctx context.Context, cfg Client) (Store, error) {
	nc, js, err := natsclient.Connect(cfg.Node())
	if err != nil {
		return nil, fmt.Errorf("nats-stream: %w", err)
	}
	replicas := cfg.Params.Replicas
	if replicas == 0 {
		replicas = len(cfg.Nodes)
	}
	err = natsclient.Stream(ctx, js, jetstream.StreamConfig{Name: streamName, Subjects: []string{subject}, Storage: jetstream.FileStorage, Replicas: replicas}, cfg.Process == 0)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("nats-stream: %s: %w", cfg.Node(), err)
	}
	host, _, _ := net.SplitHostPort(cfg.Node())
	return &streamStore{nc: nc, js: js, node: host, payload: cfg.Params.Payload}, nil
}

// Add publishes v and waits for the stream to acknowledge it, with the
// sequence it stored v at.
func (s *streamStore) Add(ctx context.Context, v int64) (Added, error) {
	a := Added{Node: s.node}
	if err := natsclient.Ready(ctx, s.nc); err != nil {
		return a, err
	}
	ack, err := s.js.Publish(ctx, subject, pad(v, s.payload))
	if err == nil {
		a.Seq = ack.Sequence
	}
	return a, natsclient.Classify(err)
}

// Read reads the stream whole, in order, up to the last message it held
// when the read began. A stream that no longer exists holds nothing: its
// messages are lost, which the set checker must see, not a failed read;
// since one server's answer may come from a state it has not caught up
// yet, the stream counts as gone only when notFoundTries answers a
// second apart say so. An ordered consumer delivers every message the
// stream serves, in stream order, and starts over where it stopped when
// one goes missing in delivery; so stream sequence numbers it skipped
// before the last are messages the stream did not serve, holes the read
// records (clients here never delete). A fetch that nobody answered is
// made again, from where the last one stopped. A read that ends before the last
// (a consumer on a lagging replica), or got fewer messages than the
// stream counted without a hole, fails.
func (s *streamStore) Read(ctx context.Context) (Snapshot, error) {
	snap := Snapshot{Node: s.node}
	if err := natsclient.Ready(ctx, s.nc); err != nil {
		return snap, err
	}
	var st jetstream.Stream
	var err error
	for try := 1; ; try++ {
		st, err = s.js.Stream(ctx, streamName)
		if !errors.Is(err, jetstream.ErrStreamNotFound) {
			break
		}
		if try == notFoundTries {
			snap.Values = []int64{}
			return snap, nil
		}
		if !sleep(ctx, time.Second) {
			return snap, fmt.Errorf("stream %s not found, not yet for certain: %w", streamName, ctx.Err())
		}
	}
	if err != nil {
		return snap, fmt.Errorf("stream info: %w", err)
	}
	state := st.CachedInfo().State
	vs := []int64{}
	if state.Msgs == 0 {
		snap.Values = vs
		return snap, nil
	}
	cons, err := s.js.OrderedConsumer(ctx, streamName, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return snap, fmt.Errorf("ordered consumer: %w", err)
	}
	var holes setop.SeqRanges
	// seqs are the stream sequences of vs, recorded so that the
	// stream-order checker sees where each message sat in the log.
	var seqs []uint64
	next := state.FirstSeq // the stream sequence the read expects next
	// unserved counts fetches that nobody answered: each fetch of an
	// ordered consumer creates a server-side consumer anew from where the
	// last left off, and after a server rejoined the cluster the new one
	// was sometimes not served yet; the next fetch tries another.
	unserved := 0
	for {
		wait := time.Second
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(dl))
		}
		if wait <= 0 {
			return snap, fmt.Errorf("read %d of the stream's %d messages (%d fetches served by nobody): %w", len(vs), state.Msgs, unserved, context.DeadlineExceeded)
		}
		batch, err := cons.Fetch(fetchBatch, jetstream.FetchMaxWait(wait))
		if errors.Is(err, nats.ErrNoResponders) {
			unserved++
			sleep(ctx, unservedPause)
			continue
		}
		if err != nil {
			return snap, fmt.Errorf("fetch after %d of the stream's %d messages: %w", len(vs), state.Msgs, err)
		}
		for m := range messagesUntil(ctx, batch.Messages()) {
			md, err := m.Metadata()
			if err != nil {
				return snap, fmt.Errorf("message metadata: %w", err)
			}
			seq := md.Sequence.Stream
			v, err := unpad(m.Data())
			if err != nil {
				return snap, fmt.Errorf("message %d of the stream begins %q, not with a number", seq, m.Data()[:min(len(m.Data()), 32)])
			}
			vs = append(vs, v)
			seqs = append(seqs, seq)
			holes.Add(next, seq-1)
			next = max(next, seq+1)
			if seq < state.LastSeq && md.NumPending == 0 {
				// A consumer on a replica that lags ends early: not a hole.
				return snap, fmt.Errorf("read %d of the stream's %d messages: the consumer ended at sequence %d, before the stream's last, %d", len(vs), state.Msgs, seq, state.LastSeq)
			}
			if seq >= state.LastSeq {
				if uint64(len(vs)) < state.Msgs && len(holes) == 0 {
					return snap, fmt.Errorf("read %d of the stream's %d messages: some were missed in delivery", len(vs), state.Msgs)
				}
				snap.Values, snap.Seqs = vs, seqs
				if len(holes) > 0 {
					snap.Holes = fmt.Sprintf("stream sequences %s not served, of %d to %d (the stream counted %d messages, %d deleted)",
						holes, state.FirstSeq, state.LastSeq, state.Msgs, state.NumDeleted)
				}
				return snap, nil
			}
		}
		if err := ctx.Err(); err != nil {
			return snap, fmt.Errorf("read %d of the stream's %d messages: %w", len(vs), state.Msgs, err)
		}
		if err := batch.Error(); errors.Is(err, nats.ErrNoResponders) {
			unserved++
			sleep(ctx, unservedPause)
		} else if err != nil && !errors.Is(err, nats.ErrTimeout) {
			return snap, fmt.Errorf("fetch after %d of the stream's %d messages: %w", len(vs), state.Msgs, err)
		}
	}
}

// sleep waits d, or less if ctx ends first: false then.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// pad is v's message: its number, then a space and filler up to size
// bytes.
func pad(v int64, size int) []byte {
	b := strconv.AppendInt(nil, v, 10)
	if len(b)+1 >= size {
		return b
	}
	return append(append(b, ' '), bytes.Repeat([]byte{'.'}, size-len(b)-1)...)
}

// unpad is the number of a message pad made.
func unpad(b []byte) (int64, error) {
	num, _, _ := bytes.Cut(b, []byte{' '})
	return strconv.ParseInt(string(num), 10, 64)
}

// messagesUntil passes on a fetch's messages until they end or ctx does:
// an ordered consumer that keeps recreating itself (on a server whose
// stream went bad) may never end the fetch's channel.
func messagesUntil(ctx context.Context, msgs <-chan jetstream.Msg) iter.Seq[jetstream.Msg] {
	return func(yield func(jetstream.Msg) bool) {
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-msgs:
				if !ok || !yield(m) {
					return
				}
			}
		}
	}
}

func (s *streamStore) Close() error {
	s.nc.Close()
	return nil
}
