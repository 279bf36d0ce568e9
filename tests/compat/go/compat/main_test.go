// Package compat holds black-box compatibility tests for a Zeebe-compatible gateway, driven by
// the official Zeebe Go client (v8.3.0). The same tests run against the real Zeebe engine
// (ZEEBE_ADDRESS=host:port), which is the oracle, and against Zest (ZEST_BIN=path/to/zest).
package compat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/camunda/zeebe/clients/go/v8/pkg/entities"
	"github.com/camunda/zeebe/clients/go/v8/pkg/pb"
	"github.com/camunda/zeebe/clients/go/v8/pkg/zbc"
	"google.golang.org/grpc/codes"

	"zest/tests/compat/harness"
)

var (
	target *harness.Target
	cli    zbc.Client
	gw     pb.GatewayClient // raw stub, for requests the client library would refuse to send
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	target, err = harness.Acquire()
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: cannot get a server:", err)
		return 1
	}
	cli, err = harness.NewClient(target.Address)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: client:", err)
		_ = target.Release()
		return 1
	}
	raw, conn, err := harness.NewRawGateway(target.Address)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: raw client:", err)
		_ = target.Release()
		return 1
	}
	gw = raw
	mode := "external ZEEBE_ADDRESS"
	if !target.External {
		mode = "zest started by the harness: " + target.Zest.Bin
	}
	fmt.Printf("compat: target %s (%s)\n", target.Address, mode)
	code := m.Run()
	_ = cli.Close()
	_ = conn.Close()
	if err := target.Release(); err != nil {
		fmt.Fprintln(os.Stderr, "compat: server did not stop cleanly:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// ---------------------------------------------------------------------------------------------
// helpers

// unknownKey is a well-formed partition-1 key (1<<51 | counter) that no server has handed out.
const unknownKey int64 = 1<<51 | 1<<45

// deployModel deploys testdata/file with `token` replaced by a fresh unique id, and returns that
// id (it is the process id, and the prefix of the job types in our models).
func deployModel(t *testing.T, file, token string) (string, *pb.ProcessMetadata) {
	t.Helper()
	id := harness.UniqueID(t.Name())
	xml := harness.Model(t, file, token, id)
	p := deployXML(t, xml, id+".bpmn")
	if p.BpmnProcessId != id {
		t.Fatalf("deployed process id %q, want %q", p.BpmnProcessId, id)
	}
	return id, p
}

func deployXML(t *testing.T, xml []byte, name string) *pb.ProcessMetadata {
	t.Helper()
	resp, err := cli.NewDeployResourceCommand().AddResource(xml, name).Send(harness.Ctx(t, 20*time.Second))
	if err != nil {
		t.Fatalf("deploy %s: %s", name, harness.Describe(err))
	}
	if len(resp.Deployments) != 1 || resp.Deployments[0].GetProcess() == nil {
		t.Fatalf("deploy %s: want exactly one process in the response, got %v", name, resp.Deployments)
	}
	return resp.Deployments[0].GetProcess()
}

func createInstance(t *testing.T, processID string, vars map[string]any) *pb.CreateProcessInstanceResponse {
	t.Helper()
	cmd := cli.NewCreateInstanceCommand().BPMNProcessId(processID).LatestVersion()
	if vars != nil {
		var err error
		cmd, err = cmd.VariablesFromMap(vars)
		if err != nil {
			t.Fatal(err)
		}
	}
	resp, err := cmd.Send(harness.Ctx(t, 20*time.Second))
	if err != nil {
		t.Fatalf("create instance of %s: %s", processID, harness.Describe(err))
	}
	cancelAtEnd(t, resp.ProcessInstanceKey)
	return resp
}

// cancelAtEnd cancels the instance when the test ends (ignoring NOT_FOUND: it finished), so no
// test leaves live instances (and their incidents or timers) behind for the next one.
func cancelAtEnd(t *testing.T, key int64) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = cli.NewCancelInstanceCommand().ProcessInstanceKey(key).Send(ctx)
	})
}

type withResult struct {
	resp    *pb.CreateProcessInstanceWithResultResponse
	err     error
	elapsed time.Duration
}

// createWithResultAsync starts CreateProcessInstanceWithResult in a goroutine; the client derives
// the request timeout from the context deadline d.
func createWithResultAsync(t *testing.T, processID string, vars map[string]any, d time.Duration, fetch ...string) <-chan withResult {
	t.Helper()
	ch := make(chan withResult, 1)
	cmd := cli.NewCreateInstanceCommand().BPMNProcessId(processID).LatestVersion()
	if vars != nil {
		var err error
		cmd, err = cmd.VariablesFromMap(vars)
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx := harness.Ctx(t, d)
	go func() {
		start := time.Now()
		resp, err := cmd.WithResult().FetchVariables(fetch...).Send(ctx)
		ch <- withResult{resp, err, time.Since(start)}
	}()
	return ch
}

func awaitResult(t *testing.T, ch <-chan withResult, d time.Duration) *pb.CreateProcessInstanceWithResultResponse {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("create instance with result: %s", harness.Describe(r.err))
		}
		cancelAtEnd(t, r.resp.ProcessInstanceKey)
		return r.resp
	case <-time.After(d):
		t.Fatalf("create instance with result did not return within %s", d)
		return nil
	}
}

func decodeVars(t *testing.T, s string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("variables %q are not a JSON object: %v", s, err)
	}
	return m
}

