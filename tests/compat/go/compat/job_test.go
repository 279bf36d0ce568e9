package compat

import (
	"context"
	"testing"
	"time"

	"github.com/camunda/zeebe/clients/go/v8/pkg/entities"
	"google.golang.org/grpc/codes"

	"zest/tests/compat/harness"
)

// A parked ActivateJobs (long polling) returns as soon as a job of its type is created.
func TestActivateJobsLongPolling(t *testing.T) {
	id, _ := deployModel(t, "simple_task.bpmn", "zest_proc")
	type res struct {
		jobs []entities.Job
		err  error
		at   time.Time
	}
	ch := make(chan res, 1)
	ctx := harness.Ctx(t, 20*time.Second) // the client asks for requestTimeout = 18 s
	go func() {
		jobs, err := cli.NewActivateJobsCommand().JobType(id + ".task").MaxJobsToActivate(5).
			Timeout(30 * time.Second).WorkerName("long-poller").Send(ctx)
		ch <- res{jobs, err, time.Now()}
	}()
	time.Sleep(1500 * time.Millisecond) // let the request park
	select {
	case r := <-ch:
		if target.External && r.err == nil && len(r.jobs) == 0 {
			// zeebe-process-test's in-memory gateway (the Zeebe anchor used to validate these
			// tests) answers ActivateJobs at once, without long polling; a Zeebe broker's
			// gateway long-polls (enabled by default). Zest must long-poll.
			t.Skip("server answered ActivateJobs at once with no jobs: it does not long-poll")
		}
		t.Fatalf("ActivateJobs returned before any job existed: %d jobs, %s", len(r.jobs), harness.Describe(r.err))
	default:
	}
	pi := createInstance(t, id, map[string]any{"x": 1})
	created := time.Now()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("long-polling ActivateJobs: %s", harness.Describe(r.err))
		}
		if len(r.jobs) != 1 || r.jobs[0].ProcessInstanceKey != pi.ProcessInstanceKey {
			t.Fatalf("long-polling ActivateJobs: got %d jobs, want the job of instance %d", len(r.jobs), pi.ProcessInstanceKey)
		}
		if lag := r.at.Sub(created); lag > 3*time.Second {
			t.Errorf("parked ActivateJobs returned %s after the job was created, want promptly", lag)
		}
		j := r.jobs[0]
		if j.Worker != "long-poller" || j.Type != id+".task" || j.ElementId != "task" || j.BpmnProcessId != id || j.Retries != 3 {
			t.Errorf("activated job fields: %+v", j.ActivatedJob)
		}
		dl := time.UnixMilli(j.Deadline)
		if dl.Before(time.Now().Add(20*time.Second)) || dl.After(time.Now().Add(40*time.Second)) {
			t.Errorf("job deadline %s, want about now + 30 s", dl)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("parked ActivateJobs did not return within 10 s of the job being created")
	}
}

// maxJobsToActivate bounds a batch; the rest stay for the next call.
func TestActivateJobsBatch(t *testing.T) {
	id, _ := deployModel(t, "simple_task.bpmn", "zest_proc")
	for i := 0; i < 5; i++ {
		createInstance(t, id, map[string]any{"i": i})
	}
	seen := map[int64]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) < 5 && time.Now().Before(deadline) {
		jobs := activate(t, id+".task", 3, 30*time.Second, 3*time.Second)
		if len(jobs) > 3 {
			t.Fatalf("maxJobsToActivate=3 returned %d jobs", len(jobs))
		}
		for _, j := range jobs {
			if seen[j.Key] {
				t.Fatalf("job %d activated twice while its timeout had not expired", j.Key)
			}
			seen[j.Key] = true
		}
	}
	if len(seen) != 5 {
		t.Fatalf("activated %d distinct jobs, want 5", len(seen))
	}
	expectNoJob(t, id+".task", 1*time.Second, "all 5 jobs are activated")
}

