package etcdop

import "time"

// FWatch is an etcd watch: its invocation asks for the events of a range
// of keys from a revision, its completion holds every response the watch
// got until it ended, whether the client ended it or it broke: what came
// is known either way.
const FWatch = "watch"

// WatchRequest is a watch's invocation value.
type WatchRequest struct {
	// Key and End are the keys watched: [Key, End), or Key alone.
	Key string `json:"key"`
	End string `json:"end,omitempty"`
	// Rev is the revision the watch starts from; 0 starts from the
	// member's current one.
	Rev int64 `json:"rev,omitempty"`
	// PrevKV asks for each event's key as it was before.
	PrevKV bool `json:"prev_kv,omitempty"`
	// Progress asks for progress notifications while nothing happens.
	Progress bool `json:"progress,omitempty"`
	// RequireLeader has the member cancel the watch when it has no leader;
	// without it, a watch on a member cut off waits for it to come back.
	RequireLeader bool `json:"require_leader,omitempty"`
}

// WatchResult is a watch's completion value: what it got, in order.
type WatchResult struct {
	// Member is the member that served the watch, when known.
	Member    string          `json:"member,omitempty"`
	Responses []WatchResponse `json:"responses"`
	// End says why the watch ended, when it broke rather than being
	// ended by the client.
	End string `json:"end,omitempty"`
}

// WatchResponse is one response of a watch stream.
type WatchResponse struct {
	// Time is when the client received it, on the run's clock.
	Time time.Duration `json:"time"`
	// Revision is the response header's revision.
	Revision int64 `json:"revision"`
	// Progress marks a progress notification: every event up to Revision
	// has been sent.
	Progress bool `json:"progress,omitempty"`
	// Compacted is the compaction revision of a watch canceled because its
	// start revision was compacted.
	Compacted int64        `json:"compacted,omitempty"`
	Canceled  bool         `json:"canceled,omitempty"`
	Events    []WatchEvent `json:"events,omitempty"`
}

// WatchEvent is one event: a put or a delete of a key at a revision (a
// delete's KV has the key and, as Mod, the revision of the delete).
type WatchEvent struct {
	Type string `json:"type"` // "put" or "delete"
	KV   KV     `json:"kv"`
	// Prev is the key before the event, when the watch asked for it and
	// the key existed.
	Prev *KV `json:"prev,omitempty"`
}
