-- Order events (docs/API.md "Order events"): a transactional outbox. Each
-- order's creation and each change of its status inserts one row here in
-- the same transaction as the change, so an event exists exactly when its
-- change committed. The first five columns are the ones Debezium's outbox
-- event router reads; `payload` is the whole CloudEvents envelope.
-- `sequence` counts one order's events from 1; the unique key makes a second
-- event for the same step impossible. The relay claims unsent rows with a
-- lease (lease_owner, lease_until), and marks them sent once the sink
-- acknowledged them; it finds them by `sent_at IS NULL`, never by id order,
-- since rows commit out of id order. Every index costs each purchase's
-- transaction a write per event, so there are only the three the relay
-- needs: the unsent rows (which the audit's per-activity count filters too,
-- being few), the id, and the sequence. orders.event_sequence is the sequence
-- of the order's last event: each status change takes the next.

-- +goose Up
CREATE TABLE order_events (
    id            CHAR(36)     COLLATE utf8mb4_bin NOT NULL,
    aggregatetype VARCHAR(32)  NOT NULL,
    aggregateid   VARCHAR(36)  COLLATE utf8mb4_bin NOT NULL,
    type          VARCHAR(64)  NOT NULL,
    payload       MEDIUMTEXT   NOT NULL,
    sequence      INT          NOT NULL,
    activity_id   BIGINT       NOT NULL,
    created_at    DATETIME(6)  NOT NULL,
    lease_owner   VARCHAR(64)  COLLATE utf8mb4_bin NULL,
    lease_until   DATETIME(6)  NULL,
    sent_at       DATETIME(6)  NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uq_order_events_sequence (aggregateid, sequence),
    KEY ix_order_events_unsent (sent_at, created_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
ALTER TABLE orders ADD COLUMN event_sequence INT NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE orders DROP COLUMN event_sequence;
DROP TABLE order_events;
