// Package tls runs the official Go client over TLS against a zest started with a certificate
// made for the run (issue 62). The client library is given the CA by its setting
// CaCertificatePath (inside `go test` it ignores its environment variables); zbctl, built on
// it, and the zest CLI by the variable users set, ZEEBE_CA_CERTIFICATE_PATH.
package tls

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/camunda/zeebe/clients/go/v8/pkg/pb"
	"github.com/camunda/zeebe/clients/go/v8/pkg/zbc"

	"zest/tests/compat/harness"
)

func TestDeployCreateCompleteOverTLS(t *testing.T) {
	bin := os.Getenv("ZEST_BIN")
	if bin == "" || os.Getenv("ZEEBE_ADDRESS") != "" {
		t.Skip("needs ZEST_BIN: the test starts zest with a certificate of its own")
	}
	certs, err := harness.NewCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	z, err := harness.NewZest(bin, "")
	if err != nil {
		t.Fatal(err)
	}
	// Zeebe's own settings for the gateway's TLS
	z.Extra = []string{"--grpc-tls-cert", certs.Cert, "--grpc-tls-key", certs.Key}
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := z.Stop(); err != nil {
			t.Errorf("%v\n%s", err, z.LogTail(40))
		}
		z.Cleanup(t.Failed())
	})

	// a plaintext client gets no answer from the TLS port
	plain, err := harness.NewClient(z.GatewayAddr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := plain.NewTopologyCommand().Send(ctx); err == nil {
		t.Fatal("a plaintext client was answered by the TLS port")
	}
	_ = plain.Close()

	cli, err := zbc.NewClient(&zbc.ClientConfig{GatewayAddress: z.GatewayAddr, CaCertificatePath: certs.CA})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	id := harness.UniqueID("tls")
	xml := harness.Model(t, "simple_task.bpmn", "zest_proc", id)
	if _, err := cli.NewDeployResourceCommand().AddResource(xml, id+".bpmn").Send(harness.Ctx(t, 20*time.Second)); err != nil {
		t.Fatalf("deploy over TLS: %s", harness.Describe(err))
	}
	type result struct {
		resp *pb.CreateProcessInstanceWithResultResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		cmd, err := cli.NewCreateInstanceCommand().BPMNProcessId(id).LatestVersion().
			VariablesFromMap(map[string]any{"orderId": "T-1"})
		if err != nil {
			done <- result{nil, err}
			return
		}
		resp, err := cmd.WithResult().Send(harness.Ctx(t, 30*time.Second))
		done <- result{resp, err}
	}()
	var jobKey int64
	for deadline := time.Now().Add(20 * time.Second); jobKey == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no job over TLS within 20 s")
		}
		jobs, err := cli.NewActivateJobsCommand().JobType(id + ".task").MaxJobsToActivate(1).
			Timeout(30 * time.Second).WorkerName("tls").Send(harness.Ctx(t, 5*time.Second))
		if err != nil {
			t.Fatalf("activate over TLS: %s", harness.Describe(err))
		}
		if len(jobs) == 1 {
			jobKey = jobs[0].Key
		}
	}
	complete, err := cli.NewCompleteJobCommand().JobKey(jobKey).VariablesFromMap(map[string]any{"paid": true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := complete.Send(harness.Ctx(t, 10*time.Second)); err != nil {
		t.Fatalf("complete over TLS: %s", harness.Describe(err))
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("create with result over TLS: %s", harness.Describe(r.err))
	}
	if r.resp.BpmnProcessId != id || !strings.Contains(r.resp.Variables, `"paid":true`) {
		t.Fatalf("the instance's result: %+v, want process %s with paid=true", r.resp, id)
	}

	// zbctl and the zest CLI, given the CA by ZEEBE_CA_CERTIFICATE_PATH
	clis := [][]string{{bin, "status"}}
	zbctl := os.Getenv("ZBCTL_BIN")
	if zbctl == "" {
		zbctl, _ = filepath.Abs(filepath.Join("..", "..", "bin", "zbctl"))
	}
	if _, err := os.Stat(zbctl); err == nil {
		clis = append(clis, []string{zbctl, "status"})
	} else {
		t.Logf("zbctl is not built (run.sh builds it with the zbctl suite): only the zest CLI runs")
	}
	for _, args := range clis {
		cmd := exec.Command(args[0], append(args[1:], "--address", z.GatewayAddr)...)
		cmd.Env = append(os.Environ(), "ZEEBE_CA_CERTIFICATE_PATH="+certs.CA, "ZEEBE_INSECURE_CONNECTION=false")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Partition 1") {
			t.Errorf("%s status over TLS: %v\n%s", args[0], err, out)
		}
	}
}
