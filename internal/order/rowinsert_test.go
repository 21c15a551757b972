package order

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm/schema"
)

// TestRowInsertsMatchTheSchema holds each hand-written insert to gorm's
// schema of its row, which the reads use: every column once, and each value
// listed under its own column. Rows with every field set to a value of its
// own catch a column list out of step with values (two columns swapped, a
// field added to the row but not to the insert).
func TestRowInsertsMatchTheSchema(t *testing.T) {
	at := time.Date(2026, 11, 28, 1, 2, 3, 4000, time.UTC)
	later, owner, key, currency, reason := at.Add(time.Hour), "owner", "key", "EUR", "reason"
	price, batch := int64(990), int64(77)
	for _, c := range []struct {
		in  rowInsert
		row valuer
	}{
		{orderInsert, &orderRow{ID: "o", ActivityID: 2, UserID: 3, Status: "created", IdempotencyKey: &key, Fence: 4,
			CreatedAt: at, PayBy: &later, PaidAt: &time.Time{}, StatusFence: 5, PriceMinor: &price, Currency: &currency,
			RefundReason: &reason, EventSequence: 6, Quantity: 7}},
		{eventInsert, &eventRow{ID: "e", Aggregatetype: "order", Aggregateid: "o", Type: "order.created", Payload: "{}",
			Sequence: 2, ActivityID: 3, CreatedAt: at, LeaseOwner: &owner, LeaseUntil: &later, SentAt: time.Time{}, Batch: &batch}},
		{batchInsert, &batchRow{ID: 1, Events: 2, CreatedAt: at, LeaseOwner: &owner, LeaseUntil: &later, SentAt: time.Time{}}},
	} {
		t.Run(c.in.table, func(t *testing.T) {
			s, err := schema.Parse(c.row, &sync.Map{}, schema.NamingStrategy{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Table != c.in.table {
				t.Errorf("table %s, gorm's is %s", c.in.table, s.Table)
			}
			if len(c.in.columns) != len(s.DBNames) {
				t.Errorf("columns %v, gorm's are %v", c.in.columns, s.DBNames)
			}
			values := c.row.values(nil)
			if len(values) != len(c.in.columns) {
				t.Fatalf("%d values for %d columns", len(values), len(c.in.columns))
			}
			seen := map[any]string{}
			for i, col := range c.in.columns {
				f := s.LookUpField(col)
				if f == nil {
					t.Errorf("column %s is no field of the row", col)
					continue
				}
				want, _ := f.ValueOf(context.Background(), reflect.ValueOf(c.row))
				if !reflect.DeepEqual(values[i], want) {
					t.Errorf("column %s: value %v, the field holds %v", col, values[i], want)
				}
				if other, ok := seen[values[i]]; ok {
					t.Errorf("columns %s and %s hold the same value %v: give each field its own in this test", other, col, values[i])
				}
				seen[values[i]] = col
			}
		})
	}
}
