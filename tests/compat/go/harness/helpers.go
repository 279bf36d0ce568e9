package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/camunda/zeebe/clients/go/v8/pkg/pb"
	"github.com/camunda/zeebe/clients/go/v8/pkg/zbc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// TestdataDir is tests/compat/testdata (override with COMPAT_TESTDATA).
func TestdataDir() string {
	if d := os.Getenv("COMPAT_TESTDATA"); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	if ok {
		d := filepath.Join(filepath.Dir(file), "..", "..", "testdata")
		if _, err := os.Stat(d); err == nil {
			return d
		}
	}
	// go test runs in the package dir: tests/compat/go/<pkg>
	return filepath.Join("..", "..", "testdata")
}

// NewClient returns an official Go client talking plaintext to addr.
func NewClient(addr string) (zbc.Client, error) {
	return zbc.NewClient(&zbc.ClientConfig{
		GatewayAddress:         addr,
		UsePlaintextConnection: true,
	})
}

// NewRawGateway returns the generated gRPC stub, for requests the client library validates
// away (e.g. variables that are not a JSON object).
func NewRawGateway(addr string) (pb.GatewayClient, *grpc.ClientConn, error) {
	conn, err := grpc.Dial(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, err
	}
	return pb.NewGatewayClient(conn), conn, nil
}

var nonID = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// UniqueID returns an XML-NCName-safe id unique to this test run, prefixed by a readable part.
func UniqueID(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	p := nonID.ReplaceAllString(prefix, "_")
	if len(p) > 40 {
		p = p[:40]
	}
	if p == "" || (p[0] >= '0' && p[0] <= '9') {
		p = "p_" + p
	}
	return p + "_" + hex.EncodeToString(b)
}

// Model reads testdata/<file> and replaces every occurrence of token by replacement.
func Model(t testing.TB, file, token, replacement string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(TestdataDir(), file))
	if err != nil {
		t.Fatalf("reading model %s: %v", file, err)
	}
	if token == "" {
		return b
	}
	if !strings.Contains(string(b), token) {
		t.Fatalf("model %s does not contain token %q", file, token)
	}
	return []byte(strings.ReplaceAll(string(b), token, replacement))
}

// Ctx returns a context bounded by d, cancelled when the test ends.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Code is status.Code(err) (codes.OK for nil).
func Code(err error) codes.Code { return status.Code(err) }

// Msg is the status message of err.
func Msg(err error) string {
	if s, ok := status.FromError(err); ok {
		return s.Message()
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// Describe formats an error with its code, for failure messages.
func Describe(err error) string {
	if err == nil {
		return "<nil>"
	}
	return fmt.Sprintf("code=%s msg=%q", status.Code(err), Msg(err))
}
