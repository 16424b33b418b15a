package redis

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/docker/docker/client"

	"github.com/chaos-testing/chaos/images"
	"github.com/chaos-testing/chaos/targets"
)

// Params are the fields both Redis targets take in a plan's target
// section.
type Params struct {
	// Server is redis, or valkey: the fork of Redis 7.2 many teams moved
	// to, which speaks the same protocol and takes the same settings.
	Server string `yaml:"server" json:"server"`
}

// servers are the servers a plan may pick, with the Debian releases that
// carry them and the programs their packages install.
var servers = map[string]struct {
	releases         images.Releases
	server, sentinel string // program, and package of the same name
}{
	"redis": {images.Releases{Server: "redis", Default: "7.0.15", Suites: map[string]string{
		"6.0.16": "bullseye", "7.0.15": "bookworm", "8.0.2": "trixie",
	}}, "redis-server", "redis-sentinel"},
	"valkey": {images.Releases{Server: "valkey", Default: "8.1.1", Suites: map[string]string{
		"8.1.1": "trixie",
	}}, "valkey-server", "valkey-sentinel"},
}

// params are the plan's fields with their defaults; a spec without any
// (a test's) is Redis.
func params(s targets.Spec) Params {
	p, _ := s.Params.(*Params)
	if p == nil || p.Server == "" {
		return Params{Server: "redis"}
	}
	return *p
}

// checkSpec accepts a server and version that a Debian suite carries.
func checkSpec(s targets.Spec) error {
	p := params(s)
	srv, ok := servers[p.Server]
	if !ok {
		return &targets.SpecError{Field: "server", Err: fmt.Errorf("%q: expected redis or valkey", p.Server)}
	}
	if _, err := srv.releases.Suite(s.Version); err != nil {
		return &targets.SpecError{Field: "version", Err: err}
	}
	return nil
}

// image is the node image with the server and its sentinel, from the
// suite that carries the version asked.
func image(ctx context.Context, cli *client.Client, s targets.Spec, progress io.Writer) (string, error) {
	if err := checkSpec(s); err != nil {
		return "", err
	}
	srv := servers[params(s).Server]
	r, err := srv.releases.Recipe(params(s).Server, s.Version, srv.server, srv.sentinel)
	if err != nil {
		return "", err
	}
	return images.Ensure(ctx, cli, r, progress)
}

// program is the server's program: redis-server, or valkey-sentinel.
func program(s targets.Spec, sentinel bool) string {
	srv := servers[params(s).Server]
	if sentinel {
		return srv.sentinel
	}
	return srv.server
}

// settings are the redis.conf directives a plan may set: persistence,
// replication and the guards against writes a failover loses.
var settings = []string{
	"appendonly", "appendfsync", "save", "no-appendfsync-on-rewrite", "aof-use-rdb-preamble",
	"auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size",
	"min-replicas-to-write", "min-replicas-max-lag", "repl-diskless-sync", "repl-diskless-sync-delay",
	"repl-backlog-size", "repl-backlog-ttl", "repl-timeout", "repl-ping-replica-period",
	"replica-serve-stale-data", "replica-read-only", "replica-priority", "replica-lazy-flush",
	"maxmemory", "maxmemory-policy", "hz", "timeout", "tcp-keepalive", "maxclients",
	"lua-time-limit", "busy-reply-threshold", "io-threads",
}

// reserved are the directives chaos sets for every run: where the server
// listens and whom it replicates.
var reserved = []string{"port", "bind", "protected-mode", "replicaof", "slaveof", "replica-announce-ip", "daemonize", "dir"}

// own are chaos's settings that a plan may change: no persistence, which
// Redlock's safety argument assumes (a restarted master comes back empty).
var own = map[string]string{"save": "", "appendonly": "no"}

// config is the directives the servers run with: own and more (a
// target's own settings, which a plan may set too), then the plan's.
func config(s targets.Spec, more map[string]string) (map[string]string, error) {
	all := maps.Clone(own)
	maps.Copy(all, more)
	return targets.Settings(all, s.Config, slices.Concat(settings, slices.Collect(maps.Keys(more))), reserved)
}

// line is a directive as a configuration file has it: an empty value
// quoted, as `save ""`.
func line(k, v string) string {
	if v == "" {
		v = `""`
	}
	return k + " " + v
}
