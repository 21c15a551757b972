//go:build unix

package testenv

import (
	"syscall"
	"testing"
	"time"
)

// ProcessCPU is the CPU this process has spent, user and system: what the
// benchmarks report per answer or per order (cpu-µs), the steadier figure
// on a shared machine than their wall time.
func ProcessCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
