// Package natsclient is what the NATS workloads share: a connection bound
// to one server, and the outcome a client error says.
package natsclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chaos-testing/chaos/workloads"
)

// Module is the NATS client library's module.
const Module = "github.com/nats-io/nats.go"

// Connect connects to the one server a client process is bound to, as in
// Jepsen: the client must not fail over to the servers the cluster
// advertises, or a fault on its node would go unobserved. It reconnects to
// that server for ever, and sends nothing while reconnecting: the library
// would otherwise buffer publishes and send them on reconnecting, long
// after their operations ended. Reconnects go to stderr, the process's log.
func Connect(node string) (*nats.Conn, jetstream.JetStream, error) {
	logf := log.New(os.Stderr, "nats "+node+": ", log.LstdFlags|log.Lmicroseconds).Printf
	nc, err := nats.Connect("nats://"+node,
		nats.IgnoreDiscoveredServers(), nats.DontRandomize(),
		nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond), nats.ReconnectBufSize(-1),
		nats.RetryOnFailedConnect(true), nats.Timeout(2*time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil { // nil: closed by the client itself
				logf("disconnected: %v", err)
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) { logf("reconnected") }))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", node, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// Classify marks the errors that say a write certainly took no effect as
// workloads.ErrNotApplied: a revision that did not match (the stream's
// leader checks it before it proposes the message, and again as it
// applies it), no responders (no stream took the message), a message never
// sent (the connection was down, and nothing is buffered). Anything else
// is unknown: a timeout above all, a connection closed with the request
// out, and other API errors, which a leader losing its place after
// proposing may send.
func Classify(err error) error {
	switch {
	case err == nil, errors.Is(err, workloads.ErrNotApplied):
		return err
	case errors.Is(err, jetstream.ErrKeyRevisionMismatch), WrongLastSequence(err),
		errors.Is(err, nats.ErrNoResponders), errors.Is(err, jetstream.ErrNoStreamResponse),
		errors.Is(err, nats.ErrReconnectBufExceeded):
		return fmt.Errorf("%w: %v", workloads.ErrNotApplied, err)
	}
	return err
}

// WrongLastSequence says whether err is the stream's refusal of a write
// sent with an expected last sequence that did not match (API error 10071;
// 10164 on replicated streams from v2.12): a create of a key that exists,
// an update at a revision that is not the key's.
func WrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// Message is a stored message as the stream's get-message API returns it.
type Message struct {
	Seq  uint64 `json:"seq"`
	Data []byte `json:"data"`
	Hdrs []byte `json:"hdrs"`
}

// LastBySubject asks the stream's get-message API, which its leader
// answers whatever the stream allows, for the last message on subject;
// nil when there is none.
func LastBySubject(ctx context.Context, nc *nats.Conn, stream, subject string) (*Message, error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": subject})
	msg, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, req)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Message *Message            `json:"message"`
		Error   *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, fmt.Errorf("get of %s: %w", subject, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, nil
	case resp.Error != nil:
		return nil, resp.Error
	case resp.Message == nil:
		return nil, fmt.Errorf("get of %s: an answer without a message", subject)
	}
	return resp.Message, nil
}

// Ready waits until the connection is up or ctx ends.
func Ready(ctx context.Context, nc *nats.Conn) error {
	for !nc.IsConnected() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: not connected: %v", workloads.ErrNotApplied, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// Bucket creates the KV bucket, whichever client gets there first, or
// binds to it. It is set-up, not part of the history, and retries until
// ctx ends: JetStream may have no meta leader yet, or faults may keep the
// cluster down for a while.
func Bucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	var kv jetstream.KeyValue
	err := retry(ctx, func(ctx context.Context) (err error) {
		kv, err = js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, cfg.Bucket)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

// Stream makes sure the stream exists, as Bucket does a bucket, but only
// the creator creates it; the others wait until it exists. Every create
// is proposed to JetStream's meta log, even one of a stream that exists
// with the same config, and a later entry marks the first committed. With
// one create, the stream's assignment stays the meta log's last entry, as
// when Jepsen's test creates its stream in set-up: a crash of every server
// then (nats-server#5946, fixed in v2.10.23) is the case the kill plans
// look for.
func Stream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig, creator bool) error {
	err := retry(ctx, func(ctx context.Context) error {
		if !creator {
			_, err := js.Stream(ctx, cfg.Name)
			return err
		}
		_, err := js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("stream %s: %w", cfg.Name, err)
	}
	return nil
}

func retry(ctx context.Context, f func(context.Context) error) error {
	for {
		err := f(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond): // no JetStream leader yet, or not connected yet
		}
	}
}
