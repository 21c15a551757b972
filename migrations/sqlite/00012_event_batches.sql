-- The SQLite twin of mysql/00012_event_batches.sql.

-- +goose Up
CREATE TABLE order_event_batches (
    id          BIGINT      NOT NULL PRIMARY KEY,
    events      INTEGER     NOT NULL,
    created_at  DATETIME    NOT NULL,
    lease_owner VARCHAR(64) NULL,
    lease_until DATETIME    NULL,
    sent_at     DATETIME    NOT NULL DEFAULT '1970-01-01 00:00:00+00:00'
);
CREATE INDEX ix_order_event_batches_unsent ON order_event_batches (sent_at, created_at);
ALTER TABLE order_events ADD COLUMN batch BIGINT NULL;
DROP INDEX ix_order_events_unsent;
CREATE INDEX ix_order_events_unsent ON order_events (sent_at, batch, created_at);

-- +goose Down
UPDATE order_events SET sent_at = (SELECT b.sent_at FROM order_event_batches b WHERE b.id = order_events.batch)
    WHERE sent_at = '1970-01-01 00:00:01+00:00' AND batch IN (SELECT id FROM order_event_batches);
UPDATE order_events SET sent_at = created_at WHERE sent_at = '1970-01-01 00:00:01+00:00';
DROP INDEX ix_order_events_unsent;
CREATE INDEX ix_order_events_unsent ON order_events (sent_at, created_at);
ALTER TABLE order_events DROP COLUMN batch;
DROP TABLE order_event_batches;
