package order

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seckill-oss/seckill"
)

func TestActivityRoundTrip(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		shanghai := time.FixedZone("CST", 8*3600)
		in := seckill.Activity{
			Name:       "Moutai 53% 500ml, 限量",
			TotalStock: 100,
			StartsAt:   time.Date(2030, 1, 2, 20, 0, 0, 123456789, shanghai),
			EndsAt:     time.Date(2030, 1, 2, 21, 0, 0, 0, shanghai),
		}
		created, err := s.Activities.CreateActivity(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if created.ID <= 0 || created.CreatedAt.IsZero() || created.CreatedAt.Location() != time.UTC {
			t.Errorf("created activity has ID %d, CreatedAt %v", created.ID, created.CreatedAt)
		}
		want := in
		want.ID, want.CreatedAt = created.ID, created.CreatedAt
		want.PerUserLimit = max(in.PerUserLimit, 1) // stored as the limit it means
		want.StartsAt = time.Date(2030, 1, 2, 12, 0, 0, 123456000, time.UTC)
		want.EndsAt = time.Date(2030, 1, 2, 13, 0, 0, 0, time.UTC)
		if created != want {
			t.Errorf("CreateActivity returned\n%+v, want\n%+v", created, want)
		}
		got, err := s.Activities.Activity(ctx, created.ID)
		if err != nil {
			t.Fatal(err)
		}
		// == on time.Time compares locations too: times come back in UTC.
		if got != want {
			t.Errorf("Activity returned\n%+v, want\n%+v", got, want)
		}
		if _, err := s.Activities.Activity(ctx, created.ID+1000); !errors.Is(err, ErrActivityNotFound) {
			t.Errorf("Activity(missing): %v, want ErrActivityNotFound", err)
		}
		if _, err := s.Activities.Fence(ctx, created.ID+1000); !errors.Is(err, ErrActivityNotFound) {
			t.Errorf("Fence(missing): %v, want ErrActivityNotFound", err)
		}
		if err := s.Ping(ctx); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
}

func TestCreateOrderAndLookups(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 10)
		before := time.Now().UTC().Add(-time.Second)
		o, err := createOrder(ctx, s.Orders, seckill.Order{ActivityID: a.ID, UserID: 42, Fence: 1, IdempotencyKey: "req-1"})
		if err != nil {
			t.Fatal(err)
		}
		if id, err := uuid.Parse(o.ID); err != nil || id.Version() != 7 {
			t.Errorf("order id %q is not a UUIDv7 (%v)", o.ID, err)
		}
		if o.Status != seckill.OrderStatusCreated || o.CreatedAt.Before(before) || o.CreatedAt.Location() != time.UTC {
			t.Errorf("order defaults: status %q, created at %v", o.Status, o.CreatedAt)
		}

		byUser, err := s.Orders.OrderByUser(ctx, a.ID, 42)
		if err != nil || byUser != o {
			t.Errorf("OrderByUser = %+v, %v; want %+v", byUser, err, o)
		}
		byKey, err := s.Orders.OrderByIdempotencyKey(ctx, 42, "req-1")
		if err != nil || byKey != o {
			t.Errorf("OrderByIdempotencyKey = %+v, %v; want %+v", byKey, err, o)
		}
		if _, err := s.Orders.OrderByUser(ctx, a.ID, 43); !errors.Is(err, ErrNotFound) {
			t.Errorf("OrderByUser(other user): %v, want ErrNotFound", err)
		}
		if _, err := s.Orders.OrderByIdempotencyKey(ctx, 42, "req-2"); !errors.Is(err, ErrNotFound) {
			t.Errorf("OrderByIdempotencyKey(other key): %v, want ErrNotFound", err)
		}
		if n := count(t, s, a.ID); n != 1 {
			t.Errorf("CountOrders = %d, want 1", n)
		}
		if f, err := s.Activities.Fence(ctx, a.ID); err != nil || f != 1 {
			t.Errorf("Fence = %d, %v; want 1", f, err)
		}

		// A caller-chosen id and time are kept, the time as stored.
		at := time.Date(2030, 5, 6, 7, 8, 9, 999_999_999, time.FixedZone("X", -3600))
		given, err := createOrder(ctx, s.Orders, seckill.Order{ID: "order-2", ActivityID: a.ID, UserID: 7, Fence: 2, CreatedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.Orders.OrderByUser(ctx, a.ID, 7)
		if err != nil {
			t.Fatal(err)
		}
		wantAt := time.Date(2030, 5, 6, 8, 8, 9, 999_999_000, time.UTC)
		if given != stored || stored.ID != "order-2" || stored.CreatedAt != wantAt || stored.IdempotencyKey != "" {
			t.Errorf("returned %+v, stored %+v; want id order-2 at %v without key", given, stored, wantAt)
		}

		if err := buy(s, a.ID+1000, 1, 10, ""); !errors.Is(err, ErrActivityNotFound) {
			t.Errorf("order for a missing activity: %v, want ErrActivityNotFound", err)
		}
	})
}
