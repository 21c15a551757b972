//go:build seckill_crashpoints

package crashpoint

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// The steps (as in crashpoint.go).
const (
	AfterDeduct = "purchase.after_deduct"
	AfterCommit = "purchase.after_commit"
	AfterExpiry = "payment.after_expiry_commit"
)

var (
	armed, nth = parse(os.Getenv("SECKILL_CRASHPOINT"))
	hits       atomic.Int64
)

func parse(v string) (string, int64) {
	name, n, found := strings.Cut(v, ":")
	if !found {
		return name, 1
	}
	k, err := strconv.ParseInt(n, 10, 64)
	if err != nil || k < 1 {
		return name, 1
	}
	return name, k
}

// Hit kills the process with SIGKILL at the armed step's Nth hit.
func Hit(name string) {
	if armed == "" || name != armed || hits.Add(1) != nth {
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL is not delivered synchronously everywhere: go no further
}
