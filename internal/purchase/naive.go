package purchase

import (
	"context"

	"github.com/seckill-oss/seckill"
)

// naive is the seed incident's purchase handler. It is nil in every normal
// build; only a binary built with -tags seckill_naive and run with
// SECKILL_NAIVE=1 sets it, so the load-test harness can show it catching an
// oversell.
var naive func(ctx context.Context, s *Service, req BuyRequest) (seckill.Order, error)
