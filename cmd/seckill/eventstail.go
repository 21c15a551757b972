package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

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
		return outbox.TailKafka(ctx, cfg.Events.KafkaBrokers, cfg.Events.KafkaTopic, *from, emit)
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
	return outbox.TailRedis(ctx, rdb, cfg.Events.Stream, start, emit)
}
