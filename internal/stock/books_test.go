package stock_test

import (
	"context"
	"slices"
	"testing"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

func TestFillBooks(t *testing.T) {
	s := stock.New(testenv.Redis(t), keys.NewSpace(testenv.Prefix(t)))
	ctx := context.Background()
	if err := s.Load(ctx, 1, 7, 1); err != nil {
		t.Fatal(err)
	}
	books := []seckill.Books{{ActivityID: 1, TotalStock: 9}, {ActivityID: 2, RedisRemaining: 5, RedisLoaded: true}}
	if err := s.FillBooks(ctx, books); err != nil {
		t.Fatal(err)
	}
	want := []seckill.Books{{ActivityID: 1, TotalStock: 9, RedisRemaining: 7, RedisLoaded: true}, {ActivityID: 2}}
	if !slices.Equal(books, want) {
		t.Errorf("FillBooks: %+v, want %+v", books, want)
	}
}
