package main

import (
	"context"
	"errors"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/httpapi"
	"github.com/seckill-oss/seckill/loadtest/naive"
)

// seedService is the service with the seed's handler in place of its
// purchase; every other call is the service's own.
type seedService struct {
	httpapi.Service
	seed *naive.Seed
}

// Buy sells with the seed's handler and answers in the contract's codes.
// A quantity sells as the seed sold one unit: it checks no per-user limit
// (the seed had none) and reads, stalls, then takes the units.
func (n seedService) Buy(ctx context.Context, req seckill.BuyRequest) (seckill.Order, error) {
	id, err := n.seed.BuyUnits(ctx, req.ActivityID, req.UserID, req.Units())
	var short *naive.NotEnoughError
	switch {
	case err == nil:
		return seckill.Order{
			ID: id, ActivityID: req.ActivityID, UserID: req.UserID, Status: seckill.OrderStatusCreated,
			CreatedAt: time.Now().UTC(), Quantity: req.Units(),
		}, nil
	case errors.As(err, &short):
		return seckill.Order{}, seckill.NotEnoughStock(short.Remaining)
	case errors.Is(err, naive.ErrBusy):
		return seckill.Order{}, &seckill.Error{Code: seckill.EBusy, Message: "busy", RetryAfter: time.Second}
	case errors.Is(err, naive.ErrSoldOut):
		return seckill.Order{}, seckill.Errorf(seckill.ESoldOut, "no stock left")
	case errors.Is(err, naive.ErrRejected):
		return seckill.Order{}, seckill.Errorf(seckill.EUserRejected, "rejected")
	default:
		return seckill.Order{}, &seckill.Error{Code: seckill.EUnavailable, Message: "unavailable", RetryAfter: time.Second, Err: err}
	}
}
