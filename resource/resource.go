// Package resource is the protected resource of lock tests: a tiny storage
// service that lock holders write to. It logs every write attempt and its
// decision. Fenced, it rejects a write whose token is lower than the highest
// it has accepted for that key; unfenced, it accepts everything, as most
// storage a lock "protects" does.
package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// Port the resource listens on inside its container.
const Port = 7000

// Request is one write attempt.
type Request struct {
	Client int `json:"client"`
	lockop.WriteValue
}

// Response is the resource's decision.
type Response struct {
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason,omitempty"`
}

// Store decides on writes and logs each decision.
type Store struct {
	fenced bool
	clock  history.Clock
	log    *history.Lines

	mu      sync.Mutex
	highest map[string]int64 // per key, the highest token accepted
	values  map[string]string
}

// NewStore makes a store logging to log; fenced says whether it checks tokens.
func NewStore(fenced bool, clock history.Clock, log *history.Lines) *Store {
	return &Store{fenced: fenced, clock: clock, log: log, highest: map[string]int64{}, values: map[string]string{}}
}

// Write decides on r, applies it if accepted, and logs the attempt. The
// decision and the log line are made under one lock, so the log's order is
// the order in which the resource decided.
func (s *Store) Write(r Request) (Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := Response{Accepted: true}
	if s.fenced && r.Token != nil {
		if hi, seen := s.highest[r.Key]; seen && *r.Token < hi {
			resp = Response{Reason: fmt.Sprintf("token %d is lower than %d, the highest accepted for %q", *r.Token, hi, r.Key)}
		}
	}
	// The decision is logged before it takes effect: a decision the log
	// does not have must not shape later ones.
	err := s.log.Write(history.ResourceEntry{
		Time: s.clock.Now(), Client: r.Client, Key: r.Key, Value: r.Value,
		Session: r.Session, Token: r.Token, Accepted: resp.Accepted, Reason: resp.Reason,
	})
	if err == nil && resp.Accepted {
		if hi, seen := s.highest[r.Key]; r.Token != nil && (!seen || *r.Token > hi) {
			s.highest[r.Key] = *r.Token
		}
		s.values[r.Key] = r.Value
	}
	return resp, err
}

// Handler serves POST /write.
func (s *Store) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /write", func(w http.ResponseWriter, req *http.Request) {
		var r Request
		if err := json.NewDecoder(req.Body).Decode(&r); err != nil || r.Key == "" {
			http.Error(w, "expected a JSON write request with a key", http.StatusBadRequest)
			return
		}
		resp, err := s.Write(r)
		if err != nil {
			// The decision was not logged, so it must not count as made.
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
	return mux
}

// Serve runs the store on addr until ctx ends.
func Serve(ctx context.Context, addr string, s *Store) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("resource listen: %w", err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("resource: %w", err)
	}
	return nil
}

// Config is what the resource process is told at start, through ConfigEnv.
type Config struct {
	Fenced bool   `json:"fenced"`
	Log    string `json:"log"` // path of its log as the resource sees it
	// ClockStart is the run's start on the shared CLOCK_MONOTONIC.
	ClockStart time.Duration `json:"clock_start"`
}

// ConfigEnv carries the resource's Config.
const ConfigEnv = "CHAOS_RESOURCE"
