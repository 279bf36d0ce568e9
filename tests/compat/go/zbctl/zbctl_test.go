// Package zbctl drives the real zbctl CLI (built from github.com/camunda/zeebe/clients/go/v8
// v8.3.0, the module's client version) against the server under test, parsing its JSON output.
// run.sh runs it a second time with ZBCTL_BIN set to the `zest` binary: the same commands,
// flags and output, so zbctl scripts run with `zest` in zbctl's place (suite zest-cli).
//
// ZBCTL_BIN names the binary (run.sh builds it to tests/compat/bin/zbctl). Unset: that built
// binary is used when it is there, and only without it is every test skipped. Set to a path that
// does not exist: the suite fails.
package zbctl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"zest/tests/compat/harness"
)

var (
	target *harness.Target
	zbctl  string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	zbctl = os.Getenv("ZBCTL_BIN")
	if zbctl == "" {
		// go test runs in the package dir: tests/compat/go/zbctl
		built := filepath.Join("..", "..", "bin", "zbctl")
		if _, err := os.Stat(built); err != nil {
			fmt.Printf("zbctl: ZBCTL_BIN is not set and %s was not built (run.sh builds it); skipping the zbctl suite\n", built)
			return 0
		}
		zbctl = built
	}
	abs, err := filepath.Abs(zbctl)
	if err == nil {
		zbctl = abs
	}
	if st, err := os.Stat(zbctl); err != nil || st.IsDir() {
		fmt.Fprintf(os.Stderr, "zbctl: ZBCTL_BIN=%s is not a file: %v\n", zbctl, err)
		return 1
	}
	target, err = harness.Acquire()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zbctl: cannot get a server:", err)
		return 1
	}
	fmt.Printf("zbctl: %s against %s\n", zbctl, target.Address)
	code := m.Run()
	if err := target.Release(); err != nil {
		fmt.Fprintln(os.Stderr, "zbctl: server did not stop cleanly:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

type result struct {
	stdout, stderr string
	err            error
}

// zb runs `zbctl --insecure --address ADDR args...` (bounded to 30 s).
func zb(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	full := append([]string{"--insecure", "--address", target.Address}, args...)
	cmd := exec.CommandContext(ctx, zbctl, full...)
	// Keep zbctl away from any OAuth settings or gateway address in the environment.
	cmd.Env = cleanEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return result{out.String(), errb.String(), err}
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ZEEBE_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+os.TempDir())
}

// ok runs zbctl and requires success.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	r := zb(t, args...)
	if r.err != nil {
		t.Fatalf("zbctl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.err, r.stdout, r.stderr)
	}
	return r.stdout
}

var codeRe = regexp.MustCompile(`code = (\w+)`)

// fails runs zbctl, requires a non-zero exit and returns the gRPC code name zbctl printed.
func fails(t *testing.T, args ...string) string {
	t.Helper()
	r := zb(t, args...)
	if r.err == nil {
		t.Fatalf("zbctl %s: succeeded, want an error\nstdout: %s", strings.Join(args, " "), r.stdout)
	}
	m := codeRe.FindStringSubmatch(r.stderr + r.stdout)
	if m == nil {
		t.Fatalf("zbctl %s: no gRPC code in output\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.stdout, r.stderr)
	}
	return m[1]
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("zbctl output is not a JSON object: %v\n%s", err, s)
	}
	return m
}

// num reads an integer field; protojson writes int64 as a string and int32 as a number.
func num(t *testing.T, m map[string]any, field string) int64 {
	t.Helper()
	switch v := m[field].(type) {
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("field %s=%q is not an integer", field, v)
		}
		return n
	case float64:
		return int64(v)
	default:
		t.Fatalf("field %s missing or not a number in %v", field, m)
		return 0
	}
}

func sub(t *testing.T, m map[string]any, field string) map[string]any {
	t.Helper()
	v, ok := m[field].(map[string]any)
	if !ok {
		t.Fatalf("field %s missing or not an object in %v", field, m)
	}
	return v
}

