package outbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The reading side, for `seckill events tail`: a sink's events from a
// position on, one CloudEvents envelope at a time, until ctx ends.

// ErrNoStream: the stream does not exist.
var ErrNoStream = errors.New("outbox: no such stream")

// StreamLength is the number of entries in the stream, or ErrNoStream. It
// asks XINFO STREAM, which the events' read-only consumers may run.
func StreamLength(ctx context.Context, rdb redis.UniversalClient, stream string) (int64, error) {
	info, err := rdb.XInfoStream(ctx, stream).Result()
	switch {
	case err != nil && strings.Contains(err.Error(), "no such key"):
		return 0, ErrNoStream
	case err != nil:
		return 0, fmt.Errorf("outbox: XINFO STREAM %s: %w", stream, err)
	}
	return info.Length, nil
}

// TailRedis calls emit with each event of the stream after the entry id from
// ("0": from the first), waiting for new ones, until ctx ends (nil) or a
// read fails.
func TailRedis(ctx context.Context, rdb redis.UniversalClient, stream, from string, emit func(entryID string, event []byte) error) error {
	for {
		res, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{stream, from}, Count: 500, Block: 2 * time.Second}).Result()
		switch {
		case ctx.Err() != nil:
			return nil //nolint:nilerr // the caller ended the tail: not a failure
		case errors.Is(err, redis.Nil):
			continue
		case err != nil:
			return fmt.Errorf("outbox: read %s: %w", stream, err)
		}
		for _, s := range res {
			for _, m := range s.Messages {
				from = m.ID
				ev, _ := m.Values["event"].(string)
				if err := emit(m.ID, []byte(ev)); err != nil {
					return err
				}
			}
		}
	}
}

// TailKafka calls emit with each event of the topic from the offset from
// (in every partition; "" or "0": from the first), until ctx ends. opts
// come after the tail's own (KafkaSecurity.Opts).
func TailKafka(ctx context.Context, brokers []string, topic, from string, emit func(position string, event []byte) error, opts ...kgo.Opt) error {
	offset := kgo.NewOffset().AtStart()
	if from != "" {
		n, err := strconv.ParseInt(from, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("outbox: --from %q: a Kafka offset is a whole number", from)
		}
		offset = kgo.NewOffset().At(n)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(offset)}, opts...)...)
	if err != nil {
		return fmt.Errorf("outbox: kafka client: %w", err)
	}
	defer cl.Close()
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			return fmt.Errorf("outbox: read %s: %w", topic, errs[0].Err)
		}
		var emitErr error
		fetches.EachRecord(func(r *kgo.Record) {
			if emitErr == nil {
				emitErr = emit(fmt.Sprintf("%d/%d", r.Partition, r.Offset), r.Value)
			}
		})
		if emitErr != nil {
			return emitErr
		}
	}
}
