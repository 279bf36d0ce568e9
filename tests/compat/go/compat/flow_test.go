package compat

import (
	"testing"
	"time"

	"zest/tests/compat/harness"
)

func TestExclusiveGatewayDefaultFlow(t *testing.T) {
	id, _ := deployModel(t, "xor_default.bpmn", "zest_proc")
	bigCh := createWithResultAsync(t, id, map[string]any{"x": 20}, 20*time.Second)
	big := activateOne(t, id+".big", 30*time.Second, 10*time.Second)
	expectNoJob(t, id+".small", 500*time.Millisecond, "x=20 takes the conditional flow")
	complete(t, big.Key, map[string]any{"path": "big"})
	if v := decodeVars(t, awaitResult(t, bigCh, 15*time.Second).Variables); v["path"] != "big" {
		t.Errorf("x=20: result %v", v)
	}

	smallCh := createWithResultAsync(t, id, map[string]any{"x": 3}, 20*time.Second)
	small := activateOne(t, id+".small", 30*time.Second, 10*time.Second)
	expectNoJob(t, id+".big", 500*time.Millisecond, "x=3 takes the default flow")
	complete(t, small.Key, map[string]any{"path": "small"})
	if v := decodeVars(t, awaitResult(t, smallCh, 15*time.Second).Variables); v["path"] != "small" {
		t.Errorf("x=3: result %v", v)
	}
}

// No outgoing condition matches and there is no default flow: an incident is raised on the
// gateway and the instance stops there. Setting the variable and resolving the incident lets the
// instance continue on the now-matching flow.
func TestExclusiveGatewayNoMatchIncident(t *testing.T) {
	id, _ := deployModel(t, "xor_no_default.bpmn", "zest_proc")
	neg := createInstance(t, id, map[string]any{"x": -1})
	j := activateOne(t, id+".negative", 30*time.Second, 10*time.Second)
	if j.ProcessInstanceKey != neg.ProcessInstanceKey {
		t.Fatalf("x=-1: job of instance %d, want %d", j.ProcessInstanceKey, neg.ProcessInstanceKey)
	}
	complete(t, j.Key, nil)

	pi := createInstance(t, id, map[string]any{"x": 5})
	expectNoJob(t, id+".big", 1*time.Second, "x=5 matches no flow")
	expectNoJob(t, id+".negative", 200*time.Millisecond, "x=5 matches no flow")

	ctx := harness.Ctx(t, 20*time.Second)
	c, err := cli.NewSetVariablesCommand().ElementInstanceKey(pi.ProcessInstanceKey).VariablesFromMap(map[string]any{"x": 50})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(ctx); err != nil {
		t.Fatalf("set variables on the stuck instance: %s", harness.Describe(err))
	}
	expectNoJob(t, id+".big", 500*time.Millisecond, "variable fixed, incident not yet resolved")
	resolveIncidentAfter(t, pi.ProcessInstanceKey, 200)
	big := activateOne(t, id+".big", 30*time.Second, 10*time.Second)
	if big.ProcessInstanceKey != pi.ProcessInstanceKey || jobVars(t, big)["x"] != 50.0 {
		t.Fatalf("after resolve: job of instance %d with %s, want instance %d with x=50", big.ProcessInstanceKey, big.Variables, pi.ProcessInstanceKey)
	}
	complete(t, big.Key, nil)
	waitInstanceGone(t, pi.ProcessInstanceKey, 10*time.Second)
}

func TestParallelGatewayForkJoin(t *testing.T) {
	id, _ := deployModel(t, "parallel.bpmn", "zest_proc")
	ch := createWithResultAsync(t, id, map[string]any{"start": true}, 20*time.Second)
	a := activateOne(t, id+".a", 30*time.Second, 10*time.Second)
	b := activateOne(t, id+".b", 30*time.Second, 10*time.Second)
	if a.ProcessInstanceKey != b.ProcessInstanceKey || a.ElementInstanceKey == b.ElementInstanceKey {
		t.Fatalf("fork: jobs a (instance %d, element %d) and b (instance %d, element %d)",
			a.ProcessInstanceKey, a.ElementInstanceKey, b.ProcessInstanceKey, b.ElementInstanceKey)
	}
	complete(t, a.Key, map[string]any{"fromA": 1})
	select {
	case r := <-ch:
		t.Fatalf("instance completed with only one branch done: %+v %s", r.resp, harness.Describe(r.err))
	case <-time.After(700 * time.Millisecond):
	}
	complete(t, b.Key, map[string]any{"fromB": 2})
	v := decodeVars(t, awaitResult(t, ch, 15*time.Second).Variables)
	if v["fromA"] != 1.0 || v["fromB"] != 2.0 || v["start"] != true {
		t.Errorf("join result %v, want fromA=1 fromB=2 start=true", v)
	}
}

func TestTimerCatchEvent(t *testing.T) {
	id, _ := deployModel(t, "timer.bpmn", "zest_proc")
	r := <-createWithResultAsync(t, id, map[string]any{"t": 1}, 20*time.Second)
	if r.err != nil {
		t.Fatalf("timer process with result: %s", harness.Describe(r.err))
	}
	if r.elapsed < 900*time.Millisecond || r.elapsed > 10*time.Second {
		t.Errorf("PT1S timer process completed after %s, want about 1 s", r.elapsed)
	}
	if v := decodeVars(t, r.resp.Variables); v["t"] != 1.0 {
		t.Errorf("result %v", v)
	}
}
