//go:build crash

package crash

// TestCrash starts zest on a data dir, deploys a one-task process and runs a load: creator
// goroutines create instances (recording every acknowledged instance key) while worker goroutines
// activate and complete jobs (recording, per instance, every acknowledged CompleteJob). Twice, at
// random moments, the server is SIGKILLed and restarted on the same data dir and ports; the load
// carries on. Then creation stops and the workers drain. It asserts:
//
//   - every acknowledged instance finished: its CompleteJob was acknowledged, or (if that ack was
//     lost to a crash) the instance no longer exists (CancelProcessInstance answers NOT_FOUND);
//   - no instance had a CompleteJob acknowledged twice (its single job completed twice means an
//     acknowledged completion was lost by a crash and the job came back);
//   - after a clean SIGTERM restart, nothing is left: no job is activatable, the process is still
//     deployed (its version and key unchanged), and sampled finished instances stay gone.
//
// Jobs are activated with a 2 s timeout, so a job activated before a crash and never completed
// comes back after 2 s and is completed then.
//
// With CRASH_BACKUP_BEFORE_KILL=1 (and a backup directory configured for zest), a backup is
// requested through /actuator/backupRuntime just before each SIGKILL, so the kill lands while it
// is taken; after the last restart every backup must be COMPLETED or FAILED, none left
// IN_PROGRESS. tests/compat/run.sh runs this variant with snapshots every 100 entries and 1 MiB
// log segments, so that kills also land during snapshots and segment deletion.
//
// Knobs (env): ZEST_BIN (required), CRASH_LOAD_SECONDS (default 10), CRASH_KILLS (default 2),
// CRASH_CREATORS (4), CRASH_WORKERS (2), CRASH_SEED (random), CRASH_DRAIN_SECONDS (60),
// CRASH_BACKUP_BEFORE_KILL (off).

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/camunda/zeebe/clients/go/v8/pkg/zbc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"

	"zest/tests/compat/harness"
)

const (
	processID  = "benchmark"      // testdata/one_task.bpmn
	jobType    = "benchmark-task" // its job type
	jobTimeout = 2 * time.Second
	maxBacklog = 400 // creators pause while this many acknowledged instances are unfinished
)

func envInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err == nil {
			return n
		}
	}
	return def
}

type ledger struct {
	mu        sync.Mutex
	acked     map[int64]time.Time // instance key -> creation ack time
	completed map[int64]int       // instance key -> acknowledged CompleteJob count
	jobOf     map[int64]int64     // instance key -> job key of its acknowledged completion
	ambiguous map[int64]bool      // instance key -> a CompleteJob of its job failed (maybe applied)
	doubles   []string
	dupKeys   []int64 // instance keys acknowledged by two creations (key reuse after a restart)
}

func (l *ledger) created(k int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.acked[k]; dup {
		l.dupKeys = append(l.dupKeys, k)
	}
	l.acked[k] = time.Now()
}

func (l *ledger) completedJob(pi, job int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.completed[pi]++
	if l.completed[pi] > 1 {
		l.doubles = append(l.doubles, fmt.Sprintf("instance %d: CompleteJob acknowledged %d times (jobs %d, %d)",
			pi, l.completed[pi], l.jobOf[pi], job))
	}
	l.jobOf[pi] = job
}

// backlog approximates the number of unfinished acknowledged instances.
func (l *ledger) backlog() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked) - len(l.completed)
}

