package stock_test

import (
	"context"
	"slices"
	"testing"

	"github.com/seckill-oss/seckill"
)

func TestFillBooks(t *testing.T) {
	s, _, _ := loadedStock(t, 7)
	ctx := context.Background()
	books := []seckill.Books{{ActivityID: 1, TotalStock: 9}, {ActivityID: 2, RedisRemaining: 5, RedisLoaded: true}}
	if err := s.FillBooks(ctx, books); err != nil {
		t.Fatal(err)
	}
	want := []seckill.Books{{ActivityID: 1, TotalStock: 9, RedisRemaining: 7, RedisLoaded: true}, {ActivityID: 2}}
	if !slices.Equal(books, want) {
		t.Errorf("FillBooks: %+v, want %+v", books, want)
	}
}
