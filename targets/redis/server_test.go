package redis

import (
	"context"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/targets"
)

// TestValkeyFromTrixie: a server and version from a suite other than the
// host's (Valkey 8.1.1, from trixie) runs, says which it is, and takes the
// plan's settings.
func TestValkeyFromTrixie(t *testing.T) {
	cli := testenv.Docker(t)
	tg, err := Kind{}.Bind(&targets.Spec[Params]{Nodes: 1, Version: "8.1.1", Params: Params{Server: "valkey"},
		Config: map[string]string{"appendonly": "yes", "appendfsync": "always"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, err := tg.Image(ctx, cli, testenv.Log(t))
	if err != nil {
		t.Fatal(err)
	}
	run := testenv.NewRun(t, cli, "valkey")
	nodes, err := tg.Start(ctx, run, img)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := tg.(targets.Versioner).ServerVersion(ctx, nodes[0]); v != "valkey 8.1.1" || err != nil {
		t.Errorf("version %q, %v; want valkey 8.1.1", v, err)
	}
	c := dial(nodes[0])
	defer c.Close()
	got, err := c.ConfigGet(ctx, "append*").Result()
	if err != nil || got["appendonly"] != "yes" || got["appendfsync"] != "always" {
		t.Errorf("CONFIG GET append*: %v, %v; want the plan's settings", got, err)
	}
}
