package lock

import "time"

// DefaultWait is Policy.Wait when it is 0.
const DefaultWait = time.Second

// Policy is how everyone who shares a lock takes it, one value for all of
// them: the purchase path that sells under the per-activity lock and the
// books side that changes the stock under it must agree on its lease, or
// one side waits too little for the other to let go.
type Policy struct {
	// TTL is the lease.
	TTL time.Duration
	// Wait is how long a taker waits for another holder's lease to end (and
	// a buyer for a batch to take it); 0 means DefaultWait.
	Wait time.Duration
	// CallTimeout is the deadline of one outside call made under the lease
	// (the user check). It must be shorter than TTL: a call that may
	// outlive the lease lets the lock expire under its holder. Lock.CallBudget
	// cuts it shorter still when the lease has less left.
	CallTimeout time.Duration
}

// WithDefaults is p with DefaultWait for a zero Wait.
func (p Policy) WithDefaults() Policy {
	if p.Wait == 0 {
		p.Wait = DefaultWait
	}
	return p
}
