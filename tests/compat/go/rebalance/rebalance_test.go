//go:build cluster

// Package rebalance checks that leadership goes back to each partition's primary after a
// failover (Zeebe's priority election): a cluster of 3 nodes, 3 partitions, replication factor
// 3, where partition p's primary is node p-1.
//
//	ZEST_BIN=target/release/zest go test -tags cluster -count=1 -v ./rebalance
package rebalance

import (
	"os"
	"testing"
	"time"

	"zest/tests/compat/harness"
)

// waitFor polls cond every 200 ms until it holds or `limit` passes.
func waitFor(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return cond()
}

func leaders(nodes []*harness.Zest) []int {
	return []int{harness.LeaderOf(nodes, 1), harness.LeaderOf(nodes, 2), harness.LeaderOf(nodes, 3)}
}

func TestLeadersGoBackToTheirPrimaries(t *testing.T) {
	nodes, err := harness.NewCluster(os.Getenv("ZEST_BIN"), 3, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, n := range nodes {
			n.Kill()
			n.Cleanup(t.Failed())
		}
	}()
	if err := harness.StartAll(nodes); err != nil {
		t.Fatal(err)
	}
	primaries := func() bool {
		l := leaders(nodes)
		return l[0] == 0 && l[1] == 1 && l[2] == 2
	}
	if !waitFor(30*time.Second, primaries) {
		t.Fatalf("leaders %v, not on their primaries [0 1 2], after start", leaders(nodes))
	}
	// node 0 goes: another node leads partition 1
	nodes[0].Kill()
	if !waitFor(15*time.Second, func() bool { l := harness.LeaderOf(nodes, 1); return l == 1 || l == 2 }) {
		t.Fatalf("partition 1 has no new leader: %v", leaders(nodes))
	}
	t.Logf("after the kill: leaders %v", leaders(nodes))
	if err := nodes[0].Start(); err != nil {
		t.Fatal(err)
	}
	// the leader hands partition 1 back once it has led it for 10 s and node 0 caught up
	start := time.Now()
	if !waitFor(60*time.Second, primaries) {
		t.Fatalf("leaders %v, not back on their primaries [0 1 2] within 60 s", leaders(nodes))
	}
	t.Logf("partition 1 back on node 0 %s after its restart", time.Since(start).Round(100*time.Millisecond))
}