func list(t *testing.T, m map[string]any, field string) []map[string]any {
	t.Helper()
	raw, ok := m[field].([]any)
	if !ok {
		t.Fatalf("field %s missing or not a list in %v", field, m)
	}
	var out []map[string]any
	for _, e := range raw {
		out = append(out, e.(map[string]any))
	}
	return out
}

// writeModel writes testdata/file with token replaced by a unique id to a temp file.
func writeModel(t *testing.T, file, token string) (id, path string) {
	t.Helper()
	id = harness.UniqueID(t.Name())
	path = filepath.Join(t.TempDir(), id+".bpmn")
	if err := os.WriteFile(path, harness.Model(t, file, token, id), 0o644); err != nil {
		t.Fatal(err)
	}
	return id, path
}

// deploy deploys with `zbctl deploy resource` and returns the process definition key.
func deploy(t *testing.T, path, id string, wantVersion int64) int64 {
	t.Helper()
	resp := decode(t, ok(t, "deploy", "resource", path))
	if num(t, resp, "key") <= 0 {
		t.Errorf("deployment key missing: %v", resp)
	}
	deps := list(t, resp, "deployments")
	if len(deps) != 1 {
		t.Fatalf("want 1 deployment, got %v", resp)
	}
	p := sub(t, deps[0], "process")
	if p["bpmnProcessId"] != id || num(t, p, "version") != wantVersion || p["resourceName"] != path { // zbctl sends the path as given as the resource name
		t.Fatalf("deployed %v, want process %s version %d resource %s", p, id, wantVersion, path)
	}
	return num(t, p, "processDefinitionKey")
}

func createInstance(t *testing.T, id, vars string) int64 {
	t.Helper()
	resp := decode(t, ok(t, "create", "instance", id, "--variables", vars))
	if resp["bpmnProcessId"] != id {
		t.Fatalf("create instance: %v", resp)
	}
	key := num(t, resp, "processInstanceKey")
	t.Cleanup(func() { zb(t, "cancel", "instance", strconv.FormatInt(key, 10)) })
	return key
}

