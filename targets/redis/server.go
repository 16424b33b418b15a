package redis

import (
	"cmp"
	"context"
	"io"
	"maps"
	"slices"

	"github.com/docker/docker/client"

	"github.com/chaos-testing/chaos/images"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
)

// Params are the fields both Redis targets take in a plan's target
// section.
type Params struct {
	// Server is redis, or valkey: the fork of Redis 7.2 many teams moved
	// to, which speaks the same protocol and takes the same settings.
	Server string `yaml:"server" json:"server"`
}

// distributions are the servers a plan may pick, with the Debian releases
// that carry them and the programs their packages install.
var distributions = map[string]struct {
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

// servers is what both Redis targets are made of: the server (redis or
// valkey) at a version, on some nodes, with the settings they run with.
type servers struct {
	nodes           int
	server, version string
	settings        map[string]string
}

// bind accepts a server and version that a Debian suite carries, and the
// settings a plan may set: Redis's, and more, a target's own.
func bind(s *targets.Spec[Params], more map[string]string) (servers, error) {
	s.Params.Server = cmp.Or(s.Params.Server, "redis")
	srv := servers{nodes: s.Nodes, server: s.Params.Server, version: s.Version}
	d, ok := distributions[srv.server]
	if !ok {
		return srv, plans.Fieldf("server", "%q: expected redis or valkey", srv.server)
	}
	if _, err := d.releases.Suite(s.Version); err != nil {
		return srv, plans.Fieldf("version", "%v", err)
	}
	var err error
	srv.settings, err = config(s.Config, more)
	return srv, err
}

// Image is the node image with the server and its sentinel, from the
// suite that carries the version asked.
func (s servers) Image(ctx context.Context, cli *client.Client, progress io.Writer) (string, error) {
	d := distributions[s.server]
	r, err := d.releases.Recipe(s.server, s.version, d.server, d.sentinel)
	if err != nil {
		return "", err
	}
	return images.Ensure(ctx, cli, r, progress)
}

// Settings are the redis.conf directives the servers run with.
func (s servers) Settings() map[string]string { return s.settings }

// program is the server's program: redis-server, or valkey-sentinel.
func (s servers) program(sentinel bool) string {
	d := distributions[s.server]
	if sentinel {
		return d.sentinel
	}
	return d.server
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
func config(plan, more map[string]string) (map[string]string, error) {
	all := maps.Clone(own)
	maps.Copy(all, more)
	return targets.Settings(all, plan, slices.Concat(settings, slices.Collect(maps.Keys(more))), reserved)
}

// line is a directive as a configuration file has it: an empty value
// quoted, as `save ""`.
func line(k, v string) string {
	if v == "" {
		v = `""`
	}
	return k + " " + v
}