// pending returns the acknowledged instances without an acknowledged completion, and how many
// of them have no ambiguous completion either.
func (l *ledger) pending() (all []int64, clear int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.acked {
		if l.completed[k] == 0 {
			all = append(all, k)
			if !l.ambiguous[k] {
				clear++
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return all, clear
}

func TestCrash(t *testing.T) {
	bin := os.Getenv("ZEST_BIN")
	if bin == "" {
		t.Fatal("ZEST_BIN must name the zest binary")
	}
	loadDur := time.Duration(envInt("CRASH_LOAD_SECONDS", 10)) * time.Second
	kills := envInt("CRASH_KILLS", 2)
	creators := envInt("CRASH_CREATORS", 4)
	workers := envInt("CRASH_WORKERS", 2)
	drain := time.Duration(envInt("CRASH_DRAIN_SECONDS", 60)) * time.Second
	seed := int64(envInt("CRASH_SEED", int(time.Now().UnixNano()%1_000_000_007)))
	rng := rand.New(rand.NewSource(seed))
	backups := os.Getenv("CRASH_BACKUP_BEFORE_KILL") == "1"
	t.Logf("seed %d (CRASH_SEED to replay), load %s, %d kills, %d creators, %d workers, backups %v", seed, loadDur, kills, creators, workers, backups)

	// CRASH_CLUSTER=n: a cluster of n nodes (CRASH_PARTITIONS partitions, default n, each on
	// every node); the clients talk to node 0, and each kill takes a random node, leader or
	// follower.
	clusterSize := envInt("CRASH_CLUSTER", 1)
	// CRASH_FAULT=kill (default): SIGKILL and restart; freeze: SIGSTOP for CRASH_FREEZE_MS
	// (default 3000) then SIGCONT; mixed: the two in turn.
	fault := os.Getenv("CRASH_FAULT")
	freezeFor := time.Duration(envInt("CRASH_FREEZE_MS", 3000)) * time.Millisecond
	freeze := func(k int) bool { return fault == "freeze" || (fault == "mixed" && k%2 == 1) }
	var nodes []*harness.Zest
	if clusterSize > 1 {
		var err error
		nodes, err = harness.NewCluster(bin, clusterSize, envInt("CRASH_PARTITIONS", clusterSize), clusterSize)
		if err != nil {
			t.Fatal(err)
		}
	} else {
		z, err := harness.NewZest(bin, "")
		if err != nil {
			t.Fatal(err)
		}
		nodes = []*harness.Zest{z}
	}
	z := nodes[0]
	keepLog := true
	defer func() {
		for _, n := range nodes {
			n.Kill()
			n.Cleanup(keepLog)
		}
	}()
	if err := harness.StartAll(nodes); err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		t.Logf("zest node %d: %v (log %s)", i, n.Args(), n.LogPath)
	}

	client, err := zbc.NewClient(&zbc.ClientConfig{
		GatewayAddress:         z.GatewayAddr,
		UsePlaintextConnection: true,
		// Reconnect quickly after a restart (grpc's default backoff grows to minutes).
		DialOpts: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.5, Jitter: 0.2, MaxDelay: 500 * time.Millisecond},
			MinConnectTimeout: 2 * time.Second,
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	model := harness.Model(t, "one_task.bpmn", "", "")
	dctx, dcancel := context.WithTimeout(context.Background(), 20*time.Second)
	dep, err := client.NewDeployResourceCommand().AddResource(model, "one_task.bpmn").Send(dctx)
	dcancel()
	if err != nil {
		t.Fatalf("deploy: %s", harness.Describe(err))
	}
	proc := dep.Deployments[0].GetProcess()

	l := &ledger{acked: map[int64]time.Time{}, completed: map[int64]int{}, jobOf: map[int64]int64{}, ambiguous: map[int64]bool{}}
	var createErrs, createNotFound, completeErrs, activateErrs atomic.Int64
	stopCreate := make(chan struct{})
	stopWork := make(chan struct{})
	var cwg, wwg sync.WaitGroup

	for i := 0; i < creators; i++ {
		cwg.Add(1)
		go func(i int) {
			defer cwg.Done()
			for n := 0; ; n++ {
				select {
				case <-stopCreate:
					return
				default:
				}
				if l.backlog() > maxBacklog {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				cmd, _ := client.NewCreateInstanceCommand().BPMNProcessId(processID).LatestVersion().
					VariablesFromMap(map[string]any{"creator": i, "n": n})
				resp, err := cmd.Send(ctx)
				cancel()
				if err != nil {
					createErrs.Add(1)
					if harness.Code(err) == codes.NotFound {
						createNotFound.Add(1) // the acknowledged deployment is gone
					}
					time.Sleep(50 * time.Millisecond)
					continue
				}
				l.created(resp.ProcessInstanceKey)
			}
		}(i)
	}

	for i := 0; i < workers; i++ {
		wwg.Add(1)
		go func(i int) {
			defer wwg.Done()
			for {
				select {
				case <-stopWork:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				jobs, err := client.NewActivateJobsCommand().JobType(jobType).MaxJobsToActivate(32).
					Timeout(jobTimeout).WorkerName(fmt.Sprintf("crash-worker-%d", i)).Send(ctx)
				cancel()
				if err != nil && harness.Code(err) != codes.DeadlineExceeded {
					activateErrs.Add(1)
					time.Sleep(50 * time.Millisecond)
				}
				if len(jobs) == 0 {
					if err == nil {
						time.Sleep(10 * time.Millisecond)
					}
					continue
				}
				var jwg sync.WaitGroup
				for _, j := range jobs {
					jwg.Add(1)
					go func(key, pi int64) {
						defer jwg.Done()
						ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
						defer cancel()
						_, err := client.NewCompleteJobCommand().JobKey(key).Send(ctx)
						if err != nil {
							completeErrs.Add(1)
							// Maybe applied before a crash, maybe not: the job comes back after
							// its timeout if not.
							l.mu.Lock()
							l.ambiguous[pi] = true
							l.mu.Unlock()
							return
						}
						l.completedJob(pi, key)
					}(j.Key, j.ProcessInstanceKey)
				}
				jwg.Wait()
			}
		}(i)
	}

	// Kill at random moments: kill k lands in the first half of its own slice of the load
	// window, so that the load goes on for at least half a slice after each restart (a restart
	// takes up to a second, and the clients reconnect after it).
	start := time.Now()
	var restarts []time.Time
	for k := 0; k < kills; k++ {
		slice := loadDur / time.Duration(kills)
		at := time.Duration(k)*slice + slice/10 + time.Duration(rng.Int63n(int64(slice*2/5)))
		time.Sleep(time.Until(start.Add(at)))
		all, _ := l.pending()
		if backups {
			requestBackup(t, z.MgmtAddr, k+1)
		}
		victim := nodes[rng.Intn(len(nodes))]
		role := ""
		if len(nodes) > 1 {
			role = fmt.Sprintf(" of node %s (partitions %s)", victim.GatewayAddr, partitionRoles(victim.MgmtAddr))
		}
		if freeze(k) {
			t.Logf("SIGSTOP #%d%s for %s at %s (acked %d, unfinished %d)", k+1, role, freezeFor, time.Since(start).Round(time.Millisecond), len(l.acked), len(all))
			victim.Freeze(freezeFor)
			t.Logf("SIGCONT")
			restarts = append(restarts, time.Now())
			continue
		}
		t.Logf("SIGKILL #%d%s at %s (acked %d, unfinished %d)", k+1, role, time.Since(start).Round(time.Millisecond), len(l.acked), len(all))
		victim.Kill()
		down := time.Now()
		if err := victim.Start(); err != nil {
			t.Fatalf("restart after kill #%d: %v", k+1, err)
		}
		t.Logf("restarted after %s", time.Since(down).Round(time.Millisecond))
		restarts = append(restarts, time.Now())
	}
	// creation goes on until the load's end, and at least 2 s after the last fault (a freeze
	// near the end outlasts the load): the check below wants an acknowledgement after each
	end := start.Add(loadDur)
	if n := len(restarts); n > 0 && restarts[n-1].Add(2*time.Second).After(end) {
		end = restarts[n-1].Add(2 * time.Second)
	}
	time.Sleep(time.Until(end))
	close(stopCreate)
	cwg.Wait()
	l.mu.Lock()
	nAcked := len(l.acked)
	l.mu.Unlock()
	t.Logf("creation stopped after %s: %d instances acknowledged", time.Since(start).Round(time.Millisecond), nAcked)
	if nAcked == 0 {
		t.Fatal("no instance creation was acknowledged")
	}
	// The server must take work again after each restart.
	l.mu.Lock()
	for i, r := range restarts {
		after := 0
		for _, at := range l.acked {
			if at.After(r) {
				after++
			}
		}
		if after == 0 {
			t.Errorf("no instance creation was acknowledged after restart #%d", i+1)
		}
	}
	l.mu.Unlock()
	if n := createNotFound.Load(); n > 0 {
		t.Errorf("%d creations answered NOT_FOUND: the acknowledged deployment of %q was lost", n, processID)
	}

	// Drain: wait until every acknowledged instance has an acknowledged completion, or only
	// ones with an ambiguous (errored) completion remain and those had time to come back.
	drainStart := time.Now()
	for {
		all, clear := l.pending()
		if len(all) == 0 || (clear == 0 && time.Since(drainStart) > 3*jobTimeout) {
			break
		}
		if time.Since(drainStart) > drain {
			t.Errorf("after %s of draining, %d acknowledged instances have no acknowledged completion (%d without any failed attempt); first: %v",
				drain, len(all), clear, first(all, 10))
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(jobTimeout + 500*time.Millisecond) // let unacknowledged creations finish too
	close(stopWork)
	wwg.Wait()

	l.mu.Lock()
	doubles := append([]string(nil), l.doubles...)
	nCompleted := len(l.completed)
	unknown := 0 // completions of instances whose creation ack was lost to a crash
	for k := range l.completed {
		if _, ok := l.acked[k]; !ok {
			unknown++
		}
	}
	l.mu.Unlock()
	t.Logf("acknowledged: %d creations, completions for %d instances (%d of instances whose creation ack was lost); errors: create %d, activate %d, complete %d",
		nAcked, nCompleted, unknown, createErrs.Load(), activateErrs.Load(), completeErrs.Load())
	for _, d := range doubles {
		t.Errorf("double completion: %s", d)
	}
	if len(l.dupKeys) > 0 {
		t.Errorf("%d instance keys were acknowledged to two creations (keys reused after a restart): %v", len(l.dupKeys), first(l.dupKeys, 10))
	}

	// An acknowledged instance without an acknowledged completion is only acceptable when a
	// CompleteJob of its job failed (its ack may have been lost to a crash) and the instance is
	// gone (CancelProcessInstance answers NOT_FOUND). With no failed CompleteJob, nobody else
	// could have completed it: it was lost or is stuck.
	all, _ := l.pending()
	var gone, lost, running []int64
	for _, k := range all {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := client.NewCancelInstanceCommand().ProcessInstanceKey(k).Send(ctx)
		cancel()
		l.mu.Lock()
		amb := l.ambiguous[k]
		l.mu.Unlock()
		switch code := harness.Code(err); {
		case code == codes.OK:
			running = append(running, k)
		case code == codes.NotFound && amb:
			gone = append(gone, k)
		case code == codes.NotFound:
			lost = append(lost, k)
		default:
			t.Errorf("probing instance %d: %s", k, harness.Describe(err))
		}
	}
	if len(gone) > 0 {
		t.Logf("%d acknowledged instances finished with their CompleteJob ack lost to a crash", len(gone))
	}
	if len(running) > 0 {
		t.Errorf("%d acknowledged instances never finished (still running; cancelled now): %v", len(running), first(running, 10))
	}
	if len(lost) > 0 {
		t.Errorf("%d acknowledged instances vanished: never completed by a worker, yet unknown to the server: %v", len(lost), first(lost, 10))
	}

	// Clean restart: the state is all there, nothing comes back.
	if err := harness.StopAll(nodes); err != nil {
		t.Errorf("SIGTERM: %v", err)
	}
	if err := harness.StartAll(nodes); err != nil {
		t.Fatalf("start after SIGTERM: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	again, err := client.NewDeployResourceCommand().AddResource(model, "one_task.bpmn").Send(ctx)
	if err != nil {
		t.Fatalf("redeploy after restart: %s", harness.Describe(err))
	}
	if p := again.Deployments[0].GetProcess(); p.Version != proc.Version || p.ProcessDefinitionKey != proc.ProcessDefinitionKey {
		t.Errorf("identical redeploy after restarts: version %d key %d, want version %d key %d (deployment lost?)",
			p.Version, p.ProcessDefinitionKey, proc.Version, proc.ProcessDefinitionKey)
	}
	deadline := time.Now().Add(jobTimeout + 2*time.Second)
	for time.Now().Before(deadline) {
		actx, acancel := context.WithTimeout(context.Background(), time.Second)
		jobs, _ := client.NewActivateJobsCommand().JobType(jobType).MaxJobsToActivate(100).Timeout(time.Minute).Send(actx)
		acancel()
		if len(jobs) > 0 {
			var pis []int64
			for _, j := range jobs {
				pis = append(pis, j.ProcessInstanceKey)
			}
			t.Errorf("after draining and a clean restart, %d jobs are activatable again (instances %v): completed work came back", len(jobs), first(pis, 10))
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	l.mu.Lock()
	var sample []int64
	for k := range l.completed {
		sample = append(sample, k)
		if len(sample) == 20 {
			break
		}
	}
	l.mu.Unlock()
	for _, k := range sample {
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := client.NewCancelInstanceCommand().ProcessInstanceKey(k).Send(cctx)
		ccancel()
		if harness.Code(err) != codes.NotFound {
			t.Errorf("completed instance %d after restart: cancel answered %s, want NOT_FOUND", k, harness.Describe(err))
		}
	}
	if backups {
		checkBackups(t, z.MgmtAddr, kills)
	}
	if err := harness.StopAll(nodes); err != nil {
		t.Errorf("final SIGTERM: %v", err)
	}
	if !t.Failed() {
		keepLog = false
		fmt.Printf("crash: PASS — %d instances acknowledged and finished across %d SIGKILLs of %d node(s), no double completion\n", nAcked, kills, len(nodes))
	} else {
		for i, n := range nodes {
			t.Logf("zest node %d log kept at %s; tail:\n%s", i, n.LogPath, n.LogTail(30))
		}
	}
}

// partitionRoles is what a node's /actuator/partitions says of its roles, for the log.
func partitionRoles(mgmt string) string {
	resp, err := http.Get("http://" + mgmt + "/actuator/partitions")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var doc map[string]struct {
		Role string `json:"role"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return err.Error()
	}
	var out []string
	for id, p := range doc {
		out = append(out, id+":"+p.Role)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// requestBackup asks for backup `id`; the kill that follows lands while it is being taken.
func requestBackup(t *testing.T, mgmt string, id int) {
	body := strings.NewReader(fmt.Sprintf(`{"backupId": %d}`, id))
	resp, err := http.Post("http://"+mgmt+"/actuator/backupRuntime", "application/json", body)
	if err != nil {
		t.Errorf("backup %d: %v", id, err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("backup %d: status %d, want 202", id, resp.StatusCode)
	}
}

// checkBackups: every backup requested before a kill is COMPLETED (it finished first) or
// FAILED (the kill interrupted it), never left IN_PROGRESS by the restart.
func checkBackups(t *testing.T, mgmt string, n int) {
	resp, err := http.Get("http://" + mgmt + "/actuator/backupRuntime")
	if err != nil {
		t.Errorf("listing backups: %v", err)
		return
	}
	defer resp.Body.Close()
	var list []struct {
		BackupID int    `json:"backupId"`
		State    string `json:"state"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Errorf("listing backups: %v", err)
		return
	}
	if len(list) != n {
		t.Errorf("%d backups listed, want %d: %+v", len(list), n, list)
	}
	for _, b := range list {
		if b.State != "COMPLETED" && b.State != "FAILED" {
			t.Errorf("backup %d is %s after the restarts, want COMPLETED or FAILED", b.BackupID, b.State)
		}
	}
	t.Logf("backups after the kills: %+v", list)
}

func first(ks []int64, n int) []int64 {
	if len(ks) > n {
		return ks[:n]
	}
	return ks
}
