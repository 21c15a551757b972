-- Prices (docs/API.md "Prices"): an activity may have a price, in minor
-- units of an ISO 4217 currency, and each order keeps the price its unit was
-- sold at, so a payment can be checked against it. An activity without a
-- price (made before prices, or by a client that sends none) has both NULL,
-- and so do its orders. `refund_reason` says why a refund_required order
-- must be refunded; every one before this migration was paid late.

-- +goose Up
ALTER TABLE activities
    ADD COLUMN price_minor BIGINT  NULL,
    ADD COLUMN currency    CHAR(3) NULL,
    ADD CONSTRAINT chk_activities_price CHECK ((price_minor IS NULL AND currency IS NULL) OR (price_minor > 0 AND currency IS NOT NULL));
ALTER TABLE orders
    ADD COLUMN price_minor   BIGINT      NULL,
    ADD COLUMN currency      CHAR(3)     NULL,
    ADD COLUMN refund_reason VARCHAR(32) NULL;
UPDATE orders SET refund_reason = 'paid_late' WHERE status IN ('refund_required', 'refunded');

-- +goose Down
ALTER TABLE orders
    DROP COLUMN refund_reason,
    DROP COLUMN currency,
    DROP COLUMN price_minor;
ALTER TABLE activities
    DROP CONSTRAINT chk_activities_price,
    DROP COLUMN currency,
    DROP COLUMN price_minor;
