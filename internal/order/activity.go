package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

// Activities: the rows that carry each sale's total, the units sold and the
// fence of the last writer, which the order writes claim under lock.

// CreateActivity stores a and returns it with its new ID and CreatedAt set.
// Times are stored in UTC with microsecond precision, and returned as stored.
func (s *Activities) CreateActivity(ctx context.Context, a seckill.Activity) (seckill.Activity, error) {
	row := activityRow{
		Name:       a.Name,
		TotalStock: a.TotalStock,
		StartsAt:   storedTime(a.StartsAt),
		EndsAt:     storedTime(a.EndsAt),
		CreatedAt:  now(),
	}
	row.PriceMinor, row.Currency = optionalPrice(a.PriceMinor, a.Currency)
	row.WaitingRoomOpensAt, row.WaitingRoomSeed = storedRoom(a.WaitingRoom)
	row.Announced = !a.Unannounced
	row.PerUserLimit = a.Limit()
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return seckill.Activity{}, fmt.Errorf("order: create activity %q: %w", a.Name, err)
	}
	return row.activity(), nil
}

// Activity returns the activity with the id, or ErrActivityNotFound.
func (s *Activities) Activity(ctx context.Context, id int64) (seckill.Activity, error) {
	var row activityRow
	if err := s.db.WithContext(ctx).Take(&row, id).Error; err != nil {
		return seckill.Activity{}, activityErr(id, err)
	}
	return row.activity(), nil
}

// HighestActivityID returns the highest activity id the database holds, 0
// when it holds none. Ids are handed out in increasing order, so an id above
// it names no activity yet.
func (s *Activities) HighestActivityID(ctx context.Context) (int64, error) {
	var highest int64
	if err := s.db.WithContext(ctx).Raw("SELECT COALESCE(MAX(id), 0) FROM activities").Scan(&highest).Error; err != nil {
		return 0, fmt.Errorf("order: highest activity id: %w", err)
	}
	return highest, nil
}

// Fence returns the highest lock fence that has written an order for the
// activity (0 before the first), or ErrActivityNotFound. A lock's fence
// counter must be seeded above it after Redis lost its data.
func (s *Activities) Fence(ctx context.Context, activityID int64) (int64, error) {
	var row activityRow
	if err := s.db.WithContext(ctx).Select("fence").Take(&row, activityID).Error; err != nil {
		return 0, activityErr(activityID, err)
	}
	return row.Fence, nil
}

// ClaimFence moves the activity's fence up to fence without writing an order,
// so that from then on no order under an older lock grant can be written,
// and returns the units sold as of the claim (created and paid orders:
// activities.sold, which every order write and expiry moves in its own
// transaction), read in the same transaction under the row's lock. A stock
// reload loads total - sold: no write in flight under an older grant can
// land behind it, and it costs one row, not a count of millions of orders.
// It returns ErrStaleFence when an order or claim under fence or a newer one
// came first, or ErrActivityNotFound.
func (s *Activities) ClaimFence(ctx context.Context, activityID, fence int64) (sold int64, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Exec(claimFence, fence, activityID, fence)
		if res.Error != nil {
			return fmt.Errorf("order: claim fence %d of activity %d: %w", fence, activityID, res.Error)
		}
		var a activityRow
		if err := lockActivity(tx, s.dialect, activityID, "fence, sold", &a); err != nil {
			return err
		}
		if res.RowsAffected != 1 {
			return fmt.Errorf("order: claim fence %d of activity %d, written under %d: %w", fence, activityID, a.Fence, ErrStaleFence)
		}
		sold = a.Sold
		return nil
	})
	return sold, err
}

// Books is an activity's side of the books: its total and the units its
// orders hold (activities.sold, which every order write and expiry moves in
// its own transaction).
type Books struct {
	ActivityID int64
	TotalStock int64
	Sold       int64
}

// OpenBooks returns the books of the activities that end after since: those
// whose units can still move (a sale, an expiry, a unit coming back).
func (s *Activities) OpenBooks(ctx context.Context, since time.Time) ([]Books, error) {
	var rows []activityRow
	err := s.db.WithContext(ctx).Select("id", "total_stock", "sold").Where("ends_at > ?", storedTime(since)).Order("id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("order: books of activities ending after %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	books := make([]Books, len(rows))
	for i, r := range rows {
		books[i] = Books{ActivityID: r.ID, TotalStock: r.TotalStock, Sold: r.Sold}
	}
	return books, nil
}

func activityErr(id int64, err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return fmt.Errorf("order: activity %d: %w", id, ErrActivityNotFound)
	}
	return fmt.Errorf("order: read activity %d: %w", id, err)
}

// activityRow is a row of the activities table.
type activityRow struct {
	ID         int64 `gorm:"primaryKey"`
	Name       string
	TotalStock int64
	StartsAt   time.Time
	EndsAt     time.Time
	CreatedAt  time.Time
	Fence      int64
	Sold       int64
	PriceMinor *int64  // NULL: no price
	Currency   *string // NULL: no price
	// NULL, NULL: no waiting room.
	WaitingRoomOpensAt *time.Time
	WaitingRoomSeed    *string
	Announced          bool
	PausedAt           *time.Time // NULL: not paused
	PerUserLimit       int64
}

func (activityRow) TableName() string { return "activities" }

// storedRoom is a waiting room as stored: NULL and NULL for none.
func storedRoom(w *seckill.WaitingRoom) (*time.Time, *string) {
	if w == nil {
		return nil, nil
	}
	at, seed := storedTime(w.OpensAt), w.Seed
	return &at, &seed
}

func (r activityRow) activity() seckill.Activity {
	return seckill.Activity{
		ID:         r.ID,
		Name:       r.Name,
		TotalStock: r.TotalStock,
		StartsAt:   r.StartsAt.UTC(),
		EndsAt:     r.EndsAt.UTC(),
		CreatedAt:  r.CreatedAt.UTC(),
		PriceMinor: deref(r.PriceMinor),
		Currency:   deref(r.Currency),
		WaitingRoom: func() *seckill.WaitingRoom {
			if r.WaitingRoomOpensAt == nil {
				return nil
			}
			return &seckill.WaitingRoom{OpensAt: r.WaitingRoomOpensAt.UTC(), Seed: deref(r.WaitingRoomSeed)}
		}(),
		Unannounced:  !r.Announced,
		PausedAt:     derefTime(r.PausedAt),
		PerUserLimit: r.PerUserLimit,
	}
}

// optionalPrice is a price as stored: NULL and NULL for none.
func optionalPrice(priceMinor int64, currency string) (*int64, *string) {
	if priceMinor == 0 && currency == "" {
		return nil, nil
	}
	return &priceMinor, &currency
}
