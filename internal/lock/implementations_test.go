package lock_test

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// The safety tests run over this package and the three naive locks of the
// seed article (docs/SEEDS.md, "six levels"), each of which must be caught
// by at least one test: that is the evidence the tests can fail.

// mutex is what the safety tests need of a lock.
type mutex interface {
	tryLock(ctx context.Context, key string, ttl time.Duration) (held, error)
}

// held is a granted lock: ctx is the context the holder works under (the
// lease context, for this package) and unlock releases it.
type held struct {
	ctx    context.Context
	unlock func(context.Context) error
}

var errBusy = errors.New("busy")

type ours struct{ c *lock.Client }

func (m ours) tryLock(ctx context.Context, key string, ttl time.Duration) (held, error) {
	l, err := m.c.Obtain(ctx, key, ttl, nil)
	if err != nil {
		return held{}, err
	}
	return held{ctx: l.Context(), unlock: l.Release}, nil
}

// level1 is SETNX + DEL: mutual exclusion only; a holder that never releases
// blocks everyone for ever.
type level1 struct{ rdb *redis.Client }

func (m level1) tryLock(ctx context.Context, key string, _ time.Duration) (held, error) {
	ok, err := m.rdb.SetNX(ctx, key, "1", 0).Result()
	if err != nil || !ok {
		return held{}, errors.Join(errBusy, err)
	}
	return held{ctx: ctx, unlock: func(ctx context.Context) error { return m.rdb.Del(ctx, key).Err() }}, nil
}

// level2 is SET NX PX + DEL: no deadlock, but the release deletes whatever
// lock is there, and nothing stops a holder that outlives its TTL.
type level2 struct{ rdb *redis.Client }

func (m level2) tryLock(ctx context.Context, key string, ttl time.Duration) (held, error) {
	ok, err := m.rdb.SetNX(ctx, key, "1", ttl).Result()
	if err != nil || !ok {
		return held{}, errors.Join(errBusy, err)
	}
	return held{ctx: ctx, unlock: func(ctx context.Context) error { return m.rdb.Del(ctx, key).Err() }}, nil
}

// level3 is a random token with SET NX PX and a compare-and-delete release,
// but no answer to "the acquire timed out: do I hold it?".
type level3 struct{ rdb *redis.Client }

var cad = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

func (m level3) tryLock(ctx context.Context, key string, ttl time.Duration) (held, error) {
	token := rand.Text()
	ok, err := m.rdb.SetNX(ctx, key, token, ttl).Result()
	if err != nil || !ok {
		return held{}, errors.Join(errBusy, err)
	}
	return held{ctx: ctx, unlock: func(ctx context.Context) error { return cad.Run(ctx, m.rdb, []string{key}, token).Err() }}, nil
}

// implementation names a lock under test and whether the test must catch it.
type implementation struct {
	name   string
	new    func(rdb *redis.Client) mutex
	caught bool
}

func newOurs(opt *lock.Options) func(*redis.Client) mutex {
	return func(rdb *redis.Client) mutex { return ours{lock.New(rdb, opt)} }
}

func newLevel1(rdb *redis.Client) mutex { return level1{rdb} }

func newLevel2(rdb *redis.Client) mutex { return level2{rdb} }

func newLevel3(rdb *redis.Client) mutex { return level3{rdb} }

// check fails the test when the property's verdict disagrees with what is
// expected of impl: held for this package, violated for a naive lock.
func check(t *testing.T, impl implementation, violated bool, detail string) {
	t.Helper()
	switch {
	case violated && !impl.caught:
		t.Errorf("%s: property violated: %s", impl.name, detail)
	case !violated && impl.caught:
		t.Errorf("%s: naive lock not caught: the test cannot tell it from a safe one (%s)", impl.name, detail)
	case violated:
		t.Logf("%s caught as expected: %s", impl.name, detail)
	default:
		t.Logf("%s: %s", impl.name, detail)
	}
}

// eachImpl runs prop once per implementation, as a subtest, with that
// implementation on the test's Redis and a lock key of its own.
func eachImpl(t *testing.T, impls []implementation, prop func(t *testing.T, impl implementation, m mutex, key string)) {
	rdb, prefix := testenv.Redis(t), testenv.Prefix(t)
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			prop(t, impl, impl.new(rdb), prefix+impl.name+":{me}:lock")
		})
	}
}
