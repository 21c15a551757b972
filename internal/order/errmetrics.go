package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/seckill-oss/seckill/internal/promreg"
)

// countErrors counts the store's failed database calls in
// seckill_db_errors_total{op} (op: begin, exec, query, commit, rollback),
// for the operators' dashboard. Outcomes that are answers rather than
// failures are not counted: no rows and a caller that gave up. (A duplicate
// order is no error at all: the batch insert skips it.) Open calls it,
// before the store is used; a collector of the same name already in reg is
// shared.
func (s *Store) countErrors(reg prometheus.Registerer) error {
	c := promreg.NewRegistrar(reg, nil).CounterVec("seckill_db_errors_total",
		"Database calls that failed, by operation: begin, exec, query, commit, rollback.", "op")
	promreg.Zero(c.MetricVec, "begin", "exec", "query", "commit", "rollback")
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("order: count errors: %w", err)
	}
	// Every session and transaction gorm starts takes its pool from these.
	pool := &countingPool{ConnPool: s.db.ConnPool, db: sqlDB, errs: c}
	s.db.ConnPool = pool
	s.db.Statement.ConnPool = pool
	return nil
}

// countingPool is the store's connection pool, counting failures.
type countingPool struct {
	gorm.ConnPool
	db   *sql.DB
	errs *prometheus.CounterVec
}

// GetDBConn implements gorm.GetDBConnector, so Close and Ping still reach
// the pool.
func (p *countingPool) GetDBConn() (*sql.DB, error) { return p.db, nil }

func (p *countingPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := p.ConnPool.ExecContext(ctx, query, args...)
	countFailure(p.errs, "exec", err)
	return res, err
}

func (p *countingPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := p.ConnPool.QueryContext(ctx, query, args...)
	countFailure(p.errs, "query", err)
	return rows, err
}

func (p *countingPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	row := p.ConnPool.QueryRowContext(ctx, query, args...)
	countFailure(p.errs, "query", row.Err())
	return row
}

// BeginTx implements gorm.ConnPoolBeginner.
func (p *countingPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	tx, err := p.db.BeginTx(ctx, opts)
	countFailure(p.errs, "begin", err)
	if err != nil {
		return nil, err
	}
	return &countingTx{Tx: tx, errs: p.errs}, nil
}

// countingTx is one transaction, counting failures.
type countingTx struct {
	*sql.Tx
	errs *prometheus.CounterVec
}

func (t *countingTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := t.Tx.ExecContext(ctx, query, args...)
	countFailure(t.errs, "exec", err)
	return res, err
}

func (t *countingTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := t.Tx.QueryContext(ctx, query, args...)
	countFailure(t.errs, "query", err)
	return rows, err
}

func (t *countingTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	row := t.Tx.QueryRowContext(ctx, query, args...)
	countFailure(t.errs, "query", row.Err())
	return row
}

// Commit implements gorm.TxCommitter.
func (t *countingTx) Commit() error {
	err := t.Tx.Commit()
	countFailure(t.errs, "commit", err)
	return err
}

// Rollback implements gorm.TxCommitter. Rolling back a finished
// transaction (the deferred Rollback after a Commit) is not a failure.
func (t *countingTx) Rollback() error {
	err := t.Tx.Rollback()
	if !errors.Is(err, sql.ErrTxDone) {
		countFailure(t.errs, "rollback", err)
	}
	return err
}

func countFailure(c *prometheus.CounterVec, op string, err error) {
	if err == nil || errors.Is(err, sql.ErrNoRows) || errors.Is(err, context.Canceled) {
		return
	}
	c.WithLabelValues(op).Inc()
}
