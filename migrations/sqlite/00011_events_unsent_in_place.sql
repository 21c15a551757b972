-- The SQLite twin of mysql/00011_events_unsent_in_place.sql: an unsent
-- event's sent_at is 1970-01-01 00:00:00 UTC, written as the driver writes
-- times. SQLite cannot make the column NOT NULL in place; the service never
-- writes NULL to it.

-- +goose Up
UPDATE order_events SET sent_at = '1970-01-01 00:00:00+00:00' WHERE sent_at IS NULL;

-- +goose Down
UPDATE order_events SET sent_at = NULL WHERE sent_at = '1970-01-01 00:00:00+00:00';
