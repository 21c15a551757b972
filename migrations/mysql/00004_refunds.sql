-- Refunds done by a person (docs/API.md "Admin tasks"): an order whose
-- payment came after it expired is `refund_required` until an operator marks
-- the refund done; it is then `refunded`, with who did it and when. The
-- status CHECK of 00002 gains the new value.

-- +goose Up
ALTER TABLE orders
    DROP CONSTRAINT chk_orders_status,
    ADD COLUMN refunded_by VARCHAR(128) NULL,
    ADD COLUMN refunded_at DATETIME(6)  NULL,
    ADD CONSTRAINT chk_orders_status CHECK (status IN ('created', 'paid', 'expired', 'refund_required', 'refunded'));

-- +goose Down
ALTER TABLE orders
    DROP CONSTRAINT chk_orders_status,
    DROP COLUMN refunded_at,
    DROP COLUMN refunded_by,
    ADD CONSTRAINT chk_orders_status CHECK (status IN ('created', 'paid', 'expired', 'refund_required'));
