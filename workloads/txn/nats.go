package txn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/natsclient"
)

func init() {
	backend := workloads.Backend{TargetKind: "nats", Modules: []string{natsclient.Module}, CheckTarget: atomicBatches}
	Register("nats", Workload{Backend: backend, ReadModes: []string{"batch"}, Open: openNATS})
}

// atomicBatches refuses servers before v2.12.0, which have no atomic
// batch publish: they would store a batch's messages one by one.
func atomicBatches(s workloads.Setting, _ string) error {
	return s.Since("v2.12.0", "atomic batch publish")
}

const (
	// natsStream holds one subject per key, its last message the key's
	// value, and the subject the checks of keys only read are sent on.
	natsStream  = "TXN"
	natsKeys    = "txn.k."
	natsChecked = "txn.checked"
)

// natsStore runs transactions on a JetStream stream, with the atomic
// batch publish of NATS 2.12 (ADR-50): it reads each key's last message
// from the stream's leader, then publishes one batch that the stream
// stores whole or not at all: each written key's new value with the
// sequence read as its expected last subject sequence, and for each key
// only read, a check on natsChecked naming that key's subject and the
// sequence read. The stream refuses the batch if any key changed since
// it was read. A read-only transaction publishes its checks too: its
// reads, one at a time, are a snapshot only if nothing changed by then.
type natsStore struct {
	nc *nats.Conn
	js jetstream.JetStream
}

func openNATS(ctx context.Context, cfg Client, _ Model) (Store, error) {
	nc, js, err := natsclient.Connect(cfg.Node())
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	err = natsclient.Stream(ctx, js, jetstream.StreamConfig{
		Name: natsStream, Subjects: []string{"txn.>"}, Storage: jetstream.FileStorage, Replicas: len(cfg.Nodes),
		MaxMsgsPerSubject: 1, AllowAtomicPublish: true,
	}, cfg.Process == 0)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("nats: %s: %w", cfg.Node(), err)
	}
	return &natsStore{nc: nc, js: js}, nil
}

func (s *natsStore) Txn(ctx context.Context, steps []Step) error {
	if err := natsclient.Ready(ctx, s.nc); err != nil {
		return err
	}
	keys := Keys(steps)
	state := map[string][]int64{}
	seqs := map[string]uint64{} // each key's last sequence, 0 for none
	for _, k := range keys {
		m, err := natsclient.LastBySubject(ctx, s.nc, natsStream, natsKeys+k)
		if err != nil {
			return fmt.Errorf("%w: reading %s: %w", workloads.ErrNotApplied, k, err)
		}
		if m == nil {
			continue
		}
		if state[k], err = DecodeList(m.Data); err != nil {
			return err
		}
		seqs[k] = m.Seq
	}
	written := Apply(steps, state)
	batch := make([]*nats.Msg, len(keys))
	for i, k := range keys {
		m := nats.NewMsg(natsChecked)
		if l, ok := written[k]; ok {
			m = nats.NewMsg(natsKeys + k)
			m.Data = []byte(EncodeList(l))
		} else {
			m.Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, natsKeys+k)
		}
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(seqs[k], 10))
		batch[i] = m
	}
	return s.publish(ctx, batch)
}

// publish sends msgs as one atomic batch: every message but the last
// without waiting, the last with the commit header, whose acknowledgement
// says whether the stream stored the batch.
func (s *natsStore) publish(ctx context.Context, msgs []*nats.Msg) error {
	id := make([]byte, 12)
	rand.Read(id)
	for i, m := range msgs {
		m.Header.Set("Nats-Batch-Id", hex.EncodeToString(id))
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i+1))
		if i < len(msgs)-1 {
			if err := s.nc.PublishMsg(m); err != nil {
				return fmt.Errorf("%w: batch message %d: %w", workloads.ErrNotApplied, i+1, err)
			}
		}
	}
	last := msgs[len(msgs)-1]
	last.Header.Set("Nats-Batch-Commit", "1")
	_, err := s.js.PublishMsg(ctx, last)
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jsErrIncompleteBatch {
		return fmt.Errorf("%w: %w", workloads.ErrNotApplied, err)
	}
	return natsclient.Classify(err)
}

// jsErrIncompleteBatch is the stream's refusal of a batch it did not get
// whole (a message lost, or sent to a leader that has since changed),
// which it gives before it proposes anything (processJetStreamBatchMsg in
// nats-server's stream.go).
const jsErrIncompleteBatch = 10176

func (s *natsStore) Close() error {
	s.nc.Close()
	return nil
}
