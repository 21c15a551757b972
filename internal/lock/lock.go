// Package lock: STUB with the agreed signatures; replaced by the real implementation.
package lock

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	ErrNotObtained    = errors.New("lock: not obtained")
	ErrNotHeld        = errors.New("lock: not held")
	ErrUnknownOutcome = errors.New("lock: outcome unknown")
)

type Options struct {
	Observer       Observer
	DriftFactor    float64
	ReleaseTimeout time.Duration
}

type Observer interface{}

type Client struct{ rdb redis.UniversalClient }

func New(rdb redis.UniversalClient, opt *Options) *Client { return &Client{rdb: rdb} }

type ObtainOptions struct {
	Wait      time.Duration
	AutoRenew bool
}

func (c *Client) Obtain(ctx context.Context, key string, ttl time.Duration, opt *ObtainOptions) (*Lock, error) {
	return nil, errors.New("stub")
}
func (c *Client) SeedFence(ctx context.Context, key string, atLeast int64) error { return nil }
func (c *Client) Close() error                                                   { return nil }

type Lock struct{}

func (l *Lock) Key() string                                         { return "" }
func (l *Lock) Fence() int64                                        { return 0 }
func (l *Lock) Context() context.Context                            { return context.Background() }
func (l *Lock) Remaining() time.Duration                            { return 0 }
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) error { return nil }
func (l *Lock) Release(ctx context.Context) error                   { return nil }
