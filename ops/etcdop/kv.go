// Package etcdop is the operation vocabulary of the etcd workloads: key-value
// operations and transactions with etcd's revisions, leases, and watches.
package etcdop

// Operation names of the etcd KV workload, whose every answer carries
// revisions. Range, put and delete are transactions of one operation
// without a condition, as etcd executes them; kv-txn is a transaction with
// conditions and branches. A serializable range is answered by one member
// from its own state, without consensus: it is not linearizable and has
// guarantees of its own.
const (
	FRange             = "range"
	FRangeSerializable = "range-serializable"
	FPut               = "put"
	FDelete            = "delete"
	FKVTxn             = "kv-txn"
	FLeaseGrant        = "lease-grant"
	FLeaseRevoke       = "lease-revoke"
	// FLeaseKeepAlive renews a lease once; it changes no key and no
	// revision. Its answer says whether etcd still had the lease.
	FLeaseKeepAlive = "lease-keepalive"
)

// KVRequest is the invocation value of an etcd KV operation. A range, put or
// delete is its single operation in Then; a kv-txn runs Then when every
// condition in If holds, Else otherwise. A lease operation names its lease.
type KVRequest struct {
	If   []KVCompare `json:"if,omitempty"`
	Then []KVOp      `json:"then,omitempty"`
	Else []KVOp      `json:"else,omitempty"`
	// Lease is the lease a lease-revoke revokes or a lease-keepalive renews.
	Lease int64 `json:"lease,omitempty"`
	// TTL is a lease-grant's time to live, in seconds.
	TTL int64 `json:"ttl,omitempty"`
}

// KVCompare is one condition of a transaction: Target of Key equals Value
// (target "value") or Rev (targets "mod", "create", "version"), or stands
// to Rev as Op says. A key that does not exist has revisions and version 0
// and no value. With End, the condition is over the keys in [Key, End)
// (an End of "\x00": every key from Key on), as etcd judges it: it holds
// if every key there meets it, and over no key, as for a key that does
// not exist (a value never holds then).
type KVCompare struct {
	Key    string `json:"key"`
	End    string `json:"end,omitempty"`
	Target string `json:"target"`
	// Op is CompareEqual (also ""), CompareNotEqual, CompareLess or
	// CompareGreater; a value is compared as bytes, as sent (Wire).
	Op    string `json:"op,omitempty"`
	Value string `json:"value,omitempty"`
	Rev   int64  `json:"rev,omitempty"`
}

// Ops of a KVCompare, as etcd's client writes them.
const (
	CompareEqual    = "="
	CompareNotEqual = "!="
	CompareLess     = "<"
	CompareGreater  = ">"
)

// Targets of a KVCompare.
const (
	CompareValue   = "value"
	CompareMod     = "mod"
	CompareCreate  = "create"
	CompareVersion = "version"
)

// KVOp is one operation of a transaction: F is FRange, FPut or FDelete. End,
// when set, makes a range or delete cover [Key, End); Lease attaches a put's
// key to a lease.
type KVOp struct {
	F     string `json:"f"`
	Key   string `json:"key"`
	End   string `json:"end,omitempty"`
	Value string `json:"value,omitempty"`
	Lease int64  `json:"lease,omitempty"`
}

// KVResponse is the completion value of an ok etcd KV operation.
type KVResponse struct {
	// Revision is the response header's: the store's revision once the
	// request was applied.
	Revision int64 `json:"revision"`
	// Member names the node that answered, when known.
	Member string `json:"member,omitempty"`
	// Succeeded says which branch a kv-txn ran.
	Succeeded bool `json:"succeeded,omitempty"`
	// Results has one entry per operation of the branch that ran.
	Results []KVResult `json:"results,omitempty"`
	// Lease is the lease a lease-grant created.
	Lease int64 `json:"lease,omitempty"`
	// TTL is what a lease-keepalive's answer gives the lease, in seconds;
	// 0 when etcd answered that it has no such lease.
	TTL int64 `json:"ttl,omitempty"`
}

// KVResult is what one operation of a transaction returned: a range's keys
// in key order, or how many keys a delete removed.
type KVResult struct {
	KVs     []KV  `json:"kvs,omitempty"`
	Deleted int64 `json:"deleted,omitempty"`
}

// KV is a key as etcd returns it.
type KV struct {
	Key     string `json:"key"`
	Value   string `json:"value"`
	Create  int64  `json:"create"`
	Mod     int64  `json:"mod"`
	Version int64  `json:"version"`
	Lease   int64  `json:"lease,omitempty"`
}
