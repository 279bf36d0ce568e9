// Package harness starts the server under test (or points at an external one) and holds the
// helpers shared by the compatibility suites: clients, models from ../testdata, unique ids.
//
// Server selection (first that applies):
//   - ZEEBE_ADDRESS=host:port: use an already running server (e.g. the real Zeebe engine).
//   - ZEST_BIN=/path/to/zest: start `zest start --data-dir DIR --gateway-address 127.0.0.1:P
//     --management-address 127.0.0.1:M` on free ports with a temp data dir, wait for the READY
//     line on stdout, and stop it (SIGTERM) afterwards.
package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ReadyTimeout bounds how long a started server may take to print READY.
const ReadyTimeout = 60 * time.Second

// Zest is one zest server process (possibly restarted several times on the same data dir and
// ports).
type Zest struct {
	Bin         string
	DataDir     string
	GatewayAddr string   // 127.0.0.1:port
	MgmtAddr    string   // 127.0.0.1:port
	LogPath     string   // stdout+stderr of all runs, appended
	Extra       []string // more flags for `zest start` (a cluster node's)

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	logF   *os.File
	starts int
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and that this process
// has not handed out before. It lies below the kernel's ephemeral range (32768 and up), so an
// outgoing connection of a node (which takes its source port from that range) cannot hold it
// when a node binds it, or binds it again after a restart.
func FreePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for try := 0; try < 1000; try++ {
		port := 10000 + rand.Intn(22000)
		if portsGiven[port] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		portsGiven[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("no free port below the ephemeral range after 1000 tries")
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// NewZest prepares (does not start) a zest server on free ports. dataDir "" => a new temp dir.
func NewZest(bin, dataDir string) (*Zest, error) {
	if bin == "" {
		return nil, fmt.Errorf("ZEST_BIN is not set")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(abs); err != nil || st.IsDir() {
		return nil, fmt.Errorf("ZEST_BIN=%s: not an executable file (%v)", bin, err)
	}
	if dataDir == "" {
		dataDir, err = os.MkdirTemp("", "zest-compat-data-")
		if err != nil {
			return nil, err
		}
	}
	gp, err := FreePort()
	if err != nil {
		return nil, err
	}
	mp, err := FreePort()
	if err != nil {
		return nil, err
	}
	logF, err := os.CreateTemp("", "zest-compat-log-*.txt")
	if err != nil {
		return nil, err
	}
	return &Zest{
		Bin:         abs,
		DataDir:     dataDir,
		GatewayAddr: fmt.Sprintf("127.0.0.1:%d", gp),
		MgmtAddr:    fmt.Sprintf("127.0.0.1:%d", mp),
		LogPath:     logF.Name(),
		logF:        logF,
	}, nil
}

// Args are the exact CLI arguments the harness passes to zest.
func (z *Zest) Args() []string {
	return append([]string{"start",
		"--data-dir", z.DataDir,
		"--gateway-address", z.GatewayAddr,
		"--management-address", z.MgmtAddr,
		"--rest-address", "127.0.0.1:0",
	}, z.Extra...)
}

// NewCluster prepares (does not start) the nodes of a cluster on free ports: node i is started
// with --node-id i, the cluster's size, partitions and replication factor, its own internal
// port and the others' as contact points.
func NewCluster(bin string, nodes, partitions, replication int) ([]*Zest, error) {
	var zs []*Zest
	var internal []string
	for i := 0; i < nodes; i++ {
		z, err := NewZest(bin, "")
		if err != nil {
			return nil, err
		}
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		zs = append(zs, z)
		internal = append(internal, fmt.Sprintf("127.0.0.1:%d", p))
	}
	for i, z := range zs {
		var others []string
		for j, a := range internal {
			if j != i {
				others = append(others, a)
			}
		}
		z.Extra = []string{
			"--node-id", fmt.Sprint(i),
			"--cluster-size", fmt.Sprint(nodes),
			"--partitions", fmt.Sprint(partitions),
			"--replication-factor", fmt.Sprint(replication),
			"--internal-address", internal[i],
			"--contact-points", strings.Join(others, ","),
		}
	}
	return zs, nil
}

// LeaderOf returns the index of the node that leads `partition` (by each node's
// /actuator/partitions), or -1 when none does.
func LeaderOf(nodes []*Zest, partition int) int {
	for i, n := range nodes {
		resp, err := http.Get("http://" + n.MgmtAddr + "/actuator/partitions")
		if err != nil {
			continue
		}
		var doc map[string]struct {
			Role string `json:"role"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if doc[strconv.Itoa(partition)].Role == "LEADER" {
			return i
		}
	}
	return -1
}

// StartAll starts the nodes together (a node is READY once its partitions have leaders, which
// takes a majority of their nodes) and waits for all.
func StartAll(zs []*Zest) error {
	errs := make(chan error, len(zs))
	for _, z := range zs {
		go func(z *Zest) { errs <- z.Start() }(z)
	}
	var first error
	for range zs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// StopAll stops the nodes together (SIGTERM); the first error is returned.
func StopAll(zs []*Zest) error {
	errs := make(chan error, len(zs))
	for _, z := range zs {
		go func(z *Zest) { errs <- z.Stop() }(z)
	}
	var first error
	for range zs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Start launches the process and waits until it prints a line containing READY.
func (z *Zest) Start() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.cmd != nil {
		return fmt.Errorf("zest already running")
	}
	z.starts++
	fmt.Fprintf(z.logF, "==== start #%d: %s %s\n", z.starts, z.Bin, strings.Join(z.Args(), " "))
	cmd := exec.Command(z.Bin, z.Args()...)
	cmd.Stderr = z.logF
	// Own process group: SIGKILL takes any children along (SIGTERM goes to zest alone).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", z.Bin, err)
	}
	ready := make(chan struct{})
	var once sync.Once
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(z.logF, line)
			if strings.Contains(line, "READY") {
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(z.logF, stdout)
	}()
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	z.cmd, z.done = cmd, done
	select {
	case <-ready:
		return nil
	case <-done:
		z.cmd = nil
		return fmt.Errorf("zest exited before READY (%v); log %s:\n%s", cmd.ProcessState, z.LogPath, z.LogTail(40))
	case <-time.After(ReadyTimeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		z.cmd = nil
		return fmt.Errorf("zest did not print READY within %s; log %s:\n%s", ReadyTimeout, z.LogPath, z.LogTail(40))
	}
}

// Kill sends SIGKILL and waits for the process to be gone.
func (z *Zest) Kill() {
	z.signalAndWait(syscall.SIGKILL, 0)
}

// Freeze stops the process (SIGSTOP) for d, then lets it go on (SIGCONT): a node that hangs,
// as in a long GC pause or a VM migration, and then comes back.
func (z *Zest) Freeze(d time.Duration) {
	z.mu.Lock()
	cmd := z.cmd
	z.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGSTOP)
	fmt.Fprintf(z.logF, "==== frozen (SIGSTOP) for %s\n", d)
	time.Sleep(d)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
	fmt.Fprintf(z.logF, "==== thawed (SIGCONT)\n")
}

// Stop sends SIGTERM and waits up to 20 s for a clean exit, then SIGKILLs. It returns an error
// when the process did not exit by itself or exited with a non-zero status.
func (z *Zest) Stop() error {
	return z.signalAndWait(syscall.SIGTERM, 20*time.Second)
}

func (z *Zest) signalAndWait(sig syscall.Signal, grace time.Duration) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.cmd == nil {
		return nil
	}
	cmd, done := z.cmd, z.done
	z.cmd = nil
	if sig == syscall.SIGKILL {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	} else {
		_ = cmd.Process.Signal(sig)
	}
	if sig == syscall.SIGKILL {
		<-done
		fmt.Fprintf(z.logF, "==== killed (SIGKILL)\n")
		return nil
	}
	select {
	case <-done:
		fmt.Fprintf(z.logF, "==== exited after %v: %v\n", sig, cmd.ProcessState)
		if !cmd.ProcessState.Success() {
			return fmt.Errorf("zest exited with %v after %v, want exit status 0 (a clean stop)", cmd.ProcessState, sig)
		}
		return nil
	case <-time.After(grace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("zest did not exit within %s after %v (SIGKILLed)", grace, sig)
	}
}

// Running reports whether the process is (believed) alive.
func (z *Zest) Running() bool {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.cmd != nil
}

// LogTail returns the last n lines of the server log.
func (z *Zest) LogTail(n int) string {
	b, err := os.ReadFile(z.LogPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Cleanup removes the data dir (and keeps the log file unless keepLog is false).
func (z *Zest) Cleanup(keepLog bool) {
	_ = os.RemoveAll(z.DataDir)
	_ = z.logF.Close()
	if !keepLog {
		_ = os.Remove(z.LogPath)
	}
}

// Target is the server a suite runs against.
type Target struct {
	Address  string // host:port of the gRPC gateway
	MgmtAddr string // host:port of zest's management endpoint; "" for an external server
	External bool   // true when ZEEBE_ADDRESS was given
	Zest     *Zest  // nil when External
}

// Acquire returns the target named by the environment, starting zest if needed. Callers must
// call Release.
func Acquire() (*Target, error) {
	if addr := os.Getenv("ZEEBE_ADDRESS"); addr != "" {
		return &Target{Address: addr, External: true}, nil
	}
	bin := os.Getenv("ZEST_BIN")
	if bin == "" {
		return nil, fmt.Errorf("set ZEEBE_ADDRESS=host:port (external server) or ZEST_BIN=/path/to/zest")
	}
	z, err := NewZest(bin, "")
	if err != nil {
		return nil, err
	}
	if err := z.Start(); err != nil {
		z.Cleanup(true)
		return nil, err
	}
	return &Target{Address: z.GatewayAddr, MgmtAddr: z.MgmtAddr, Zest: z}, nil
}

// Release stops a started server (SIGTERM) and removes its data dir. It returns an error if the
// server did not stop cleanly.
func (t *Target) Release() error {
	if t == nil || t.Zest == nil {
		return nil
	}
	err := t.Zest.Stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "zest log tail (%s):\n%s\n", t.Zest.LogPath, t.Zest.LogTail(40))
	}
	t.Zest.Cleanup(err != nil)
	return err
}

// WaitHTTPReady polls http://mgmt/ready until it answers 200 or ctx ends.
func WaitHTTPReady(ctx context.Context, mgmtAddr string) error {
	url := "http://" + mgmtAddr + "/ready"
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("GET %s never returned 200 (last: %s)", url, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
