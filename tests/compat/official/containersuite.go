// A stand-in for the official Go client's internal/containersuite (zeebe clients/go v8.3.0),
// put in its place with `go test -overlay` by tests/compat/official/run.sh: the client's own
// integration tests (test/ and cmd/zbctl/) start a Docker container of Zeebe through it; this
// starts a default `zest start` instead (ZEST_BIN), or uses a running server (ZEEBE_ADDRESS).
// Written for Zest; it keeps the original's exported names, which those tests use.
package containersuite

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stretchr/testify/suite"
)

// ContainerSuite runs the server under test for a test suite.
type ContainerSuite struct {
	// WaitTime, ContainerImage and Env configure the Docker container of the original; a
	// default `zest start` needs none of them.
	WaitTime       time.Duration
	ContainerImage string
	Env            map[string]string
	// GatewayAddress is host:port of the gRPC gateway.
	GatewayAddress string
	GatewayHost    string
	GatewayPort    int

	suite.Suite
	cmd     *exec.Cmd
	dataDir string
	logPath string
}

func (s *ContainerSuite) AfterTest(_, _ string) {
	if s.T().Failed() {
		s.PrintFailedContainerLogs()
	}
}

// PrintFailedContainerLogs prints the tail of the server's log.
func (s *ContainerSuite) PrintFailedContainerLogs() {
	if s.logPath == "" {
		return
	}
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	fmt.Fprintf(os.Stderr, "---- zest log (tail) ----\n%s\n", strings.Join(lines, "\n"))
}

func (s *ContainerSuite) SetupSuite() {
	if addr := os.Getenv("ZEEBE_ADDRESS"); addr != "" {
		s.setAddress(addr)
		return
	}
	bin := os.Getenv("ZEST_BIN")
	if bin == "" {
		s.T().Fatal("set ZEST_BIN (a zest binary) or ZEEBE_ADDRESS (a running server)")
	}
	var err error
	s.dataDir, err = os.MkdirTemp("", "zest-official-")
	if err != nil {
		s.T().Fatal(err)
	}
	s.logPath = filepath.Join(s.dataDir, "zest.log")
	logFile, err := os.Create(s.logPath)
	if err != nil {
		s.T().Fatal(err)
	}
	// a default node: no flag beyond its data directory and ports the node picks itself (port
	// 0; its READY line names the gateway's, and the suite uses no other)
	s.cmd = exec.Command(bin, "start", "--data-dir", filepath.Join(s.dataDir, "data"),
		"--gateway-address", "127.0.0.1:0", "--management-address", "127.0.0.1:0",
		"--rest-address", "127.0.0.1:0")
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		s.T().Fatal(err)
	}
	s.cmd.Stderr = logFile
	if err := s.cmd.Start(); err != nil {
		s.T().Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logFile, line)
			if strings.HasPrefix(line, "READY") {
				ready <- line
			}
		}
	}()
	select {
	case line := <-ready:
		for _, field := range strings.Fields(line) {
			if addr, ok := strings.CutPrefix(field, "gateway="); ok {
				s.setAddress(addr)
			}
		}
	case <-time.After(60 * time.Second):
		s.PrintFailedContainerLogs()
		s.T().Fatal("zest did not print READY within 60 s")
	}
}

func (s *ContainerSuite) setAddress(addr string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		s.T().Fatal(err)
	}
	s.GatewayAddress = addr
	s.GatewayHost = host
	s.GatewayPort, _ = strconv.Atoi(port)
}

func (s *ContainerSuite) TearDownSuite() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			s.T().Errorf("zest did not stop cleanly: %v", err)
		}
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		s.T().Error("zest did not stop within 20 s of SIGTERM")
	}
	_ = os.RemoveAll(s.dataDir)
}