func TestCompleteJobWithVariables(t *testing.T) {
	id, _ := deployModel(t, "simple_task.bpmn", "zest_proc")
	ch := createWithResultAsync(t, id, map[string]any{"a": 1, "nested": map[string]any{"k": "v"}}, 20*time.Second)
	job := activateOne(t, id+".task", 30*time.Second, 10*time.Second)
	v := jobVars(t, job)
	if v["a"] != 1.0 {
		t.Errorf("job variables %v, want a=1", v)
	}
	complete(t, job.Key, map[string]any{"a": 2, "b": []any{"x", true, nil}, "c": map[string]any{"deep": 1.5}})
	rv := decodeVars(t, awaitResult(t, ch, 15*time.Second).Variables)
	if rv["a"] != 2.0 || rv["c"].(map[string]any)["deep"] != 1.5 || len(rv["b"].([]any)) != 3 ||
		rv["nested"].(map[string]any)["k"] != "v" {
		t.Errorf("result variables %v", rv)
	}
	// Completing the same job again: the job no longer exists.
	// (Zeebe answers NOT_FOUND "Expected to complete job with key '…', but no such job was found".)
	_, err := cli.NewCompleteJobCommand().JobKey(job.Key).Send(harness.Ctx(t, 10*time.Second))
	wantCode(t, "complete a completed job", err, codes.NotFound)
}

// FailJob with retries left and a retryBackoff: the job is activatable again only after the
// backoff, with the new retries.
func TestFailJobRetryBackoff(t *testing.T) {
	id, _ := deployModel(t, "simple_task.bpmn", "zest_proc")
	pi := createInstance(t, id, nil)
	job := activateOne(t, id+".task", 30*time.Second, 10*time.Second)
	if job.Retries != 3 {
		t.Fatalf("job retries %d, want 3 (from the model)", job.Retries)
	}
	const backoff = 3 * time.Second
	failed := time.Now()
	_, err := cli.NewFailJobCommand().JobKey(job.Key).Retries(2).RetryBackoff(backoff).
		ErrorMessage("transient failure").Send(harness.Ctx(t, 10*time.Second))
	if err != nil {
		t.Fatalf("fail job: %s", harness.Describe(err))
	}
	expectNoJob(t, id+".task", 1500*time.Millisecond, "during the retry backoff")
	again := activateOne(t, id+".task", 30*time.Second, 15*time.Second)
	waited := time.Since(failed)
	if again.Key != job.Key || again.ProcessInstanceKey != pi.ProcessInstanceKey || again.Retries != 2 {
		t.Fatalf("after backoff: got job %d (instance %d, retries %d), want job %d with retries 2",
			again.Key, again.ProcessInstanceKey, again.Retries, job.Key)
	}
	if waited < backoff-300*time.Millisecond {
		t.Errorf("job reactivated %s after the failure, before its %s backoff", waited, backoff)
	}
	// Fail without backoff: activatable right away.
	_, err = cli.NewFailJobCommand().JobKey(job.Key).Retries(1).Send(harness.Ctx(t, 10*time.Second))
	if err != nil {
		t.Fatalf("fail job (no backoff): %s", harness.Describe(err))
	}
	third := activateOne(t, id+".task", 30*time.Second, 5*time.Second)
	if third.Key != job.Key || third.Retries != 1 {
		t.Fatalf("after fail without backoff: job %d retries %d, want job %d retries 1", third.Key, third.Retries, job.Key)
	}
	complete(t, third.Key, nil)
}

