package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/kubelocal"
	"github.com/chaos-testing/chaos/targets/etcd"
)

// cmdKube brings a local single-node Kubernetes up or down, for plans run
// on Kubernetes, says whether it is up, or opens a shell beside it.
func cmdKube(args []string) (int, error) {
	fs := newFlags("kube")
	name := fs.String("name", "local", "the local cluster's name: its node's, and its folders' (/var/lib/chaos/kube/NAME, /run/chaos-kube/NAME)")
	// What follows -- is shell's command, flags and all.
	var command []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, command = args[:i], args[i+1:]
	}
	pos, err := parseArgs(fs, args, "up|down|status|shell [-- COMMAND...]")
	if err != nil {
		return exitUsage, err
	}
	if len(pos) != 1 || len(command) > 0 && pos[0] != "shell" {
		return exitUsage, usageError{"usage: chaos kube up|down|status|shell [--name NAME] (shell: [-- COMMAND...])"}
	}
	c := kubelocal.Named(*name)
	switch pos[0] {
	case "up":
		ctx, stop := interruptible()
		defer stop()
		// The API server's etcd is chaos's own build of etcd's default
		// version, as the etcd plans use.
		store, err := etcd.Program(etcd.DefaultVersion).Binary(ctx, os.Stderr)
		if err != nil {
			return exitCrash, err
		}
		self, err := os.Executable()
		if err != nil {
			return exitCrash, err
		}
		if err := kubelocal.Up(ctx, c, store, []string{self, "kube-node"}, os.Stderr); err != nil {
			return exitCrash, err
		}
	case "down":
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := kubelocal.Down(ctx, c, os.Stderr); err != nil {
			return exitCrash, err
		}
	case "status":
		if err := c.Status(context.Background()); err != nil {
			fmt.Printf("kubernetes: %s is not ready: %v\n", c.Name, err)
			return exitUndecided, nil
		}
		fmt.Printf("kubernetes: %s is up, its node Ready: KUBECONFIG=%s\n", c.Name, c.Kubeconfig())
	case "shell":
		// The API server is reachable only in the node's network
		// namespace: a shell there, with KUBECONFIG set.
		cmd, err := c.Shell(command)
		if errors.Is(err, kubelocal.ErrNotUp) {
			return exitUsage, usageError{err.Error()}
		}
		if err != nil {
			return exitCrash, err
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return exitCrash, err
		}
	default:
		return exitUsage, usageError{fmt.Sprintf("kube: unknown subcommand %q: expected up, down, status or shell", pos[0])}
	}
	return exitValid, nil
}

// cmdKubeNode is a local cluster's node supervisor, started by chaos kube
// up inside its own namespaces; it runs until SIGTERM.
func cmdKubeNode([]string) (int, error) {
	var cfg kubelocal.NodeConfig
	if err := json.Unmarshal([]byte(os.Getenv(kubelocal.NodeEnv)), &cfg); err != nil {
		return exitUsage, fmt.Errorf("%s: %w (this command is started by chaos kube up)", kubelocal.NodeEnv, err)
	}
	ctx, stop := interruptible()
	defer stop()
	if err := kubelocal.Node(ctx, cfg); err != nil {
		return exitCrash, err
	}
	return exitValid, nil
}
