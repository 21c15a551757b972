package seckill_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill"
)

// Each way the books can be off is caught, by its own check, with a
// sentence naming the activity; balanced books have no violation.
func TestBooksViolations(t *testing.T) {
	balanced := seckill.Books{ActivityID: 7, TotalStock: 10, Sold: 4, Held: 4, Rows: 5, RedisRemaining: 6, RedisLoaded: true}
	if vs := balanced.Violations(); len(vs) != 0 {
		t.Fatalf("balanced books: %v", vs)
	}
	cases := []struct {
		name  string
		books func(b *seckill.Books)
		want  []string
	}{
		{"an order too many", func(b *seckill.Books) { b.Held, b.Sold, b.RedisRemaining = 11, 11, 0 },
			[]string{seckill.CheckOversold, seckill.CheckImbalance}},
		{"a user twice", func(b *seckill.Books) { b.DuplicateUsers = 1 }, []string{seckill.CheckDuplicateUsers}},
		{"no stock in Redis", func(b *seckill.Books) { b.RedisLoaded, b.RedisRemaining = false, 0 }, []string{seckill.CheckRedisMissing}},
		{"negative stock in Redis", func(b *seckill.Books) { b.RedisRemaining = -1 },
			[]string{seckill.CheckRedisNegative, seckill.CheckImbalance}},
		{"a unit lost", func(b *seckill.Books) { b.RedisRemaining = 5 }, []string{seckill.CheckImbalance}},
		{"a unit twice", func(b *seckill.Books) { b.RedisRemaining = 7 }, []string{seckill.CheckImbalance}},
		{"sold off the rows", func(b *seckill.Books) { b.Sold = 3 }, []string{seckill.CheckSold}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := balanced
			c.books(&b)
			var got []string
			for _, v := range b.Violations() {
				got = append(got, v.Check)
				if !strings.HasPrefix(v.String(), "activity 7: ") {
					t.Errorf("violation %q does not name the activity", v)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("checks failed: %v, want %v (%v)", got, c.want, b.Violations())
			}
		})
	}
}

func TestBooksFigures(t *testing.T) {
	b := seckill.Books{TotalStock: 10, Held: 12, RedisRemaining: 1, RedisLoaded: true}
	if b.Oversold() != 2 || b.Imbalance() != 3 {
		t.Errorf("oversold %d, imbalance %d; want 2, 3", b.Oversold(), b.Imbalance())
	}
	b.RedisLoaded = false
	if b.Imbalance() != 0 {
		t.Errorf("imbalance without stock in Redis: %d, want 0", b.Imbalance())
	}
	if (seckill.Books{TotalStock: 10, Held: 3}).Oversold() != 0 {
		t.Error("oversold below the total")
	}
}