func jobVars(t *testing.T, j entities.Job) map[string]any {
	t.Helper()
	return decodeVars(t, j.Variables)
}

// activate runs one ActivateJobs call that long-polls for (about) d and returns what it got.
func activate(t *testing.T, jobType string, max int32, jobTimeout, d time.Duration) []entities.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	jobs, err := cli.NewActivateJobsCommand().JobType(jobType).MaxJobsToActivate(max).
		Timeout(jobTimeout).WorkerName("compat-" + t.Name()).Send(ctx)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && harness.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("activate jobs %s: %s", jobType, harness.Describe(err))
	}
	return jobs
}

// activateOne waits (up to d) for exactly one job of jobType. It long-polls, and also works
// against a gateway that answers ActivateJobs at once (no long polling), by asking again.
func activateOne(t *testing.T, jobType string, jobTimeout, d time.Duration) entities.Job {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("no job of type %s became activatable within %s", jobType, d)
		}
		start := time.Now()
		jobs := activate(t, jobType, 1, jobTimeout, left)
		if len(jobs) > 1 {
			t.Fatalf("asked for 1 job of type %s, got %d", jobType, len(jobs))
		}
		if len(jobs) == 1 {
			return jobs[0]
		}
		if time.Since(start) < 100*time.Millisecond {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// expectNoJob asserts that no job of jobType can be activated during d (polling repeatedly, so
// it holds whether or not the gateway long-polls).
func expectNoJob(t *testing.T, jobType string, d time.Duration, why string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		start := time.Now()
		if jobs := activate(t, jobType, 10, 30*time.Second, left); len(jobs) != 0 {
			t.Fatalf("%s: expected no activatable job of type %s, got %d (first key %d)", why, jobType, len(jobs), jobs[0].Key)
		}
		if time.Since(start) < 100*time.Millisecond {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func complete(t *testing.T, jobKey int64, vars map[string]any) {
	t.Helper()
	cmd := cli.NewCompleteJobCommand().JobKey(jobKey)
	var err error
	if vars != nil {
		var c interface {
			Send(context.Context) (*pb.CompleteJobResponse, error)
		}
		c, err = cmd.VariablesFromMap(vars)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Send(harness.Ctx(t, 10*time.Second))
	} else {
		_, err = cmd.Send(harness.Ctx(t, 10*time.Second))
	}
	if err != nil {
		t.Fatalf("complete job %d: %s", jobKey, harness.Describe(err))
	}
}

// resolveIncidentAfter finds and resolves the incident created for something with key `after`
// (a job key or a process instance key).
//
// The gRPC API has no way to list incidents (Operate does that in Camunda), so a black-box test
// has to find the incident key another way. Keys are handed out per partition from a counter
// (partition << 51 | counter, as in Zeebe), and an incident is created after the element or job
// it belongs to, so its key is a little above that key on the same partition. We probe upward
// with ResolveIncident: a key that is not an incident answers NOT_FOUND. Tests run one at a time
// and each cancels its instances at the end, so the first incident found is this test's own.
func resolveIncidentAfter(t *testing.T, after int64, maxProbe int) int64 {
	t.Helper()
	return probeIncident(t, after, maxProbe, codes.OK)
}

// probeIncident sends ResolveIncident to the keys after `after` until one answers something
// other than NOT_FOUND, and requires that answer to be `want` (OK: the incident got resolved).
func probeIncident(t *testing.T, after int64, maxProbe int, want codes.Code) int64 {
	t.Helper()
	for k := after + 1; k <= after+int64(maxProbe); k++ {
		_, err := cli.NewResolveIncidentCommand().IncidentKey(k).Send(harness.Ctx(t, 10*time.Second))
		switch harness.Code(err) {
		case codes.NotFound:
			continue
		case want:
			return k
		default:
			t.Fatalf("resolve incident %d (probing after %d): want %s, got %s", k, after, want, harness.Describe(err))
		}
	}
	t.Fatalf("no incident found among the %d keys after %d", maxProbe, after)
	return 0
}

func wantCode(t *testing.T, what string, err error, want codes.Code) {
	t.Helper()
	if got := harness.Code(err); got != want {
		t.Fatalf("%s: want %s, got %s", what, want, harness.Describe(err))
	}
}

// waitInstanceGone waits (up to d) until the instance no longer exists (completed). Completion
// is processed asynchronously after CompleteJob is acknowledged, so it polls with a harmless
// SetVariables({}) until that answers NOT_FOUND, and then requires CancelProcessInstance to
// answer NOT_FOUND as well.
func waitInstanceGone(t *testing.T, key int64, d time.Duration) {
	t.Helper()
	ctx := harness.Ctx(t, d)
	for {
		_, err := gw.SetVariables(ctx, &pb.SetVariablesRequest{ElementInstanceKey: key, Variables: `{}`})
		if harness.Code(err) == codes.NotFound {
			break
		}
		if err != nil && ctx.Err() == nil {
			t.Fatalf("probing instance %d with SetVariables: %s", key, harness.Describe(err))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("instance %d still exists %s after it should have completed", key, d)
		case <-time.After(50 * time.Millisecond):
		}
	}
	_, err := cli.NewCancelInstanceCommand().ProcessInstanceKey(key).Send(ctx)
	if err == nil {
		t.Fatalf("instance %d was still running (the completion probe cancelled it)", key)
	}
	wantCode(t, "cancel a completed instance", err, codes.NotFound)
}

func itoa(k int64) string { return fmt.Sprintf("%d", k) }
