// Package zkop is the operation vocabulary of the ZooKeeper watch workload:
// writes of znodes, watches on them, plain reads, and the watch events.
package zkop

// Operation names of the ZooKeeper watch workload. Writers set znodes to
// values unique to each write, and create and delete children of one
// directory znode; a watcher holds a one-shot data watch on every znode
// (getData with a watch) and a child watch on the directory (getChildren
// with a watch), reads them plainly meanwhile, and records each watch
// event as it comes.
const (
	FSet        = "zk-set"            // setData; the completion has the znode's new version and zxid
	FCreate     = "zk-create"         // create a child of the directory, named by the value
	FDelete     = "zk-delete"         // delete a child of the directory, named by the value
	FWatch      = "zk-watch"          // getData that leaves a data watch; the completion has what it read
	FRead       = "zk-read"           // getData without a watch, by a watcher
	FChildWatch = "zk-watch-children" // getChildren that leaves a child watch; the completion has the directory's cversion and pzxid
	FChildRead  = "zk-read-children"  // getChildren without a watch, by a watcher
	FEvent      = "zk-event"          // a watch event, as the watcher received it (invocation and completion at once)
	FLost       = "zk-lost"           // the watcher's session expired: its watches are gone
)

// Value is the value of a ZooKeeper watch workload operation.
type Value struct {
	Key   string `json:"key,omitempty"`
	Value string `json:"value,omitempty"`
	// Version and Zxid are, for a znode's data, its data version and the
	// zxid of its last change (mzxid), from the answer; for the directory's
	// children, its child version (cversion, which counts creates only) and
	// the zxid of the last create or delete of a child (pzxid).
	Version int32 `json:"version,omitempty"`
	Zxid    int64 `json:"zxid,omitempty"`
	// EventSeen, on a read, says whether the watch event of its znode had
	// reached the watcher when the read's answer came: ZooKeeper sends a
	// watch event before any answer that shows the change.
	EventSeen bool `json:"event_seen,omitempty"`
	// Event is an event's type (ZooKeeper's name: EventNodeDataChanged, ...).
	Event string `json:"event,omitempty"`
	// Seq is an event's place among all the watch events the watcher's
	// session received, in the order they came off the connection.
	Seq int64 `json:"seq,omitempty"`
	// Conn counts the session's connections when a watch was set, a read
	// answered or an event came: a reconnection re-registers the watches,
	// and the server fires those whose znodes changed meanwhile at once,
	// in no order of their updates.
	Conn int64 `json:"conn,omitempty"`
	// Session is the session's ID when a watch was set or a read answered:
	// a watch lives as long as its session, and a new session has none.
	Session int64 `json:"session,omitempty"`
}
