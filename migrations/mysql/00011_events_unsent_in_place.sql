-- An unsent event's sent_at is 1970-01-01 00:00:00, not NULL (docs/DESIGN.md
-- "Order events"). The relay marks each row it sent; from NULL the row grows
-- by the DATETIME's eight bytes, and InnoDB rewrites the whole row, payload
-- and all, in the table and the redo log, where overwriting a value of the
-- same size is done in place: the mark cost MariaDB twice the CPU. The
-- column stays NULL-able: an instance older than this, still running in a
-- rolling upgrade, writes NULL, and the relay reads NULL as unsent too. The
-- index (sent_at, created_at) finds the unsent rows as before.

-- +goose Up
UPDATE order_events SET sent_at = '1970-01-01 00:00:00' WHERE sent_at IS NULL;

-- +goose Down
UPDATE order_events SET sent_at = NULL WHERE sent_at = '1970-01-01 00:00:00';
