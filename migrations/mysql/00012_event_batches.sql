-- A group commit's created events are sent as one batch (docs/DESIGN.md
-- "Order events"): the group's transaction writes one row here beside its
-- events, and the events themselves say `sent_at` = 1970-01-01 00:00:01
-- ("batched": sent once their batch is) and their batch's id. The relay that
-- sent a batch marks its row: one statement and one small row a group, where
-- marking each event sent cost MariaDB more than inserting it. A batch whose
-- lease lapsed (its relay died, or its send failed) is given back: its row
-- goes, and its events become unsent rows, which any relay claims. The
-- retention deletes a sent batch's events with its row. The events' unsent
-- index takes the batch after sent_at, so a batch's events are found by it.

-- +goose Up
CREATE TABLE order_event_batches (
    id          BIGINT      NOT NULL,
    events      INT         NOT NULL,
    created_at  DATETIME(6) NOT NULL,
    lease_owner VARCHAR(64) COLLATE utf8mb4_bin NULL,
    lease_until DATETIME(6) NULL,
    sent_at     DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00',
    PRIMARY KEY (id),
    KEY ix_order_event_batches_unsent (sent_at, created_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
ALTER TABLE order_events ADD COLUMN batch BIGINT NULL,
    DROP KEY ix_order_events_unsent,
    ADD KEY ix_order_events_unsent (sent_at, batch, created_at);

-- +goose Down
UPDATE order_events e JOIN order_event_batches b ON e.batch = b.id
    SET e.sent_at = b.sent_at
    WHERE e.sent_at = '1970-01-01 00:00:01';
UPDATE order_events SET sent_at = created_at WHERE sent_at = '1970-01-01 00:00:01';
ALTER TABLE order_events DROP KEY ix_order_events_unsent,
    ADD KEY ix_order_events_unsent (sent_at, created_at),
    DROP COLUMN batch;
DROP TABLE order_event_batches;
