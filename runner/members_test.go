package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/targets"
)

// listsMembers is a Membered target whose cluster lists members; it has
// none of the other methods.
type listsMembers struct {
	targets.Target
	targets.Membered
	members []string
}

func (l listsMembers) Members(context.Context, []targets.Node) ([]string, error) {
	return l.members, nil
}

// TestCheckMembers: the end-of-run check records the members the cluster
// lists, and fails a run whose cluster ended without one of the members
// it started with.
func TestCheckMembers(t *testing.T) {
	var nodes []targets.Node
	for _, n := range []string{"n2", "n1", "n3"} {
		nodes = append(nodes, targets.Node{Container: containers.Container{ID: n, Name: n}})
	}
	for _, c := range []struct {
		listed []string
		fails  bool
	}{{[]string{"n1", "n2", "n3"}, false}, {[]string{"n1", "n2"}, true}} {
		path := filepath.Join(t.TempDir(), "history.jsonl")
		h, err := history.OpenAppender(path, history.NewClock(), history.Nemesis)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if c.fails {
			cancel() // no second ask: the first answer stands
		}
		env := &faultEnv{target: listsMembers{members: c.listed}, nodes: nodes}
		err = checkMembers(ctx, env, h)
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
