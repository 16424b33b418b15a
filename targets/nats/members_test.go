package nats

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
)

func TestChangesMembers(t *testing.T) {
	for v, ok := range map[string]bool{"": true, "2.10.22": false, "2.10.28": true, "2.11.1": false, "2.11.2": true, "2.9.25": false} {
		c, err := bindCluster(targets.Spec[struct{}]{Nodes: 3, Version: v})
		if err != nil {
			t.Fatal(err)
		}
		err = c.ChangesMembers()
		if (err == nil) != ok {
			t.Errorf("version %q: %v", v, err)
		}
		if e, isField := errors.AsType[*plans.FieldError](err); err != nil && (!isField || e.Field != "target.version" || !e.InPlan ||
			!strings.Contains(e.Msg, "a removed server rejoins by itself only from v2.10.28 and v2.11.2 on")) {
			t.Errorf("version %q: %v; want it refused on target.version", v, err)
		}
	}
}

// TestRemoveServer changes a real cluster's members as the remove-member
// fault does: server n3, killed, is removed from JetStream's meta group
// (which then has n1 and n2), a message is stored while it is out, and
// once restarted and Joined the group has all three again and the stream
// counts n3 among its current replicas.
func TestRemoveServer(t *testing.T) {
	run, nodes := testenv.Cluster(t, testenv.Bind(t, Kind{}, 3, ""), "natsmember")
	// n3 rejoins within seconds here, but may be refused for up to
	// RejoinAfter.
	ctx, cancel := context.WithTimeout(context.Background(), Cluster{}.RejoinAfter()+2*time.Minute)
	defer cancel()
	var urls []string
	for _, n := range nodes {
		urls = append(urls, "nats://"+net.JoinHostPort(n.Container.IP, strconv.Itoa(ClientPort)))
	}
	nc, err := nats.Connect(urls[0] + "," + urls[1])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	// A meta leader just elected may not have heard from every peer yet
	// ("no suitable peers for placement, peer offline"), as a run's
	// clients find when they make their stream (natsclient.Stream).
	var stream jetstream.Stream
	testenv.Eventually(ctx, t, func() (string, error) {
		var err error
		stream, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}, Replicas: 3})
		return "stream S made", err
	})
	group := func(want ...string) {
		t.Helper()
		testenv.Eventually(ctx, t, func() (string, error) {
			got, err := Cluster{}.Members(ctx, nodes)
			if err == nil && !slices.Equal(got, want) {
				err = fmt.Errorf("meta group %v, want %v", got, want)
			}
			return "", err
		})
	}
	group("n1", "n2", "n3")
	n3 := nodes[2]
	if err := run.Signal(ctx, n3.Container, "KILL"); err != nil {
		t.Fatal(err)
	}
	run.Wait(ctx, n3.Container) // exits 137, an error
	testenv.Eventually(ctx, t, func() (string, error) { return Cluster{}.RemoveMember(ctx, nodes, n3) })
	group("n1", "n2")
	if note, err := (Cluster{}).RemoveMember(ctx, nodes, n3); err != nil || note != "not in the meta group (removed already)" {
		t.Errorf("removing it again: %q, %v", note, err)
	}
	testenv.Eventually(ctx, t, func() (string, error) {
		_, err := js.Publish(ctx, "s", []byte("while out"))
		return "", err
	})
	testenv.Eventually(ctx, t, func() (string, error) { return Cluster{}.AddMember(ctx, run, nodes, n3) })
	if n3.Container, err = run.Restart(ctx, n3.Container); err != nil {
		t.Fatal(err)
	}
	nodes[2] = n3
	if err := (Cluster{}).Joined(ctx, run, nodes, n3); err != nil {
		t.Fatal(err)
	}
	group("n1", "n2", "n3")
	testenv.Eventually(ctx, t, func() (string, error) {
		info, err := stream.Info(ctx)
		if err != nil {
			return "", err
		}
		peers := []string{info.Cluster.Leader}
		for _, r := range info.Cluster.Replicas {
			if r.Current {
				peers = append(peers, r.Name)
			}
		}
		if !slices.Contains(peers, "n3") {
			return "", fmt.Errorf("stream's current peers %v", peers)
		}
		return "", nil
	})
}
