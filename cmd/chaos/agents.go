package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/resource"
	"github.com/chaos-testing/chaos/workloads"
)

// cmdClient is one client process, started by chaos run in its own
// container. It stops starting operations on SIGTERM.
func cmdClient([]string) (int, error) {
	cfg, err := fromEnv[workloads.Config](workloads.ConfigEnv)
	if err != nil {
		return exitUsage, err
	}
	if _, ok := workloads.Workloads.Lookup(cfg.Workload); !ok {
		return exitUsage, fmt.Errorf("unknown workload %q", cfg.Workload)
	}
	ctx, stop := interruptible()
	defer stop()
	if err := workloads.RunClient(ctx, cfg); err != nil {
		return exitCrash, err
	}
	return exitValid, nil
}

// cmdResource is the protected resource, started by chaos run in its own container.
func cmdResource([]string) (int, error) {
	cfg, err := fromEnv[resource.Config](resource.ConfigEnv)
	if err != nil {
		return exitUsage, err
	}
	log, err := history.OpenLines(cfg.Log)
	if err != nil {
		return exitCrash, err
	}
	defer log.Close()
	ctx, stop := interruptible()
	defer stop()
	store := resource.NewStore(cfg.Fenced, history.Clock{Start: cfg.ClockStart}, log)
	if err := resource.Serve(ctx, fmt.Sprintf(":%d", resource.Port), store); err != nil {
		return exitCrash, err
	}
	return exitValid, nil
}

// fromEnv decodes the JSON configuration chaos run passed in an environment variable.
func fromEnv[T any](name string) (T, error) {
	var v T
	raw := os.Getenv(name)
	if raw == "" {
		return v, fmt.Errorf("%s is not set: this command is started by chaos run, inside a container", name)
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return v, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}
