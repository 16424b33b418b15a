package register

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/natsclient"
)

func init() {
	backend := workloads.Backend{TargetKind: "nats", Modules: []string{natsclient.Module}, CheckTarget: checkedSince}
	register("nats-register", Workload{Backend: backend, ReadModes: []string{"leader", "direct", "checked"}, Open: openNATS})
}

// checkedSince refuses checked reads on servers before v2.11.0, which
// ignore the header that names the subject a check is of, and would
// check the check's own subject instead.
func checkedSince(s workloads.Setting, readMode string) error {
	if readMode != "checked" {
		return nil
	}
	return s.Since("v2.11.0", "the Nats-Expected-Last-Subject-Sequence-Subject header (checked reads)")
}

const (
	// natsBucket is the KV bucket that holds the registers, a stream of
	// its own (KV_chaos) replicated on every server of the cluster.
	natsBucket = "chaos"
	// natsChecks is the key that checked reads publish their checks to;
	// no register uses it.
	natsChecks = "_checks"
)

// natsStore is a register on the keys of a JetStream KV bucket, values as
// decimal strings. readMode is how Read reads:
//   - leader: the stream's "get message" API, which its leader answers;
//   - direct: a direct get, which any replica answers from its own copy
//     (KV buckets allow them by default), and which NATS does not promise
//     to be current;
//   - checked: as leader, then confirmed through the stream's log: a check
//     published with the key's subject and the sequence read as its
//     expected last subject sequence, which the stream stores only if the
//     key was still at that sequence as it took the check in its order.
//     A leader deposed without knowing it answers gets from its stale
//     copy (NATS's ADR-53 says so), but cannot commit a check.
type natsStore struct {
	nc       *nats.Conn
	js       jetstream.JetStream
	kv       jetstream.KeyValue
	readMode string
}

func openNATS(ctx context.Context, cfg Client) (Store, error) {
	switch cfg.Params.ReadMode {
	case "", "leader", "direct", "checked":
	default:
		return nil, fmt.Errorf("nats-register: read_mode %q: want leader, direct or checked", cfg.Params.ReadMode)
	}
	nc, js, err := natsclient.Connect(cfg.Node())
	if err != nil {
		return nil, fmt.Errorf("nats-register: %w", err)
	}
	// Every key keeps its last value only, on disk, on every server.
	kv, err := natsclient.Bucket(ctx, js, jetstream.KeyValueConfig{Bucket: natsBucket, History: 1, Storage: jetstream.FileStorage, Replicas: len(cfg.Nodes)})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("nats-register: %s: %w", cfg.Node(), err)
	}
	return &natsStore{nc: nc, js: js, kv: kv, readMode: cfg.Params.ReadMode}, nil
}

func (s *natsStore) Read(ctx context.Context, key string) (*int64, error) {
	data, rev, absent, err := s.get(ctx, key)
	if err == nil && s.readMode == "checked" {
		err = s.check(ctx, key, rev)
	}
	if err != nil || absent {
		return nil, err
	}
	v, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		return nil, BadValue{Raw: string(data)}
	}
	return &v, nil
}

// get reads key as readMode says: its value and revision, or absent.
func (s *natsStore) get(ctx context.Context, key string) (data []byte, revision uint64, absent bool, err error) {
	if err := natsclient.Ready(ctx, s.nc); err != nil {
		return nil, 0, false, err
	}
	if s.readMode == "direct" {
		e, err := s.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil, 0, true, nil
		}
		if err != nil {
			return nil, 0, false, err
		}
		return e.Value(), e.Revision(), false, nil
	}
	// The stream's get-message API, answered by its leader, whatever the
	// bucket allows.
	m, err := natsclient.LastBySubject(ctx, s.nc, "KV_"+natsBucket, "$KV."+natsBucket+"."+key)
	switch {
	case err != nil:
		return nil, 0, false, err
	case m == nil:
		return nil, 0, true, nil
	case bytes.Contains(m.Hdrs, []byte("KV-Operation")):
		// A delete or purge marker; nothing deletes. (Other headers, such
		// as the expected revision an update was sent with, are kept with
		// the value.)
		return nil, 0, false, fmt.Errorf("get of %s: a marker %q", key, m.Hdrs)
	}
	return m.Data, m.Seq, false, nil
}

// check confirms that key's last message is still at sequence rev (0:
// none) by a publish that the stream stores only if it is, in the order
// of its log: a refusal makes the read fail.
func (s *natsStore) check(ctx context.Context, key string, rev uint64) error {
	m := nats.NewMsg("$KV." + natsBucket + "." + natsChecks)
	m.Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, "$KV."+natsBucket+"."+key)
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(rev, 10))
	_, err := s.js.PublishMsg(ctx, m)
	if err != nil {
		return fmt.Errorf("check of %s at revision %d: %w", key, rev, err)
	}
	return nil
}

func (s *natsStore) Write(ctx context.Context, key string, v int64) error {
	if err := natsclient.Ready(ctx, s.nc); err != nil {
		return err
	}
	_, err := s.kv.Put(ctx, key, []byte(strconv.FormatInt(v, 10)))
	return natsclient.Classify(err)
}

// Cas reads the key's value and revision, then updates it only at that
// revision: a write in between makes the stream's leader refuse it.
func (s *natsStore) Cas(ctx context.Context, key string, from, to int64) error {
	data, rev, absent, err := s.get(ctx, key)
	switch {
	case err != nil:
		// Nothing was written yet.
		return fmt.Errorf("%w: reading %s: %v", workloads.ErrNotApplied, key, err)
	case absent:
		return fmt.Errorf("%w: %s does not exist", workloads.ErrNotApplied, key)
	case string(data) != strconv.FormatInt(from, 10):
		return fmt.Errorf("%w: %s is %q, not %d", workloads.ErrNotApplied, key, data, from)
	}
	_, err = s.kv.Update(ctx, key, []byte(strconv.FormatInt(to, 10)), rev)
	return natsclient.Classify(err)
}

func (s *natsStore) Close() error {
	s.nc.Close()
	return nil
}
