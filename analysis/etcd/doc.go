// Package etcd holds the checkers of etcd's own guarantees: etcd-kv, the
// key-value store with its revisions as a model of analysis/linear;
// etcd-watch, what watches deliver; etcd-serializable, what serializable
// ranges may return; and etcd-lease, what lease keep-alives may answer.
package etcd