// FailJob with retries 0 raises an incident: the job is not activatable, not even after its
// retries are updated, until the incident is resolved.
func TestFailJobNoRetriesIncident(t *testing.T) {
	id, _ := deployModel(t, "simple_task.bpmn", "zest_proc")
	ch := createWithResultAsync(t, id, nil, 30*time.Second)
	job := activateOne(t, id+".task", 30*time.Second, 10*time.Second)
	ctx := harness.Ctx(t, 20*time.Second)
	if _, err := cli.NewFailJobCommand().JobKey(job.Key).Retries(0).ErrorMessage("permanent failure").Send(ctx); err != nil {
		t.Fatalf("fail job with 0 retries: %s", harness.Describe(err))
	}
	expectNoJob(t, id+".task", 1*time.Second, "job failed with no retries (incident)")

	// Resolving the incident while the job has no retries left is refused: FAILED_PRECONDITION
	// (Zeebe: "Command 'RESOLVE' rejected with code 'INVALID_STATE': Expected to resolve incident
	// with key '…', but job with key '…' has no retries left. Please update the job retries and
	// retry resolving the incident"). The probe finds the incident key that way.
	inc := probeIncident(t, job.Key, 200, codes.FailedPrecondition)

	if _, err := cli.NewUpdateJobRetriesCommand().JobKey(job.Key).Retries(2).Send(ctx); err != nil {
		t.Fatalf("update retries: %s", harness.Describe(err))
	}
	expectNoJob(t, id+".task", 1*time.Second, "retries updated but incident not resolved")

	if _, err := cli.NewResolveIncidentCommand().IncidentKey(inc).Send(ctx); err != nil {
		t.Fatalf("resolve incident %d after updating retries: %s", inc, harness.Describe(err))
	}
	_, err := cli.NewResolveIncidentCommand().IncidentKey(inc).Send(ctx)
	wantCode(t, "resolve an already resolved incident", err, codes.NotFound)

	again := activateOne(t, id+".task", 30*time.Second, 10*time.Second)
	if again.Key != job.Key || again.Retries != 2 {
		t.Fatalf("after resolve: job %d retries %d, want job %d retries 2", again.Key, again.Retries, job.Key)
	}
	complete(t, again.Key, map[string]any{"recovered": true})
	if v := decodeVars(t, awaitResult(t, ch, 15*time.Second).Variables); v["recovered"] != true {
		t.Errorf("result variables %v, want recovered=true", v)
	}
}

// UpdateJobRetries on an activated job changes the retries the next activation sees.
func TestUpdateRetriesOnActiveJob(t *testing.T) {
	id, _ := deployModel(t, "simple_task.bpmn", "zest_proc")
	createInstance(t, id, nil)
	job := activateOne(t, id+".task", 30*time.Second, 10*time.Second)
	ctx := harness.Ctx(t, 10*time.Second)
	if _, err := cli.NewUpdateJobRetriesCommand().JobKey(job.Key).Retries(7).Send(ctx); err != nil {
		t.Fatalf("update retries: %s", harness.Describe(err))
	}
	if _, err := cli.NewFailJobCommand().JobKey(job.Key).Retries(6).Send(ctx); err != nil {
		t.Fatalf("fail: %s", harness.Describe(err))
	}
	again := activateOne(t, id+".task", 30*time.Second, 10*time.Second)
	if again.Key != job.Key || again.Retries != 6 {
		t.Fatalf("got job %d retries %d, want job %d retries 6", again.Key, again.Retries, job.Key)
	}
}

// ThrowError with an error code no boundary event catches raises an incident.
func TestThrowErrorWithoutCatchRaisesIncident(t *testing.T) {
	id, _ := deployModel(t, "simple_task.bpmn", "zest_proc")
	createInstance(t, id, nil)
	job := activateOne(t, id+".task", 30*time.Second, 10*time.Second)
	ctx := harness.Ctx(t, 10*time.Second)
	if _, err := cli.NewThrowErrorCommand().JobKey(job.Key).ErrorCode("NOBODY_CATCHES_THIS").
		ErrorMessage("business error").Send(ctx); err != nil {
		t.Fatalf("throw error: %s", harness.Describe(err))
	}
	expectNoJob(t, id+".task", 1*time.Second, "error thrown, no catch event")
	// Surprise (asserted as Zeebe does it): the job still exists, in state ERROR_THROWN, so
	// completing it is FAILED_PRECONDITION ("Command 'COMPLETE' rejected with code
	// 'INVALID_STATE': Expected to complete job with key '…', but it is in state
	// 'ERROR_THROWN'"), not NOT_FOUND.
	_, err := cli.NewCompleteJobCommand().JobKey(job.Key).Send(ctx)
	wantCode(t, "complete a job whose error was thrown", err, codes.FailedPrecondition)
	resolveIncidentAfter(t, job.Key, 200)
	// Zeebe: resolving the unhandled-error incident makes the job activatable again.
	again := activateOne(t, id+".task", 30*time.Second, 10*time.Second)
	if again.Key != job.Key {
		t.Fatalf("after resolving: activated job %d, want %d", again.Key, job.Key)
	}
	complete(t, again.Key, nil)
}

