package resource_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/resource"
)

func tok(v int64) *int64 { return &v }

// write is one attempt of a sequence and the decision a store must make.
type write struct {
	key   string
	token *int64 // nil: a write without token (Redlock gives none)
	// want is whether a fenced and an unfenced store accept it.
	fenced, unfenced bool
}

// sequence exercises the fencing rule: lower than the highest accepted for
// the key is rejected; equal, higher and tokenless writes are accepted; each
// key has its own highest.
var sequence = []write{
	{"a", tok(5), true, true},
	{"a", tok(3), false, true}, // lower than 5
	{"a", tok(5), true, true},  // equal
	{"a", tok(7), true, true},  // higher
	{"a", nil, true, true},     // no token: nothing to check
	{"a", tok(6), false, true}, // lower than 7; the tokenless write did not reset it
	{"b", tok(1), true, true},  // b is not a
	{"b", tok(0), false, true},
	{"a", tok(7), true, true},
	{"c", nil, true, true},
	{"c", tok(2), true, true},
}

func openLog(t *testing.T) (*history.Lines, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "resource.jsonl")
	l, err := history.OpenLines(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path
}

func request(i int, w write) resource.Request {
	r := resource.Request{Client: i % 3}
	r.Key, r.Value, r.Session, r.Token = w.key, "v"+strconv.Itoa(i), i+1, w.token
	return r
}

// checkLog reads the store's log back: one line per decision, in order,
// with the request's fields and the decision.
func checkLog(t *testing.T, path string, reqs []resource.Request, accepted []bool) {
	t.Helper()
	es, trunc, err := lockop.ReadResourceLog(path)
	if err != nil || trunc != nil {
		t.Fatalf("ReadResourceLog: %v, %v", trunc, err)
	}
	if len(es) != len(reqs) {
		t.Fatalf("log has %d entries, want one per write (%d)", len(es), len(reqs))
	}
	for i, e := range es {
		r := reqs[i]
		if e.Line != i+1 || e.Client != r.Client || e.Key != r.Key || e.Value != r.Value || e.Session != r.Session {
			t.Errorf("entry %d = %+v, want line %d for %+v", i, e, i+1, r)
		}
		if (e.Token == nil) != (r.Token == nil) || (e.Token != nil && *e.Token != *r.Token) {
			t.Errorf("entry %d token %v, want %v", i, e.Token, r.Token)
		}
		if e.Accepted != accepted[i] {
			t.Errorf("entry %d accepted = %v, want %v", i, e.Accepted, accepted[i])
		}
		if e.Accepted != (e.Reason == "") {
			t.Errorf("entry %d: accepted %v with reason %q; a reason is given exactly for a rejection", i, e.Accepted, e.Reason)
		}
		if i > 0 && e.Time < es[i-1].Time {
			t.Errorf("entry %d time %v before entry %d's %v", i, e.Time, i-1, es[i-1].Time)
		}
	}
}

func TestStoreDecisions(t *testing.T) {
	for _, fenced := range []bool{true, false} {
		name := map[bool]string{true: "fenced", false: "unfenced"}[fenced]
		t.Run(name, func(t *testing.T) {
			log, path := openLog(t)
			s := resource.NewStore(fenced, history.NewClock(), log)
			var reqs []resource.Request
			var want []bool
			for i, w := range sequence {
				r := request(i, w)
				accept := w.unfenced
				if fenced {
					accept = w.fenced
				}
				resp, err := s.Write(r)
				if err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
				if resp.Accepted != accept {
					t.Errorf("write %d (key %s, token %s): accepted = %v, want %v (%s)", i, w.key, fmtTok(w.token), resp.Accepted, accept, resp.Reason)
				}
				if !resp.Accepted && !strings.Contains(resp.Reason, "lower than") {
					t.Errorf("write %d rejected with reason %q, want one saying the token is lower", i, resp.Reason)
				}
				reqs, want = append(reqs, r), append(want, accept)
			}
			checkLog(t, path, reqs, want)
		})
	}
}

func TestRejectionReasonNamesTokensAndKey(t *testing.T) {
	log, _ := openLog(t)
	s := resource.NewStore(true, history.NewClock(), log)
	for _, tk := range []int64{9, 4} {
		r := resource.Request{}
		r.Key, r.Token = "k", tok(tk)
		resp, err := s.Write(r)
		if err != nil {
			t.Fatal(err)
		}
		if tk == 4 {
			for _, want := range []string{"4", "9", `"k"`} {
				if !strings.Contains(resp.Reason, want) {
					t.Errorf("reason %q lacks %s", resp.Reason, want)
				}
			}
		}
	}
}

func fmtTok(p *int64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatInt(*p, 10)
}

// A write sent by resource.Client through the store's HTTP handler is
// decided and logged as if made directly.
func TestHTTPRoundTrip(t *testing.T) {
	log, path := openLog(t)
	srv := newServer(t, resource.NewStore(true, history.NewClock(), log))
	c := resource.NewClient(strings.TrimPrefix(srv.URL, "http://"), 2*time.Second)
	var reqs []resource.Request
	var want []bool
	for i, w := range sequence {
		r := request(i, w)
		resp, err := c.Write(context.Background(), r)
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if resp.Accepted != w.fenced {
			t.Errorf("write %d (key %s, token %s): accepted = %v, want %v", i, w.key, fmtTok(w.token), resp.Accepted, w.fenced)
		}
		if resp.Accepted == (resp.Reason != "") {
			t.Errorf("write %d: accepted %v with reason %q", i, resp.Accepted, resp.Reason)
		}
		reqs, want = append(reqs, r), append(want, w.fenced)
	}
	checkLog(t, path, reqs, want)
}

func newServer(t *testing.T, s *resource.Store) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func TestBadRequests(t *testing.T) {
	log, path := openLog(t)
	srv := newServer(t, resource.NewStore(true, history.NewClock(), log))
	for _, tc := range []struct {
		name, method, body string
		want               int
	}{
		{"not JSON", http.MethodPost, "not json", http.StatusBadRequest},
		{"empty body", http.MethodPost, "", http.StatusBadRequest},
		{"no key", http.MethodPost, `{"client":1,"value":"x","session":1,"token":3}`, http.StatusBadRequest},
		{"key of the wrong type", http.MethodPost, `{"client":1,"key":5}`, http.StatusBadRequest},
		{"token of the wrong type", http.MethodPost, `{"client":1,"key":"k","token":"seven"}`, http.StatusBadRequest},
		{"GET", http.MethodGet, "", http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+"/write", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	es, _, err := lockop.ReadResourceLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 0 {
		t.Errorf("bad requests were logged as decisions: %+v", es)
	}
}

// A decision that could not be logged must not count as made: the handler
// answers 500, and the client reports an unknown outcome.
func TestUnloggedDecisionIsAnError(t *testing.T) {
	log, _ := openLog(t)
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, resource.NewStore(false, history.NewClock(), log))
	c := resource.NewClient(strings.TrimPrefix(srv.URL, "http://"), 2*time.Second)
	r := resource.Request{}
	r.Key, r.Value = "k", "v"
	resp, err := c.Write(context.Background(), r)
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("Write = %+v, %v; want an error for the 500 answer", resp, err)
	}
	if resp.Accepted {
		t.Error("a write whose decision was not logged came back accepted")
	}
}

// A resource that does not answer is an error (unknown outcome), not a rejection.
func TestClientUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	c := resource.NewClient(addr, time.Second)
	r := resource.Request{}
	r.Key = "k"
	if resp, err := c.Write(context.Background(), r); err == nil {
		t.Fatalf("Write to a closed server = %+v, want an error", resp)
	}
}
