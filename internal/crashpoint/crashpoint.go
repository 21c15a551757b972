//go:build !seckill_crashpoints

// Package crashpoint names the steps between which a process may die, so the
// tests can kill a real process exactly there and show the books balance
// again without anyone's help.
//
// In a normal build Hit does nothing and costs nothing. Built with the tag
// seckill_crashpoints (the end-to-end tests' binary), Hit(name) kills its
// own process with SIGKILL, as the kernel's OOM killer or a pulled plug
// would, when SECKILL_CRASHPOINT names that step: "name" for its first hit,
// "name:N" for its Nth.
package crashpoint

// The steps.
const (
	// AfterDeduct: a batch's units are deducted in Redis; its orders are
	// not written.
	AfterDeduct = "purchase.after_deduct"
	// AfterCommit: a batch's orders are committed; units of orders kept out
	// are not settled back and no buyer is answered.
	AfterCommit = "purchase.after_commit"
	// AfterExpiry: an unpaid order's expiry is committed (sold went down);
	// its unit is not returned to Redis.
	AfterExpiry = "payment.after_expiry_commit"
)

// Hit marks that the process reached the step name.
func Hit(name string) {}
