// Package crash holds the crash-recovery test for Zest. It is behind the `crash` build tag so
// that it only runs when asked:
//
//	ZEST_BIN=/abs/path/to/zest go test -tags crash ./crash -run TestCrash -v
//
// See crash_test.go for what it does and asserts.
package crash
