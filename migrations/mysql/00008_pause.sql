-- Stopping a sale (docs/API.md "Stopping a sale"): `paused_at` is when ops
-- paused the activity, NULL while it is not paused. Redis holds the flag
-- the deduct checks (internal/stock); this column is what a reload restores
-- it from after Redis lost it. Numbered 00008: 00007 is left to the order
-- events' outbox being written at the same time.

-- +goose Up
ALTER TABLE activities ADD COLUMN paused_at DATETIME(6) NULL;

-- +goose Down
ALTER TABLE activities DROP COLUMN paused_at;
