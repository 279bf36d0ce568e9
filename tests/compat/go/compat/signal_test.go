package compat

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"zest/tests/compat/harness"
)

func broadcast(t *testing.T, name string, vars map[string]any) (int64, error) {
	t.Helper()
	cmd := cli.NewBroadcastSignalCommand().SignalName(name)
	if vars != nil {
		var err error
		cmd, err = cmd.VariablesFromMap(vars)
		if err != nil {
			t.Fatal(err)
		}
	}
	resp, err := cmd.Send(harness.Ctx(t, 10*time.Second))
	if err != nil {
		return 0, err
	}
	return resp.Key, nil
}

// BroadcastSignal: a signal catch event waiting in an instance gets the signal and its
// variables; a non-interrupting signal boundary event fires beside its task; a signal nobody
// waits for is accepted and does nothing.
func TestBroadcastSignalTriggersCatchAndBoundaryEvents(t *testing.T) {
	id, _ := deployModel(t, "signal_catch.bpmn", "zest_proc")
	inst := createInstance(t, id, map[string]any{"orderId": id})
	cancelAtEnd(t, inst.ProcessInstanceKey)

	if _, err := broadcast(t, id+"-nobody", map[string]any{"x": 1}); err != nil {
		t.Fatalf("broadcast: %s", harness.Describe(err))
	}
	key, err := broadcast(t, id+"-go", map[string]any{"approved": true})
	if err != nil {
		t.Fatalf("broadcast: %s", harness.Describe(err))
	}
	if key <= 0 {
		t.Errorf("signal key %d", key)
	}
	job := activateOne(t, id+"-after", 30*time.Second, 10*time.Second)
	if v := jobVars(t, job); v["approved"] != true || v["orderId"] != id {
		t.Errorf("job variables after the signal: %v", v)
	}
	// the boundary event listens while the task is active
	if _, err := broadcast(t, id+"-note", map[string]any{"note": "hi"}); err != nil {
		t.Fatalf("broadcast: %s", harness.Describe(err))
	}
	noted := activateOne(t, id+"-noted", 30*time.Second, 10*time.Second)
	if v := jobVars(t, noted); v["note"] != "hi" {
		t.Errorf("job variables after the boundary signal: %v", v)
	}
	_, err = broadcast(t, "  ", nil)
	wantCode(t, "broadcast without a name", err, codes.InvalidArgument)
}

// A signal start event creates an instance per broadcast, with the signal's variables.
func TestBroadcastSignalStartsInstances(t *testing.T) {
	id, _ := deployModel(t, "signal_start.bpmn", "zest_proc")
	for i := 1; i <= 2; i++ {
		if _, err := broadcast(t, id+"-start", map[string]any{"n": i}); err != nil {
			t.Fatalf("broadcast: %s", harness.Describe(err))
		}
	}
	seen := map[float64]bool{}
	for len(seen) < 2 {
		job := activateOne(t, id+"-started", 30*time.Second, 10*time.Second)
		cancelAtEnd(t, job.ProcessInstanceKey)
		n, _ := jobVars(t, job)["n"].(float64)
		seen[n] = true
	}
	if !seen[1] || !seen[2] {
		t.Errorf("instances started with n = %v, want 1 and 2", seen)
	}
}
