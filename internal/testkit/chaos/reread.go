package chaos

import (
	"context"
	"time"

	"github.com/sethvargo/go-retry"
)

// rereadBound bounds how long the checker tries one read of the database
// again. The faults have ended when it reads, but a pooled connection to a
// Galera node the campaign killed answers once with "invalid connection",
// and a node still rejoining refuses for a while, then HAProxy cuts every
// session when it moves the writes back to it: a check must not be lost to
// either. 30 s was too short beside a campaign and a CI run on two cores
// ("chaos: the events pending: invalid connection"); a rejoin there takes
// minutes (scripts/galera.sh waits 240 s).
const rereadBound = 2 * time.Minute

// reread runs read until it succeeds, rereadBound passes or ctx ends, and
// returns its last answer. Only for reads: a write tried again may apply
// twice.
func reread[T any](ctx context.Context, read func(context.Context) (T, error)) (T, error) {
	var v T
	err := retry.Do(ctx, retry.WithMaxDuration(rereadBound, retry.NewConstant(250*time.Millisecond)), func(ctx context.Context) (err error) {
		v, err = read(ctx)
		return retry.RetryableError(err)
	})
	return v, err
}