// A job whose activation timeout passes without completion becomes activatable again.
func TestJobTimeoutReactivates(t *testing.T) {
	id, _ := deployModel(t, "simple_task.bpmn", "zest_proc")
	createInstance(t, id, nil)
	first := activateOne(t, id+".task", 1*time.Second, 10*time.Second)
	activated := time.Now()
	second := activateOne(t, id+".task", 30*time.Second, 15*time.Second)
	if second.Key != first.Key {
		t.Fatalf("reactivated job %d, want %d", second.Key, first.Key)
	}
	if d := time.Since(activated); d < 800*time.Millisecond {
		t.Errorf("job reactivated after %s, before its 1 s timeout", d)
	}
	if second.Retries != first.Retries {
		t.Errorf("timeout changed retries: %d -> %d", first.Retries, second.Retries)
	}
	complete(t, second.Key, nil)
}

// ioMapping inputs are visible to the job (as local variables of the task), outputs are the
// only thing a completion propagates to the process scope; task headers reach the worker.
func TestIoMappingAndTaskHeaders(t *testing.T) {
	id, _ := deployModel(t, "service_task.bpmn", "zest_proc")
	ch := createWithResultAsync(t, id, map[string]any{"amount": 5}, 20*time.Second)
	job := activateOne(t, id+".work", 30*time.Second, 10*time.Second)
	v := jobVars(t, job)
	if v["amount"] != 5.0 || v["localAmount"] != 5.0 || v["amountPlusOne"] != 6.0 {
		t.Errorf("job variables %v, want amount=5 localAmount=5 amountPlusOne=6", v)
	}
	h, err := job.GetCustomHeadersAsMap()
	if err != nil {
		t.Fatalf("custom headers %q: %v", job.CustomHeaders, err)
	}
	if h["region"] != "eu-west" || h["priority"] != "high" || len(h) != 2 {
		t.Errorf("custom headers %v, want region=eu-west priority=high", h)
	}
	if job.Retries != 3 || job.ElementId != "work" {
		t.Errorf("job retries %d element %q, want 3 and work", job.Retries, job.ElementId)
	}
	complete(t, job.Key, map[string]any{"resultValue": 42, "extra": "not propagated"})
	rv := decodeVars(t, awaitResult(t, ch, 15*time.Second).Variables)
	if rv["amount"] != 5.0 || rv["finalValue"] != 42.0 {
		t.Errorf("result variables %v, want amount=5 finalValue=42", rv)
	}
	for _, k := range []string{"localAmount", "amountPlusOne", "resultValue", "extra"} {
		if _, ok := rv[k]; ok {
			t.Errorf("variable %s leaked into the process scope: %v", k, rv)
		}
	}
}

// fetchVariables on activation restricts the variables a job carries.
func TestActivateFetchVariables(t *testing.T) {
	id, _ := deployModel(t, "simple_task.bpmn", "zest_proc")
	createInstance(t, id, map[string]any{"a": 1, "b": 2, "c": 3})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var jobs []entities.Job
	for len(jobs) == 0 && ctx.Err() == nil {
		var err error
		jobs, err = cli.NewActivateJobsCommand().JobType(id+".task").MaxJobsToActivate(1).
			Timeout(30*time.Second).FetchVariables("a", "c", "missing").Send(ctx)
		if err != nil {
			t.Fatalf("activate: %s", harness.Describe(err))
		}
	}
	if len(jobs) != 1 {
		t.Fatal("no job")
	}
	v := jobVars(t, jobs[0])
	if v["a"] != 1.0 || v["c"] != 3.0 || len(v) != 2 {
		t.Errorf("fetchVariables [a c missing]: job variables %v, want exactly a=1 c=3", v)
	}
}
