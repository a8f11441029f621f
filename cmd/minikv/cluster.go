package main

import (
	"fmt"

	"github.com/minikv/minikv/internal/cluster"
	"github.com/minikv/minikv/internal/server/redis"
)

// loadCluster reads the --cluster-config slot map and finds this node in
// it: the node --cluster-node names, or else the one whose address is the
// RESP listener's (--listen and --resp-port, compared as written, IPs by
// value). A wildcard --listen (0.0.0.0) matches no node, since the file
// holds the addresses clients connect to: such a node, and one whose file
// address is a DNS name, a NAT or a port mapping, names itself with
// --cluster-node.
func loadCluster(cfg *config, tls bool) (redis.ClusterConfig, error) {
	m, err := cluster.Load(cfg.ClusterConfig)
	if err != nil {
		return redis.ClusterConfig{}, err
	}
	var self *cluster.Node
	if cfg.ClusterNode != "" {
		if self = m.Lookup(cfg.ClusterNode); self == nil {
			return redis.ClusterConfig{}, fmt.Errorf("--cluster-node %q: no node of that name in %s", cfg.ClusterNode, cfg.ClusterConfig)
		}
	} else if self = m.NodeAt(cfg.Listen, cfg.RESPPort); self == nil {
		return redis.ClusterConfig{}, fmt.Errorf("cluster mode: no node in %s has this node's address %s:%d (--listen, --resp-port); name this node with --cluster-node",
			cfg.ClusterConfig, cfg.Listen, cfg.RESPPort)
	}
	return redis.ClusterConfig{Map: m, Self: self, TLS: tls}, nil
}

// slotCount is how many slots n owns, for the start-up log.
func slotCount(n *cluster.Node) int {
	c := 0
	for _, r := range n.Ranges {
		c += r.Last - r.First + 1
	}
	return c
}
