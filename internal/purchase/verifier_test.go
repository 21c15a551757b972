package purchase_test

import (
	"context"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
)

type verifierFunc func(ctx context.Context, userID, activityID int64) error

func (f verifierFunc) Verify(ctx context.Context, userID, activityID int64) error {
	return f(ctx, userID, activityID)
}

// A verifier that panics fails its buyer with 503, not the process: the
// next buyer of the same activity is served.
func TestPanickingVerifierFailsOnlyItsBuyer(t *testing.T) {
	f := newFixture(t)
	svc, err := wiring.New(app.Config{Lease: lock.Policy{TTL: time.Second, CallTimeout: 200 * time.Millisecond}}, app.Deps{Redis: f.rdb, Locks: lock.New(f.rdb, nil), Orders: f.orders, Users: verifierFunc(func(_ context.Context, userID, _ int64) error {
		if userID == 13 {
			panic("verifier bug")
		}
		return nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	now := time.Now()
	a, err := svc.CreateActivity(context.Background(), seckill.Activity{Name: "Moutai 53%", TotalStock: 5, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Buy(context.Background(), seckill.BuyRequest{ActivityID: a.ID, UserID: 13}); code(err) != seckill.EUnavailable {
		t.Fatalf("buyer whose check panicked: %v, want unavailable", err)
	}
	if _, err := svc.Buy(context.Background(), seckill.BuyRequest{ActivityID: a.ID, UserID: 14}); err != nil {
		t.Fatalf("next buyer: %v, want an order", err)
	}
}