// activateOne polls `zbctl activate jobs` until it returns a job (at most d).
func activateOne(t *testing.T, jobType string, d time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		resp := decode(t, ok(t, "activate", "jobs", jobType, "--maxJobsToActivate", "1", "--timeout", "30s",
			"--requestTimeout", "3s", "--worker", "zbctl-test"))
		if jobs, _ := resp["jobs"].([]any); len(jobs) > 0 {
			if len(jobs) != 1 {
				t.Fatalf("asked for 1 job, got %d", len(jobs))
			}
			return jobs[0].(map[string]any)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no job of type %s within %s", jobType, d)
	return nil
}

// waitInstanceGone waits (up to d) until the instance no longer exists: completion is processed
// after CompleteJob is acknowledged, so it polls with a harmless `set variables {}` until that
// fails with NotFound.
func waitInstanceGone(t *testing.T, pi int64, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		r := zb(t, "set", "variables", key(pi), "--variables", `{}`)
		if r.err != nil {
			m := codeRe.FindStringSubmatch(r.stderr + r.stdout)
			if m != nil && m[1] == "NotFound" {
				return
			}
			t.Fatalf("set variables on instance %d: %v\nstdout: %s\nstderr: %s", pi, r.err, r.stdout, r.stderr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %d still exists %s after its last job was completed", pi, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func vars(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	s, _ := m["variables"].(string)
	v := map[string]any{}
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("variables %q: %v", s, err)
	}
	return v
}

func key(n int64) string { return strconv.FormatInt(n, 10) }

// isZest tells whether the binary under test is the `zest` CLI rather than zbctl (`version`
// names it).
func isZest(t *testing.T) bool {
	t.Helper()
	return strings.HasPrefix(ok(t, "version"), "zest ")
}

// ---------------------------------------------------------------------------------------------

func TestZbctlStatus(t *testing.T) {
	human := ok(t, "status")
	for _, want := range []string{"Cluster size:", "Partitions count:", "Brokers:", "Partition 1 : Leader, Healthy"} {
		if !strings.Contains(human, want) {
			t.Errorf("status output lacks %q:\n%s", want, human)
		}
	}
	js := decode(t, ok(t, "status", "--output", "json"))
	if num(t, js, "clusterSize") < 1 || num(t, js, "partitionsCount") < 1 || len(list(t, js, "brokers")) < 1 {
		t.Errorf("status json: %v", js)
	}
}

func TestZbctlDeploy(t *testing.T) {
	id, path := writeModel(t, "simple_task.bpmn", "zest_proc")
	k1 := deploy(t, path, id, 1)
	// Identical redeploy keeps version and key.
	if k := deploy(t, path, id, 1); k != k1 {
		t.Errorf("identical redeploy: key %d, want %d", k, k1)
	}
	// The deprecated `zbctl deploy <file>` form uses the DeployProcess RPC.
	changed := filepath.Join(t.TempDir(), id+".bpmn")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(changed, bytes.Replace(b, []byte(`name="Simple task"`), []byte(`name="Simple task v2"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	// `zest deploy <file>` is `deploy resource` instead (it prints decisions and forms too).
	resp := decode(t, ok(t, "deploy", changed))
	var procs []map[string]any
	if isZest(t) {
		for _, d := range list(t, resp, "deployments") {
			procs = append(procs, sub(t, d, "process"))
		}
	} else {
		procs = list(t, resp, "processes")
	}
	if len(procs) != 1 || procs[0]["bpmnProcessId"] != id || num(t, procs[0], "version") != 2 || num(t, procs[0], "processDefinitionKey") == k1 {
		t.Errorf("deploy (DeployProcess) of a changed model: %v, want version 2", resp)
	}
	// A malformed model is refused.
	bad := filepath.Join(t.TempDir(), "bad.bpmn")
	if err := os.WriteFile(bad, harness.Model(t, "malformed.bpmn", "", ""), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := fails(t, "deploy", "resource", bad); c != "InvalidArgument" {
		t.Errorf("deploy malformed: code %s, want InvalidArgument", c)
	}
}

// deploy, create instance --variables, activate jobs, set variables, complete job, and the
// result seen through create instance --withResult.
func TestZbctlInstanceLifecycle(t *testing.T) {
	id, path := writeModel(t, "simple_task.bpmn", "zest_proc")
	deploy(t, path, id, 1)
	jobType := id + ".task"

	pi := createInstance(t, id, `{"a":1,"s":"x"}`)
	job := activateOne(t, jobType, 15*time.Second)
	if num(t, job, "processInstanceKey") != pi || job["type"] != jobType || job["worker"] != "zbctl-test" || num(t, job, "retries") != 3 {
		t.Fatalf("activated job %v for instance %d", job, pi)
	}
	if v := vars(t, job); v["a"] != 1.0 || v["s"] != "x" {
		t.Errorf("job variables %v", v)
	}
	sv := decode(t, ok(t, "set", "variables", key(pi), "--variables", `{"b":2}`, "--output", "json"))
	if num(t, sv, "key") <= 0 {
		t.Errorf("set variables response %v", sv)
	}
	ok(t, "set", "variables", key(num(t, job, "elementInstanceKey")), "--variables", `{"l":3}`, "--local")
	ok(t, "complete", "job", key(num(t, job, "key")), "--variables", `{"c":3}`)
	if c := fails(t, "complete", "job", key(num(t, job, "key"))); c != "NotFound" {
		t.Errorf("complete a job twice: code %s, want NotFound", c)
	}
	// The instance is done: cancelling it is NOT_FOUND.
	waitInstanceGone(t, pi, 10*time.Second)
	if c := fails(t, "cancel", "instance", key(pi)); c != "NotFound" {
		t.Errorf("cancel a completed instance: code %s, want NotFound", c)
	}

	// --withResult: run zbctl in the background, complete its job with zbctl.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bg := exec.CommandContext(ctx, zbctl, "--insecure", "--address", target.Address, "--requestTimeout", "25s",
		"create", "instance", id, "--variables", `{"in":"put"}`, "--withResult")
	bg.Env = cleanEnv()
	var out, errb bytes.Buffer
	bg.Stdout, bg.Stderr = &out, &errb
	if err := bg.Start(); err != nil {
		t.Fatal(err)
	}
	j2 := activateOne(t, jobType, 15*time.Second)
	ok(t, "complete", "job", key(num(t, j2, "key")), "--variables", `{"out":"come"}`)
	if err := bg.Wait(); err != nil {
		t.Fatalf("create instance --withResult: %v\n%s%s", err, out.String(), errb.String())
	}
	res := decode(t, out.String())
	if num(t, res, "processInstanceKey") != num(t, j2, "processInstanceKey") {
		t.Errorf("withResult instance %v, job instance %d", res["processInstanceKey"], num(t, j2, "processInstanceKey"))
	}
	if v := vars(t, res); v["in"] != "put" || v["out"] != "come" || len(v) != 2 {
		t.Errorf("withResult variables %v, want in=put out=come", v)
	}
}

// fail job --retries, then retries 0 (incident), update retries, resolve incident.
func TestZbctlFailUpdateRetriesResolve(t *testing.T) {
	id, path := writeModel(t, "simple_task.bpmn", "zest_proc")
	deploy(t, path, id, 1)
	jobType := id + ".task"
	createInstance(t, id, `{}`)
	job := activateOne(t, jobType, 15*time.Second)
	jk := num(t, job, "key")

	ok(t, "fail", "job", key(jk), "--retries", "2", "--errorMessage", "try again")
	again := activateOne(t, jobType, 15*time.Second)
	if num(t, again, "key") != jk || num(t, again, "retries") != 2 {
		t.Fatalf("after fail --retries 2: %v", again)
	}
	ok(t, "fail", "job", key(jk), "--retries", "0", "--errorMessage", "give up")
	// Find the incident: it is the first key after the job's that ResolveIncident does not
	// answer NOT_FOUND; while the job has no retries, resolving is FAILED_PRECONDITION (see the
	// Go compat suite, resolveIncidentAfter, for why incident keys are probed).
	var inc int64
	for k := jk + 1; k <= jk+30 && inc == 0; k++ {
		switch c := fails(t, "resolve", "incident", key(k)); c {
		case "NotFound":
		case "FailedPrecondition":
			inc = k
		default:
			t.Fatalf("resolve incident %d while the job has no retries: code %s", k, c)
		}
	}
	if inc == 0 {
		t.Fatalf("no incident found after job %d", jk)
	}
	ok(t, "update", "retries", key(jk), "--retries", "3")
	ok(t, "resolve", "incident", key(inc))
	third := activateOne(t, jobType, 15*time.Second)
	if num(t, third, "key") != jk || num(t, third, "retries") != 3 {
		t.Fatalf("after update retries + resolve: %v", third)
	}
	ok(t, "complete", "job", key(jk))
}

func TestZbctlCancelInstance(t *testing.T) {
	id, path := writeModel(t, "simple_task.bpmn", "zest_proc")
	deploy(t, path, id, 1)
	pi := createInstance(t, id, `{"x":1}`)
	out := ok(t, "cancel", "instance", key(pi))
	if !strings.Contains(out, key(pi)) {
		t.Errorf("cancel output %q does not name the instance", out)
	}
	if c := fails(t, "cancel", "instance", key(pi)); c != "NotFound" {
		t.Errorf("cancel twice: code %s, want NotFound", c)
	}
	if c := fails(t, "create", "instance", harness.UniqueID("no_such_process")); c != "NotFound" {
		t.Errorf("create unknown process: code %s, want NotFound", c)
	}
}
