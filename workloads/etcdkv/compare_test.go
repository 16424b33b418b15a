package etcdkv

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/ops/etcdop"
	"github.com/chaos-testing/chaos/targets/etcd"
	"github.com/chaos-testing/chaos/workloads/etcdclient"
)

// TestComparesOnEtcd sends the conditions the workload records to a real
// etcd and checks that etcd judges them as the etcd-kv model is written
// to (analysis TestEtcdCompareRanges checks the model on cases of the
// same kinds): a condition over a range holds when every key there meets
// it, over an empty range as for a missing key; the scan-put's guard
// always holds.
func TestComparesOnEtcd(t *testing.T) {
	_, nodes := testenv.Cluster(t, testenv.Bind(t, etcd.Kind{}, 3, ""), "etcdkv")
	cli, err := etcdclient.Connect(net.JoinHostPort(nodes[0].Container.IP, strconv.Itoa(etcd.ClientPort)))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	put := func(key string) int64 {
		resp, err := call(ctx, cli, etcdop.FPut, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FPut, Key: key, Value: "v"}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Revision
	}
	a := put(keyName(0))
	b := put(keyName(1))
	for _, c := range []struct {
		c    etcdop.KVCompare
		want bool
	}{
		{scanGuard, true},
		{etcdop.KVCompare{Key: prefix, End: prefixEnd, Target: etcdop.CompareMod, Op: etcdop.CompareLess, Rev: b}, false},
		{etcdop.KVCompare{Key: prefix, End: prefixEnd, Target: etcdop.CompareMod, Op: etcdop.CompareLess, Rev: b + 1}, true},
		{etcdop.KVCompare{Key: prefix, End: prefixEnd, Target: etcdop.CompareVersion, Op: etcdop.CompareGreater, Rev: 0}, true},
		{etcdop.KVCompare{Key: "/kw/", End: "/kx", Target: etcdop.CompareMod, Op: etcdop.CompareLess, Rev: 1}, true},
		{etcdop.KVCompare{Key: "/kw/", End: "/kx", Target: etcdop.CompareMod, Rev: 1}, false},
		{etcdop.KVCompare{Key: "/kw/", End: "/kx", Target: etcdop.CompareValue, Value: ""}, false},
		{etcdop.KVCompare{Key: keyName(1), End: "\x00", Target: etcdop.CompareMod, Op: etcdop.CompareGreater, Rev: a}, true},
		{etcdop.KVCompare{Key: keyName(0), End: "\x00", Target: etcdop.CompareMod, Op: etcdop.CompareGreater, Rev: a}, false},
		{etcdop.KVCompare{Key: keyName(0), Target: etcdop.CompareMod, Op: etcdop.CompareNotEqual, Rev: a}, false},
		{etcdop.KVCompare{Key: keyName(9), Target: etcdop.CompareVersion, Rev: 0}, true},
	} {
		// Then reads, so that no condition changes the store.
		resp, err := call(ctx, cli, etcdop.FKVTxn, etcdop.KVRequest{If: []etcdop.KVCompare{c.c}, Then: []etcdop.KVOp{{F: etcdop.FRange, Key: keyName(0)}}})
		if err != nil {
			t.Fatalf("%+v: %v", c.c, err)
		}
		if resp.Succeeded != c.want {
			t.Errorf("%+v: etcd says %v, want %v", c.c, resp.Succeeded, c.want)
		}
	}
}
