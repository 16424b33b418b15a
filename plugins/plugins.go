// Package plugins is the one list of chaos's plug-ins: importing it
// registers every target and workload, and with each workload the
// checkers that judge it (faults register with the nemesis package
// itself). A new target or workload is its own folder and one line here;
// the command line and the tests that must see every plug-in import this
// package.
package plugins

import (
	_ "github.com/chaos-testing/chaos/targets/etcd"
	_ "github.com/chaos-testing/chaos/targets/nats"
	_ "github.com/chaos-testing/chaos/targets/redis"
	_ "github.com/chaos-testing/chaos/targets/zookeeper"
	_ "github.com/chaos-testing/chaos/workloads/etcdkv"
	_ "github.com/chaos-testing/chaos/workloads/lock"
	_ "github.com/chaos-testing/chaos/workloads/register"
	_ "github.com/chaos-testing/chaos/workloads/set"
	_ "github.com/chaos-testing/chaos/workloads/txn"
	_ "github.com/chaos-testing/chaos/workloads/zkwatch"
)
