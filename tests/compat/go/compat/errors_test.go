package compat

import (
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/camunda/zeebe/clients/go/v8/pkg/pb"
	"google.golang.org/grpc/codes"

	"zest/tests/compat/harness"
)

// Error codes. Messages differ between Zeebe and Zest on purpose: only codes and key substrings
// (ids, resource names, line numbers) are asserted.

func TestErrCreateUnknownProcess(t *testing.T) {
	ctx := harness.Ctx(t, 10*time.Second)
	missing := harness.UniqueID("no_such_process")
	_, err := cli.NewCreateInstanceCommand().BPMNProcessId(missing).LatestVersion().Send(ctx)
	wantCode(t, "create instance of unknown process id", err, codes.NotFound)
	if !strings.Contains(harness.Msg(err), missing) {
		t.Errorf("message %q does not name the process id %q", harness.Msg(err), missing)
	}
	_, err = cli.NewCreateInstanceCommand().ProcessDefinitionKey(unknownKey).Send(ctx)
	wantCode(t, "create instance of unknown process definition key", err, codes.NotFound)
	_, err = cli.NewCreateInstanceCommand().BPMNProcessId(missing).LatestVersion().WithResult().Send(ctx)
	wantCode(t, "create instance with result of unknown process id", err, codes.NotFound)
}

// The official client refuses non-object variables itself, so these go through the raw stub.
func TestErrVariablesNotAnObject(t *testing.T) {
	id, _ := deployModel(t, "simple_task.bpmn", "zest_proc")
	ctx := harness.Ctx(t, 15*time.Second)
	for _, vars := range []string{`[1,2,3]`, `"a string"`, `42`, `{"unterminated": `, `not json`} {
		_, err := gw.CreateProcessInstance(ctx, &pb.CreateProcessInstanceRequest{BpmnProcessId: id, Version: -1, Variables: vars})
		wantInvalidVariables(t, "create instance with variables "+vars, err)
	}
	pi := createInstance(t, id, nil)
	_, err := gw.SetVariables(ctx, &pb.SetVariablesRequest{ElementInstanceKey: pi.ProcessInstanceKey, Variables: `[1]`})
	wantInvalidVariables(t, "set variables [1]", err)
	job := activateOne(t, id+".task", 30*time.Second, 10*time.Second)
	_, err = gw.CompleteJob(ctx, &pb.CompleteJobRequest{JobKey: job.Key, Variables: `"x"`})
	wantInvalidVariables(t, `complete job with variables "x"`, err)
	// The rejected completion left the job alone.
	if _, err := gw.CompleteJob(ctx, &pb.CompleteJobRequest{JobKey: job.Key, Variables: `{"ok":true}`}); err != nil {
		t.Fatalf("complete after rejected completion: %s", harness.Describe(err))
	}
}

// wantInvalidVariables: a Zeebe broker's gateway answers INVALID_ARGUMENT ("Property
// 'variables' is invalid: Expected document to be a root level object, but was 'ARRAY'", or a
// JSON parse error). zeebe-process-test's in-memory gateway, the anchor these tests are
// validated on, does not map the conversion error and answers UNKNOWN ("Application error
// processing RPC"); that is tolerated (logged) only against an external server. Zest must answer
// INVALID_ARGUMENT.
func wantInvalidVariables(t *testing.T, what string, err error) {
	t.Helper()
	if target.External && harness.Code(err) == codes.Unknown {
		t.Logf("%s: external server answered UNKNOWN (%q), not INVALID_ARGUMENT", what, harness.Msg(err))
		return
	}
	wantCode(t, what, err, codes.InvalidArgument)
}

var lineRe = regexp.MustCompile(`(?i)line\D{0,12}(\d+)`)

// deployRejected deploys testdata/file under a unique resource name, requires INVALID_ARGUMENT
// with a message that names the resource and contains every one of mentions, and returns the
// message.
func deployRejected(t *testing.T, what, file string, mentions ...string) string {
	t.Helper()
	name := harness.UniqueID(strings.TrimSuffix(file, ".bpmn")) + ".bpmn"
	xml := harness.Model(t, file, "", "")
	_, err := cli.NewDeployResourceCommand().AddResource(xml, name).Send(harness.Ctx(t, 10*time.Second))
	wantCode(t, what, err, codes.InvalidArgument)
	msg := harness.Msg(err)
	for _, want := range append([]string{name}, mentions...) {
		if !strings.Contains(msg, want) {
			t.Errorf("%s: message does not contain %q: %q", what, want, msg)
		}
	}
	return msg
}

func TestErrDeployMalformedXML(t *testing.T) {
	msg := deployRejected(t, "deploy malformed XML", "malformed.bpmn")
	// The start tag opened on line 4 is closed by the wrong end tag on line 5.
	m := lineRe.FindStringSubmatch(msg)
	if m == nil {
		t.Errorf("message has no line number: %q", msg)
	} else if m[1] != "5" {
		t.Errorf("message reports line %s, want 5: %q", m[1], msg)
	}
	// Not even well-formed at all.
	_, err := cli.NewDeployResourceCommand().AddResource([]byte("this is not xml"), "garbage.bpmn").Send(harness.Ctx(t, 10*time.Second))
	wantCode(t, "deploy garbage", err, codes.InvalidArgument)
}

