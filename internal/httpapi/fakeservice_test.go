package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/seckill-oss/seckill"
)

var (
	t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

// fakeService answers like a purchase service holding activity 1 (total 100,
// 37 left) and nothing else; tests replace single methods.
type fakeService struct {
	buy       func(seckill.BuyRequest) (seckill.Order, error)
	activity  func(id int64) (seckill.ActivityView, error)
	myOrder   func(activityID, userID int64) (seckill.Order, error)
	create    func(seckill.Activity) (seckill.ActivityView, error)
	preload   func(id int64) (int64, error)
	audit     func(id int64) (seckill.Audit, error)
	reconcile func(id int64) (seckill.Reconciliation, error)
	ready     func() error
}

func notFound(id int64) error {
	return seckill.Errorf(seckill.EActivityNotFound, "no activity %d", id)
}

func newFake() *fakeService {
	act := seckill.Activity{ID: 1, Name: "Moutai 53%", TotalStock: 100, StartsAt: t0, EndsAt: t1}
	return &fakeService{
		buy: func(r seckill.BuyRequest) (seckill.Order, error) {
			if r.ActivityID != 1 {
				return seckill.Order{}, notFound(r.ActivityID)
			}
			return seckill.Order{ID: "ord-1", ActivityID: r.ActivityID, UserID: r.UserID, Status: seckill.OrderStatusCreated,
				IdempotencyKey: r.IdempotencyKey, CreatedAt: t0.Add(5 * time.Minute)}, nil
		},
		activity: func(id int64) (seckill.ActivityView, error) {
			if id != 1 {
				return seckill.ActivityView{}, notFound(id)
			}
			return seckill.ActivityView{Activity: act, Remaining: 37, Status: seckill.StatusActive}, nil
		},
		myOrder: func(activityID, userID int64) (seckill.Order, error) {
			if activityID != 1 {
				return seckill.Order{}, notFound(activityID)
			}
			if userID != 42 {
				return seckill.Order{}, seckill.Errorf(seckill.EOrderNotFound, "no order")
			}
			return seckill.Order{ID: "ord-42", ActivityID: 1, UserID: 42, Status: seckill.OrderStatusCreated, CreatedAt: t0}, nil
		},
		create: func(a seckill.Activity) (seckill.ActivityView, error) {
			a.ID = 7
			return seckill.ActivityView{Activity: a, Remaining: a.TotalStock, Status: seckill.StatusUpcoming}, nil
		},
		preload: func(id int64) (int64, error) {
			if id != 1 {
				return 0, notFound(id)
			}
			return 100, nil
		},
		audit: func(id int64) (seckill.Audit, error) {
			if id != 1 {
				return seckill.Audit{}, notFound(id)
			}
			return seckill.Audit{ActivityID: 1, TotalStock: 100, Orders: 100, RedisRemaining: 0, Consistent: true}, nil
		},
		reconcile: func(id int64) (seckill.Reconciliation, error) {
			if id != 1 {
				return seckill.Reconciliation{}, notFound(id)
			}
			return seckill.Reconciliation{ActivityID: 1, TotalStock: 100, Orders: 60, Before: 39, After: 40, Changed: true}, nil
		},
		ready: func() error { return nil },
	}
}

func (f *fakeService) Buy(_ context.Context, r seckill.BuyRequest) (seckill.Order, error) {
	return f.buy(r)
}

func (f *fakeService) BuyerActivity(ctx context.Context, id int64) (seckill.ActivityView, error) {
	return f.Activity(ctx, id)
}

func (f *fakeService) Activity(_ context.Context, id int64) (seckill.ActivityView, error) {
	return f.activity(id)
}

func (f *fakeService) MyOrder(_ context.Context, a, u int64) (seckill.Order, error) {
	return f.myOrder(a, u)
}

func (f *fakeService) CreateActivity(_ context.Context, a seckill.Activity) (seckill.ActivityView, error) {
	return f.create(a)
}

func (f *fakeService) Preload(_ context.Context, id int64) (int64, error) { return f.preload(id) }

func (f *fakeService) Audit(_ context.Context, id int64) (seckill.Audit, error) {
	return f.audit(id)
}

func (f *fakeService) Reconcile(_ context.Context, id int64) (seckill.Reconciliation, error) {
	return f.reconcile(id)
}

func (f *fakeService) Ready(context.Context) error { return f.ready() }

const adminToken = "s3cret-admin-token"

func newTestServer(cfg Config, f *fakeService) http.Handler {
	if cfg.Now == nil {
		// The tests' activities run from 10:00 to 11:00 of their day.
		cfg.Now = func() time.Time { return time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC) }
	}
	return NewServer(cfg, withParts(Deps{Service: f}))
}

const (
	activityJSON = `{"id":1,"name":"Moutai 53%","total_stock":100,"remaining_stock":37,
		"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z","status":"active","per_user_limit":1}`
	orderJSON = `{"order_id":"ord-1","activity_id":1,"user_id":42,"status":"created","quantity":1,"created_at":"2026-11-22T10:05:00Z"}`
)

// withParts fills the optional parts of d the way cmd/seckill wires them:
// from whatever the service and the payments also implement.
func withParts(d Deps) Deps {
	d.Tasks, _ = d.Service.(AdminTasks)
	d.Pricer, _ = d.Service.(Pricer)
	d.Rooms, _ = d.Service.(RoomAdmin)
	d.Canceller, _ = d.Payments.(Canceller)
	return d
}
