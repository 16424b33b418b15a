package register

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/etcdclient"
)

func init() {
	workloads.Workloads.Register("etcd-register", Workload{TargetKind: "etcd", ReadModes: []string{"linearizable", "serializable"}, Open: openEtcd, Modules: []string{etcdclient.Module}})
}

// etcdStore is a register on etcd keys, values as decimal strings.
type etcdStore struct {
	cli  *clientv3.Client
	read []clientv3.OpOption // how Read reads: linearizable or serializable
}

func openEtcd(cfg workloads.Config) (Store, error) {
	var read []clientv3.OpOption
	switch params(cfg).ReadMode {
	case "", "linearizable":
	case "serializable":
		// Served from the member's local state: may be stale, which is
		// what a plan choosing it wants the checker to catch.
		read = append(read, clientv3.WithSerializable())
	default:
		return nil, fmt.Errorf("etcd-register: read_mode %q: want linearizable or serializable", params(cfg).ReadMode)
	}
	cli, err := etcdclient.Connect(cfg.Node())
	if err != nil {
		return nil, fmt.Errorf("etcd-register: %w", err)
	}
	return &etcdStore{cli: cli, read: read}, nil
}

func (s *etcdStore) Read(ctx context.Context, key string) (*int64, error) {
	resp, err := s.cli.Get(ctx, key, s.read...)
	if err != nil {
		return nil, err
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	v, err := strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64)
	if err != nil {
		return nil, BadValue{Raw: string(resp.Kvs[0].Value)}
	}
	return &v, nil
}

func (s *etcdStore) Write(ctx context.Context, key string, v int64) error {
	if err := s.connected(ctx); err != nil {
		return err
	}
	_, err := s.cli.Put(ctx, key, strconv.FormatInt(v, 10))
	return classify(err)
}

func (s *etcdStore) Cas(ctx context.Context, key string, from, to int64) error {
	if err := s.connected(ctx); err != nil {
		return err
	}
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.Value(key), "=", strconv.FormatInt(from, 10))).
		Then(clientv3.OpPut(key, strconv.FormatInt(to, 10))).
		Commit()
	if err != nil {
		return classify(err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("%w: %s is not %d", workloads.ErrNotApplied, key, from)
	}
	return nil
}

func (s *etcdStore) Close() error { return s.cli.Close() }

// classify marks the errors after which a sent write certainly did not
// happen. Everything else (timeouts, a connection lost after sending,
// "request timed out" from a server whose proposal may still commit) stays
// unknown.
func classify(err error) error {
	if err == nil || !notApplied(err) {
		return err
	}
	return fmt.Errorf("%w: %v", workloads.ErrNotApplied, err)
}

func notApplied(err error) bool {
	// The server refuses these before proposing the request to Raft.
	if errors.Is(err, rpctypes.ErrTooManyRequests) || errors.Is(err, rpctypes.ErrRequestTooLarge) ||
		errors.Is(err, rpctypes.ErrNoSpace) {
		return true
	}
	// Raft dropped the proposal before it entered any log (a leader handing
	// over leadership, or over its limit of uncommitted entries); etcd
	// passes that on as an unknown gRPC error with raft's message.
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.Unknown && st.Message() == "raft proposal dropped"
}

// connected waits, within ctx, for the connection to the node to be up.
// The etcd client has gRPC hold a request until a connection is up, and a
// request that waited in vain fails just like one whose answer was lost
// (deadline exceeded), so a write is only handed over once connected: a
// write refused here was certainly never sent.
func (s *etcdStore) connected(ctx context.Context) error {
	conn := s.cli.ActiveConnection()
	for st := conn.GetState(); st != connectivity.Ready; st = conn.GetState() {
		conn.Connect() // an idle connection (none yet) starts connecting
		if !conn.WaitForStateChange(ctx, st) {
			return fmt.Errorf("%w: not connected to %s (%s)", workloads.ErrNotApplied, s.cli.Endpoints()[0], st)
		}
	}
	return nil
}