func TestErrDeployUnknownFlowTarget(t *testing.T) {
	deployRejected(t, "deploy model whose flow targets a missing element", "invalid_unknown_target.bpmn", "no_such_element")
	// Nothing of a rejected deployment is deployed.
	_, err := cli.NewCreateInstanceCommand().BPMNProcessId("zest_invalid_proc").LatestVersion().Send(harness.Ctx(t, 10*time.Second))
	wantCode(t, "create instance of a rejected process", err, codes.NotFound)
}

func TestErrDeployUnsupportedElement(t *testing.T) {
	deployRejected(t, "deploy model with a complex gateway", "unsupported_element.bpmn", "cgw")
}

// A deployment with one bad resource deploys nothing, not even its good resources.
func TestErrDeployIsAtomic(t *testing.T) {
	id := harness.UniqueID(t.Name())
	good := harness.Model(t, "simple_task.bpmn", "zest_proc", id)
	bad := harness.Model(t, "malformed.bpmn", "", "")
	ctx := harness.Ctx(t, 10*time.Second)
	_, err := cli.NewDeployResourceCommand().AddResource(good, id+".bpmn").AddResource(bad, "bad.bpmn").Send(ctx)
	wantCode(t, "deploy good+bad resources", err, codes.InvalidArgument)
	_, err = cli.NewCreateInstanceCommand().BPMNProcessId(id).LatestVersion().Send(ctx)
	wantCode(t, "create instance of the good half of a rejected deployment", err, codes.NotFound)
}

func TestErrDeployNoResources(t *testing.T) {
	_, err := gw.DeployResource(harness.Ctx(t, 10*time.Second), &pb.DeployResourceRequest{})
	wantCode(t, "deploy without resources", err, codes.InvalidArgument)
}

func TestErrUnknownJobKey(t *testing.T) {
	ctx := harness.Ctx(t, 15*time.Second)
	_, err := cli.NewCompleteJobCommand().JobKey(unknownKey).Send(ctx)
	wantCode(t, "complete unknown job", err, codes.NotFound)
	_, err = cli.NewFailJobCommand().JobKey(unknownKey).Retries(1).Send(ctx)
	wantCode(t, "fail unknown job", err, codes.NotFound)
	_, err = cli.NewThrowErrorCommand().JobKey(unknownKey).ErrorCode("E").Send(ctx)
	wantCode(t, "throw error on unknown job", err, codes.NotFound)
	_, err = cli.NewUpdateJobRetriesCommand().JobKey(unknownKey).Retries(3).Send(ctx)
	wantCode(t, "update retries of unknown job", err, codes.NotFound)
}

func TestErrCompleteJobTwice(t *testing.T) {
	id, _ := deployModel(t, "simple_task.bpmn", "zest_proc")
	createInstance(t, id, nil)
	job := activateOne(t, id+".task", 30*time.Second, 10*time.Second)
	complete(t, job.Key, map[string]any{"first": true})
	// Zeebe: NOT_FOUND "Command 'COMPLETE' rejected with code 'NOT_FOUND': Expected to complete
	// job with key '…', but no such job was found".
	_, err := cli.NewCompleteJobCommand().JobKey(job.Key).Send(harness.Ctx(t, 10*time.Second))
	wantCode(t, "complete a job twice", err, codes.NotFound)
	if !strings.Contains(harness.Msg(err), itoa(job.Key)) {
		t.Errorf("message does not name job key %d: %q", job.Key, harness.Msg(err))
	}
}

func TestErrUnknownInstanceAndScope(t *testing.T) {
	ctx := harness.Ctx(t, 15*time.Second)
	_, err := cli.NewCancelInstanceCommand().ProcessInstanceKey(unknownKey).Send(ctx)
	wantCode(t, "cancel unknown instance", err, codes.NotFound)
	c, err := cli.NewSetVariablesCommand().ElementInstanceKey(unknownKey).VariablesFromString(`{"a":1}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Send(ctx)
	wantCode(t, "set variables on unknown scope", err, codes.NotFound)
	_, err = cli.NewResolveIncidentCommand().IncidentKey(unknownKey).Send(ctx)
	wantCode(t, "resolve unknown incident", err, codes.NotFound)
}

func TestErrActivateJobsInvalidRequest(t *testing.T) {
	ctx := harness.Ctx(t, 10*time.Second)
	recv := func(req *pb.ActivateJobsRequest) error {
		stream, err := gw.ActivateJobs(ctx, req)
		if err != nil {
			return err
		}
		for {
			if _, err := stream.Recv(); err != nil {
				return err
			}
		}
	}
	// A broker's gateway asks no partition for zero jobs and answers without jobs (zbctl's own
	// tests expect `{"jobs": []}`); the anchor's in-memory gateway passes the request to the
	// engine, which rejects it.
	err := recv(&pb.ActivateJobsRequest{Type: "x", MaxJobsToActivate: 0, Timeout: 1000, RequestTimeout: -1})
	if err == io.EOF {
		err = nil
	}
	if target.External {
		if err != nil {
			t.Logf("external server: maxJobsToActivate 0 answered %v (a broker's gateway answers no jobs)", err)
		}
	} else if err != nil {
		t.Errorf("activate with maxJobsToActivate 0: %v, want no jobs and no error", err)
	}
	err = recv(&pb.ActivateJobsRequest{Type: "", MaxJobsToActivate: 1, Timeout: 1000, RequestTimeout: -1})
	wantCode(t, "activate with empty type", err, codes.InvalidArgument)
}
