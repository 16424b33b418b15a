package nemesis

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/history"
)

// TestFinishChecksMembers: the end-of-run check of remove-member records
// the members the cluster lists, and fails a run whose cluster ended
// without one of the members it started with.
func TestFinishChecksMembers(t *testing.T) {
	for _, c := range []struct {
		removed string // a member removed and never added back
		listed  []string
		fails   bool
	}{{"", []string{"n1", "n2", "n3"}, false}, {"n3", []string{"n1", "n2"}, true}} {
		cl := newFakeCluster(3, 0)
		cl.roles["nodes"] = []string{"n2", "n1", "n3"} // the original members are sorted for the check
		if c.removed != "" {
			cl.removed[c.removed] = true
		}
		path := filepath.Join(t.TempDir(), "history.jsonl")
		h, err := history.OpenAppender(path, history.NewClock(), history.Nemesis)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if c.fails {
			cancel() // no second ask: the first answer stands
		}
		err = RemoveMember{}.Finish(ctx, NewWorld(cl, cl.target()), h)
		cancel()
		h.Close()
		if (err != nil) != c.fails || c.fails && !strings.Contains(err.Error(), "[n1 n2], not its original [n1 n2 n3]") {
			t.Errorf("cluster listing %v: %v", c.listed, err)
		}
		ops, _, err := history.Read(path)
		if err != nil || len(ops) != 2 || ops[1].F != "final-members" || ops[1].Type != history.Info || !strings.Contains(string(ops[1].Value), strings.Join(c.listed, `","`)) {
			t.Errorf("cluster listing %v: history %+v, %v", c.listed, ops, err)
		}
	}
}
