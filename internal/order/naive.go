//go:build seckill_naive

package order

import (
	"context"
	"fmt"

	"github.com/seckill-oss/seckill"
)

// CreateOrderUnguarded inserts the order without CreateOrder's fence and
// stock guard, as the seed incident's handler did. It exists only in
// binaries built with -tags seckill_naive, for the load-test harness to show
// an oversell.
func (s *Store) CreateOrderUnguarded(ctx context.Context, o seckill.Order) error {
	row := s.newOrderRow(o)
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("order: unguarded insert: %w", err)
	}
	return nil
}
