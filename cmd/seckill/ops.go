package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// migrate applies pending migrations and exits, for deploys that migrate
// before they roll out (serve applies them too, unless
// SECKILL_MIGRATIONS=skip). It connects with SECKILL_MIGRATE_DSN when set:
// a user allowed to change the schema, which the runtime user need not be.
func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	name, dsn := "SECKILL_MYSQL_DSN", cfg.MySQLDSN
	if cfg.MigrateDSN != "" {
		name, dsn = "SECKILL_MIGRATE_DSN", cfg.MigrateDSN
	}
	if dsn == "" {
		return errors.New("migrate: SECKILL_MYSQL_DSN is unset, and so is SECKILL_MIGRATE_DSN (the embedded database is migrated when serve starts)")
	}
	log := newLogger(cfg, stderr)
	log.Info("applying migrations", "dsn_from", name)
	if err := order.Migrate(ctx, dsn); err != nil {
		return fmt.Errorf("migrate: %w", explainDBErrorOf(name, dsn, err))
	}
	log.Info("migrations applied")
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}

// reconcile repairs one activity's stock in Redis from the database, the
// ops tool for "Redis lost its data" or an audit that is not consistent.
func reconcile(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	id := fs.Int64("activity", 0, "id of the activity to reconcile (required)")
	force := fs.Bool("force", false, "load the stock even when none is under SECKILL_KEY_PREFIX for an activity with orders (Redis lost it)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *id <= 0 {
		fmt.Fprintln(stderr, "reconcile: -activity N is required")
		fs.Usage()
		return errUsage
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	if cfg.RedisURL == "" || cfg.MySQLDSN == "" {
		return errors.New("reconcile: SECKILL_REDIS_URL and SECKILL_MYSQL_DSN must both be set (an embedded store lives only inside its serve process)")
	}
	log := newLogger(cfg, stderr)
	cfg.BooksSweep = 0 // one repair, asked for: no background sweep
	// Reconcile never asks the user service; approving is only a filler.
	b, err := openBackend(ctx, cfg, usercheck.ApproveAll{}, log, prometheus.NewRegistry())
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	defer b.Close()
	if !*force {
		if err := checkStockPrefix(ctx, b, cfg.KeyPrefix, *id); err != nil {
			return err
		}
	}
	r, err := b.core.Books.Reconcile(ctx, *id)
	if err != nil {
		return fmt.Errorf("reconcile activity %d: %w", *id, err)
	}
	log.Info("reconciled", "activity_id", r.ActivityID, "before", r.LoadedBefore(), "after", r.After, "changed", r.Changed)
	out := reconcileOutput{
		ActivityID: r.ActivityID,
		TotalStock: r.TotalStock,
		Orders:     r.Orders,
		Before:     r.LoadedBefore(),
		After:      r.After,
		Changed:    r.Changed,
	}
	return printJSON(stdout, out)
}

// checkBooks checks the books of activities (seckill.Books) on the database and
// the Redis the service runs on, and prints them as JSON: the check the
// chaos campaign and the e2e tests call in Go, for operators and the load
// tests' scripts. It returns an error
// (exit 1) when any activity's books do not balance, and an exitError of
// status 2 when it could not look: bad flags, settings or stores.
func checkBooks(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("books", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ids idList
	fs.Var(&ids, "activity", "id of an activity to check: repeatable, or a comma list (default: every activity)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	all, err := readBooks(ctx, getenv, stderr, ids)
	if err != nil {
		return exitError{status: 2, err: fmt.Errorf("books: %w", err)}
	}
	out := newBooksOutput(all)
	if err := printJSON(stdout, out); err != nil {
		return exitError{status: 2, err: fmt.Errorf("books: %w", err)}
	}
	if !out.Balanced {
		return fmt.Errorf("books: %d violations in %d activities, the first: %s", len(out.Violations), len(all), out.Violations[0].Message)
	}
	return nil
}

// printJSON writes v as indented JSON, the output of the ops commands.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// checkStockPrefix refuses to reconcile an activity that has orders but no
// stock key under prefix: most likely SECKILL_KEY_PREFIX is not the
// service's (forgotten, or another deployment's), and the stock would be
// written where no instance reads it while the real one stays as it was.
// After Redis really lost the activity's data, -force goes on.
func checkStockPrefix(ctx context.Context, b *backend, prefix string, id int64) error {
	key := keys.NewSpace(prefix).Stock(id)
	n, err := b.rdb.Exists(ctx, key).Result()
	if err != nil {
		return fmt.Errorf("reconcile activity %d: Redis did not answer: %w", id, err)
	}
	if n > 0 {
		return nil
	}
	counts, err := b.orders.Orders.CountByStatus(ctx, id)
	if err != nil {
		return fmt.Errorf("reconcile activity %d: the order database did not answer: %w", id, explainDBError(b.dsn, err))
	}
	var orders int64
	for _, c := range counts {
		orders += c
	}
	if orders == 0 {
		return nil
	}
	return fmt.Errorf("reconcile activity %d: it has %d orders but Redis holds no stock for it under SECKILL_KEY_PREFIX=%q (no key %s): "+
		"check that SECKILL_KEY_PREFIX is the one the service runs with; if Redis lost the activity's data, run again with -force", id, orders, prefix, key)
}

// reconcileOutput is what reconcile prints: the same fields as
// POST /admin/v1/activities/{id}/reconcile.
type reconcileOutput struct {
	ActivityID int64  `json:"activity_id"`
	TotalStock int64  `json:"total_stock"`
	Orders     int64  `json:"orders"`
	Before     *int64 `json:"before"` // null: no stock was loaded
	After      int64  `json:"after"`
	Changed    bool   `json:"changed"`
}
