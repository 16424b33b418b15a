package lock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// fakeKV answers a leader's updates as a test says: with the next
// revision, with err, or (hang) not before the caller gives up.
type fakeKV struct {
	jetstream.KeyValue // the methods a tenure does not call
	mu                 sync.Mutex
	rev                uint64
	err                error
	hang               bool
	updates            int
}

func (f *fakeKV) Update(ctx context.Context, _ string, _ []byte, last uint64) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates++
	if f.hang {
		f.mu.Unlock()
		<-ctx.Done()
		f.mu.Lock()
		return 0, ctx.Err()
	}
	if f.err != nil {
		return 0, f.err
	}
	if last != f.rev {
		return 0, jetstream.ErrKeyRevisionMismatch
	}
	f.rev++
	return f.rev, nil
}

// lead starts a tenure on kv, as Acquire does after a create that got
// revision 1, and reports whether it was lost within d.
func lead(kv *fakeKV, lease, d time.Duration) (lost bool, t *natsTenure) {
	kv.rev = 1
	t = &natsTenure{l: &natsLock{kv: kv, lease: lease, election: true, name: "p0"}, token: 1, rev: 1,
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go t.keep(time.Now())
	select {
	case <-t.Lost():
		return true, t
	case <-time.After(d):
		return false, t
	}
}

// A leader whose updates succeed leads on, past its lease, with the key at
// its last update's revision and its token that of the create; one whose
// update is refused, or who hears nothing for a lease, stops leading.
func TestNATSLeaderKeepsAndLoses(t *testing.T) {
	const lease = 300 * time.Millisecond
	kv := &fakeKV{}
	lost, tenure := lead(kv, lease, 3*lease)
	close(tenure.stop)
	<-tenure.done
	if lost || kv.updates < 5 || tenure.current() != kv.rev || *tenure.Token() != 1 {
		t.Errorf("answered updates: lost %v after %d updates, at revision %d (key %d), token %d", lost, kv.updates, tenure.current(), kv.rev, *tenure.Token())
	}

	kv = &fakeKV{err: jetstream.ErrKeyRevisionMismatch}
	if lost, _ := lead(kv, lease, lease/2); !lost {
		t.Errorf("a refused update (after %d) did not end the tenure within half a lease", kv.updates)
	}

	kv = &fakeKV{hang: true}
	start := time.Now()
	lost, _ = lead(kv, lease, 3*lease)
	if took := time.Since(start); !lost || took > lease+lease/3 {
		t.Errorf("no answer to %d updates: lost %v after %s; want lost within the lease (%s)", kv.updates, lost, took, lease)
	}
}
