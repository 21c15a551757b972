-- The SQLite twin of mysql/00008_order_events.sql.

-- +goose Up
CREATE TABLE order_events (
    id            VARCHAR(36) NOT NULL PRIMARY KEY,
    aggregatetype VARCHAR(32) NOT NULL,
    aggregateid   VARCHAR(36) NOT NULL,
    type          VARCHAR(64) NOT NULL,
    payload       TEXT        NOT NULL,
    sequence      INTEGER     NOT NULL,
    activity_id   BIGINT      NOT NULL,
    created_at    DATETIME    NOT NULL,
    lease_owner   VARCHAR(64) NULL,
    lease_until   DATETIME    NULL,
    sent_at       DATETIME    NULL
);
CREATE UNIQUE INDEX uq_order_events_sequence ON order_events (aggregateid, sequence);
CREATE INDEX ix_order_events_unsent ON order_events (sent_at, created_at);
ALTER TABLE orders ADD COLUMN event_sequence INTEGER NOT NULL DEFAULT 1;

-- +goose Down
DROP TABLE order_events;
ALTER TABLE orders DROP COLUMN event_sequence;
