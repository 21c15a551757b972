package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
)

// readBooks reads the books of the activities with the ids (all when none)
// from the configured database and Redis; an id that names no activity is
// an error. It changes nothing: the schema is not migrated.
func readBooks(ctx context.Context, getenv func(string) string, stderr io.Writer, ids []int64) ([]seckill.Books, error) {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return nil, err
	}
	if cfg.RedisURL == "" || cfg.MySQLDSN == "" {
		return nil, errors.New("SECKILL_REDIS_URL and SECKILL_MYSQL_DSN must both be set (an embedded store lives only inside its serve process)")
	}
	b := &backend{log: newLogger(cfg, stderr), dsn: cfg.MySQLDSN}
	defer b.Close()
	if err := b.openRedis(ctx, cfg, prometheus.NewRegistry()); err != nil {
		return nil, err
	}
	if b.orders, err = order.Open(ctx, cfg.MySQLDSN, order.Options{SkipMigrations: true}); err != nil {
		return nil, fmt.Errorf("open database: %w", explainDBError(cfg.MySQLDSN, err))
	}
	all, err := b.orders.Activities.Books(ctx, ids...)
	if err != nil {
		return nil, fmt.Errorf("the order database did not answer: %w", explainDBError(cfg.MySQLDSN, err))
	}
	for _, id := range ids {
		if !slices.ContainsFunc(all, func(b seckill.Books) bool { return b.ActivityID == id }) {
			return nil, fmt.Errorf("activity %d: %w", id, order.ErrActivityNotFound)
		}
	}
	if err := stock.New(b.rdb, keys.NewSpace(cfg.KeyPrefix)).FillBooks(ctx, all); err != nil {
		return nil, fmt.Errorf("read the stock in Redis: %w", err)
	}
	return all, nil
}

// booksOutput is what books prints.
type booksOutput struct {
	Balanced   bool            `json:"balanced"`
	Activities []activityBooks `json:"activities"`
	Violations []booksFailure  `json:"violations"` // [] when balanced
}

// activityBooks is one activity's figures (seckill.Books).
type activityBooks struct {
	ActivityID     int64  `json:"activity_id"`
	TotalStock     int64  `json:"total_stock"`
	Held           int64  `json:"held"` // units held by orders created or paid
	Sold           int64  `json:"sold"` // activities.sold
	Rows           int64  `json:"rows"` // orders in any status
	Paid           int64  `json:"paid"`
	Expired        int64  `json:"expired"`
	DuplicateUsers int64  `json:"duplicate_users"`
	RedisRemaining *int64 `json:"redis_remaining"` // null: Redis holds no stock
	Oversold       int64  `json:"oversold"`
	Imbalance      int64  `json:"imbalance"` // held + redis_remaining - total
}

// booksFailure is one violation, with its activity and check named for
// scripts that act on some checks only.
type booksFailure struct {
	ActivityID int64  `json:"activity_id"`
	Check      string `json:"check"`
	Message    string `json:"message"`
}

func newBooksOutput(all []seckill.Books) booksOutput {
	out := booksOutput{Activities: make([]activityBooks, 0, len(all)), Violations: []booksFailure{}}
	for _, b := range all {
		a := activityBooks{
			ActivityID: b.ActivityID, TotalStock: b.TotalStock, Held: b.Held, Sold: b.Sold, Rows: b.Rows,
			Paid: b.Paid, Expired: b.Expired, DuplicateUsers: b.DuplicateUsers, Oversold: b.Oversold(), Imbalance: b.Imbalance(),
		}
		if b.RedisLoaded {
			a.RedisRemaining = &b.RedisRemaining
		}
		out.Activities = append(out.Activities, a)
		for _, v := range b.Violations() {
			out.Violations = append(out.Violations, booksFailure{ActivityID: b.ActivityID, Check: v.Check, Message: v.Message})
		}
	}
	out.Balanced = len(out.Violations) == 0
	return out
}

// idList is a flag of activity ids, given repeatedly or as a comma list.
type idList []int64

func (l *idList) String() string { return fmt.Sprint([]int64(*l)) }

func (l *idList) Set(v string) error {
	for s := range strings.SplitSeq(v, ",") {
		id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("%q is not an activity id", s)
		}
		*l = append(*l, id)
	}
	return nil
}
