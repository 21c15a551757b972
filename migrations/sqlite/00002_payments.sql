-- The SQLite twin of mysql/00002_payments.sql. SQLite cannot add a CHECK
-- constraint to an existing table; the status values are checked by a
-- trigger instead.

-- +goose Up
ALTER TABLE orders ADD COLUMN pay_by DATETIME NULL;
ALTER TABLE orders ADD COLUMN paid_at DATETIME NULL;
ALTER TABLE orders ADD COLUMN status_fence BIGINT NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN queue_claim_until DATETIME NULL;
CREATE INDEX idx_orders_status_pay_by ON orders (status, pay_by);
-- +goose StatementBegin
CREATE TRIGGER chk_orders_status_insert BEFORE INSERT ON orders
WHEN NEW.status NOT IN ('created', 'paid', 'expired', 'refund_required')
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: chk_orders_status');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER chk_orders_status_update BEFORE UPDATE OF status ON orders
WHEN NEW.status NOT IN ('created', 'paid', 'expired', 'refund_required')
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: chk_orders_status');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER chk_orders_status_update;
DROP TRIGGER chk_orders_status_insert;
DROP INDEX idx_orders_status_pay_by;
ALTER TABLE orders DROP COLUMN queue_claim_until;
ALTER TABLE orders DROP COLUMN status_fence;
ALTER TABLE orders DROP COLUMN paid_at;
ALTER TABLE orders DROP COLUMN pay_by;
