package purchase

import (
	"context"
	"errors"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/stock"
)

// replicated runs wait, the WAIT for Config.WaitReplicas Redis replicas to
// hold a batch's last write (what: "grant" or "deduct"), when WAIT is on.
// Redis replicates asynchronously: a primary that dies after acknowledging
// a write can take it with it, and the replica promoted in its place never
// saw the grant (a second holder may get the lock) or the deduct (the units
// come back). With the WAIT, a write the batch acts on is on that many
// replicas. It returns the 503 for the batch's buyers, or nil.
func (p *seller) replicated(ctx context.Context, what string, wait func(context.Context) error) *seckill.Error {
	if p.cfg.WaitReplicas == 0 {
		return nil
	}
	err := wait(ctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, stock.ErrNotReplicated):
		p.m.batches.WithLabelValues("unreplicated").Inc()
		p.log.Warn("Redis replicas did not acknowledge in time; nothing sold", "write", what, "replicas", p.cfg.WaitReplicas, "timeout", p.cfg.WaitTimeout, "err", err)
		return seckill.Unavailable("Redis replicas did not acknowledge the sale in time; nothing was sold", err)
	default:
		p.m.batches.WithLabelValues("unavailable").Inc()
		return seckill.Unavailable("Redis did not answer; nothing was sold", err)
	}
}
