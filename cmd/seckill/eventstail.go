package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/outbox"
)

// eventsCommand runs `seckill events tail [--from ID]`: the configured
// sink's order events as JSON lines (one CloudEvents envelope each) on
// stdout, until interrupted.
func eventsCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "tail" {
		fmt.Fprintln(stderr, "usage: seckill events tail [--from ID]")
		return errUsage
	}
	fs := flag.NewFlagSet("events tail", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "start after this Redis stream entry id (default: the first), or at this Kafka offset (default: the first)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	emit := func(_ string, event []byte) error {
		_, err := fmt.Fprintf(stdout, "%s\n", event)
		return err
	}
	switch cfg.Events.Sink {
	case eventsOff:
		return errors.New("events tail: SECKILL_EVENTS=off: no sink to read (the events are in the order_events table)")
	case eventsKafka:
		if err := cfg.refusePlainInClear(); err != nil {
			return fmt.Errorf("events tail: %w", err)
		}
		return outbox.TailKafka(ctx, cfg.Events.KafkaBrokers, cfg.Events.KafkaTopic, *from, emit, cfg.Events.kafkaOpts...)
	}
	if cfg.RedisURL == "" {
		return errors.New("events tail: SECKILL_REDIS_URL must be set (the demo prints its own)")
	}
	rdb := cfg.Redis.client()
	defer rdb.Close()
	start := *from
	if start == "" {
		start = "0"
	}
	noticeEmptyStream(ctx, rdb, cfg, stderr)
	return outbox.TailRedis(ctx, rdb, cfg.Events.Stream, start, emit)
}

// noticeEmptyStream says on stderr, at once, that the stream to tail does
// not exist or has no entries, naming it and the key prefix: with a wrong
// SECKILL_KEY_PREFIX the tail would otherwise wait in silence. Then the
// tail waits for the first event all the same. Said nothing when the
// stream cannot be asked about within notice.
func noticeEmptyStream(ctx context.Context, rdb redis.UniversalClient, cfg config, stderr io.Writer) {
	const notice = 1500 * time.Millisecond
	ctx, cancel := context.WithTimeout(ctx, notice)
	defer cancel()
	n, err := outbox.StreamLength(ctx, rdb, cfg.Events.Stream)
	what := "has no entries"
	switch {
	case errors.Is(err, outbox.ErrNoStream):
		what = "does not exist"
	case err != nil || n > 0:
		return
	}
	fmt.Fprintf(stderr, "events tail: stream %q %s (key prefix %q, from SECKILL_KEY_PREFIX; SECKILL_EVENTS_STREAM names the stream): waiting for its first event\n",
		cfg.Events.Stream, what, cfg.KeyPrefix)
}
