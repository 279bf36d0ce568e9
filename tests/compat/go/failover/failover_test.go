//go:build failover

// Package failover measures how long a partition goes without a leader when its leader is
// SIGKILLed under load, and what the kill does to throughput. It is a measurement, not a test
// with timing assertions (docs/benchmarks.md has its results):
//
//	ZEST_BIN=target/release/zest go test -tags failover -count=1 -v ./failover -run TestFailover
//
// A cluster of 3 nodes (3 partitions, replication factor 3) runs one-task instances (creators
// on every node's gateway, polling workers); every FAILOVER_GAP_SECONDS (default 5) the leader
// of the next partition in turn is SIGKILLed, and a probe publishes a message whose correlation
// key belongs to that partition, through another node, until one is acknowledged: the time
// from the SIGKILL to that acknowledgement is the failover time. The killed node is started
// again before the next kill. Knobs: FAILOVER_KILLS (default 20), FAILOVER_RATE (instances per
// second, default 150).
package failover

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/camunda/zeebe/clients/go/v8/pkg/entities"
	"github.com/camunda/zeebe/clients/go/v8/pkg/worker"
	"github.com/camunda/zeebe/clients/go/v8/pkg/zbc"

	"zest/tests/compat/harness"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func TestFailover(t *testing.T) {
	kills := envInt("FAILOVER_KILLS", 20)
	gap := time.Duration(envInt("FAILOVER_GAP_SECONDS", 5)) * time.Second
	rate := envInt("FAILOVER_RATE", 150)
	nodes, err := harness.NewCluster(os.Getenv("ZEST_BIN"), 3, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, n := range nodes {
			n.Kill()
			// FAILOVER_KEEP_LOGS=1 keeps the nodes' logs (their paths are printed)
			keep := t.Failed() || os.Getenv("FAILOVER_KEEP_LOGS") != ""
			if keep {
				t.Logf("node log: %s", n.LogPath)
			}
			n.Cleanup(keep)
		}
	}()
	if err := harness.StartAll(nodes); err != nil {
		t.Fatal(err)
	}
	var clients []zbc.Client
	for _, n := range nodes {
		c, err := harness.NewClient(n.GatewayAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	model := harness.Model(t, "one_task.bpmn", "", "")
	if _, err := clients[0].NewDeployResourceCommand().AddResource(model, "one_task.bpmn").Send(harness.Ctx(t, 20*time.Second)); err != nil {
		t.Fatalf("deploy: %s", harness.Describe(err))
	}

	// a correlation key of each partition, from the partition of the message key it gets
	probe := map[int]string{}
	for i := 0; len(probe) < 3 && i < 1000; i++ {
		k := fmt.Sprintf("probe-%d", i)
		r, err := clients[0].NewPublishMessageCommand().MessageName("probe").CorrelationKey(k).Send(harness.Ctx(t, 5*time.Second))
		if err != nil {
			t.Fatalf("publish: %s", harness.Describe(err))
		}
		p := int(r.Key >> 51)
		if _, ok := probe[p]; !ok {
			probe[p] = k
		}
	}

	// load: creators at `rate` over all gateways, polling workers on two gateways
	var completed sync.Map // second -> *atomic.Int64
	start := time.Now()
	count := func() {
		s := int(time.Since(start) / time.Second)
		v, _ := completed.LoadOrStore(s, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		jw := clients[w+1].NewJobWorker().JobType("benchmark-task").Handler(func(c worker.JobClient, j entities.Job) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := c.NewCompleteJobCommand().JobKey(j.Key).Send(ctx); err == nil {
				count()
			}
		}).MaxJobsActive(64).Concurrency(8).Timeout(5 * time.Second).PollInterval(50 * time.Millisecond).Open()
		defer jw.Close()
	}
	tick := time.Second / time.Duration(rate)
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			next := time.Now()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				next = next.Add(tick * 8)
				time.Sleep(time.Until(next))
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				cmd, _ := clients[(c+n)%3].NewCreateInstanceCommand().BPMNProcessId("benchmark").LatestVersion().VariablesFromMap(map[string]any{"c": c})
				_, _ = cmd.Send(ctx)
				cancel()
			}
		}(c)
	}

	type kill struct {
		at        time.Duration
		partition int
		node      int
		failover  time.Duration
	}
	var done []kill
	for k := 0; k < kills; k++ {
		time.Sleep(gap)
		p := k%3 + 1
		victim := harness.LeaderOf(nodes, p)
		if victim < 0 {
			t.Logf("partition %d has no leader before kill %d; skipped", p, k+1)
			continue
		}
		other := (victim + 1) % 3
		at := time.Since(start)
		nodes[victim].Kill()
		t0 := time.Now()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			_, err := clients[other].NewPublishMessageCommand().MessageName("probe").CorrelationKey(probe[p]).Send(ctx)
			cancel()
			if err == nil {
				break
			}
			if time.Since(t0) > 30*time.Second {
				t.Fatalf("partition %d had no leader 30 s after kill %d", p, k+1)
			}
		}
		f := time.Since(t0)
		done = append(done, kill{at, p, victim, f})
		t.Logf("kill %d: partition %d's leader, node %d, at %s: a new leader acknowledged after %s", k+1, p, victim, at.Round(time.Millisecond), f.Round(time.Millisecond))
		if err := nodes[victim].Start(); err != nil {
			t.Fatalf("restart of node %d: %v", victim, err)
		}
	}
	time.Sleep(gap)
	close(stop)
	wg.Wait()

	var fs []time.Duration
	for _, k := range done {
		fs = append(fs, k.failover)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
	if len(fs) == 0 {
		t.Fatal("no kill measured")
	}
	fmt.Printf("failover over %d leader kills: p50 %s, max %s, min %s\n", len(fs), fs[len(fs)/2].Round(time.Millisecond), fs[len(fs)-1].Round(time.Millisecond), fs[0].Round(time.Millisecond))
	// completions per second around each kill, from 2 s before to 5 s after
	fmt.Println("completed instances per second around each kill (second 0 holds the SIGKILL):")
	fmt.Println("| kill | partition | failover | -2 | -1 | 0 | +1 | +2 | +3 | +4 | +5 |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	sums := make([]int64, 8)
	for i, k := range done {
		line := fmt.Sprintf("| %d | %d | %d ms |", i+1, k.partition, k.failover.Milliseconds())
		s0 := int(k.at / time.Second)
		for d := -2; d <= 5; d++ {
			var n int64
			if v, ok := completed.Load(s0 + d); ok {
				n = v.(*atomic.Int64).Load()
			}
			sums[d+2] += n
			line += fmt.Sprintf(" %d |", n)
		}
		fmt.Println(line)
	}
	line := "| mean | | |"
	for _, s := range sums {
		line += fmt.Sprintf(" %d |", s/int64(len(done)))
	}
	fmt.Println(line)
}
