-- The SQLite twin of mysql/00005_prices.sql. SQLite cannot add a table
-- CHECK to an existing table; the domain checks a price before it is stored.

-- +goose Up
ALTER TABLE activities ADD COLUMN price_minor BIGINT NULL;
ALTER TABLE activities ADD COLUMN currency CHAR(3) NULL;
ALTER TABLE orders ADD COLUMN price_minor BIGINT NULL;
ALTER TABLE orders ADD COLUMN currency CHAR(3) NULL;
ALTER TABLE orders ADD COLUMN refund_reason VARCHAR(32) NULL;
UPDATE orders SET refund_reason = 'paid_late' WHERE status IN ('refund_required', 'refunded');

-- +goose Down
ALTER TABLE orders DROP COLUMN refund_reason;
ALTER TABLE orders DROP COLUMN currency;
ALTER TABLE orders DROP COLUMN price_minor;
ALTER TABLE activities DROP COLUMN currency;
ALTER TABLE activities DROP COLUMN price_minor;
