package images

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Releases are the versions of a server that Debian suites carry, each
// with the suite that has it: a plan picks a version, and the node image
// is built from that suite. The table is what validation knows before
// anything is built; a suite that moved on since builds its newer
// version, which the run records as the version the servers report.
type Releases struct {
	Server  string            // the server's name, for messages
	Default string            // the version a plan without one gets
	Suites  map[string]string // version → Debian suite
}

// Suite is the suite that carries version ("" is Default), or an error
// naming the versions there are.
func (r Releases) Suite(version string) (string, error) {
	if version == "" {
		version = r.Default
	}
	if s, ok := r.Suites[version]; ok {
		return s, nil
	}
	return "", fmt.Errorf("%s %s is in no Debian suite this machine reaches; versions: %s", r.Server, version, r.List())
}

// List is the versions, sorted, each with its suite.
func (r Releases) List() string {
	var out []string
	for _, v := range slices.Sorted(maps.Keys(r.Suites)) {
		out = append(out, fmt.Sprintf("%s (%s)", v, r.Suites[v]))
	}
	return strings.Join(out, ", ")
}

// FaultTools are the packages every node image has besides its server:
// what the nemeses run inside a node (iptables for partitions, ip, ps).
var FaultTools = []string{"iptables", "iproute2", "procps"}

// Recipe is the recipe of the image named name with version's suite, its
// packages and the fault tools.
func (r Releases) Recipe(name, version string, packages ...string) (Recipe, error) {
	suite, err := r.Suite(version)
	if err != nil {
		return Recipe{}, err
	}
	return Recipe{Name: name, Suite: suite, Version: cmp.Or(version, r.Default),
		Packages: append(slices.Clone(packages), FaultTools...)}, nil
}
