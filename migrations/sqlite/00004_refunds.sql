-- The SQLite twin of mysql/00004_refunds.sql: the status triggers of 00002
-- are replaced by ones that also allow 'refunded'.

-- +goose Up
ALTER TABLE orders ADD COLUMN refunded_by VARCHAR(128) NULL;
ALTER TABLE orders ADD COLUMN refunded_at DATETIME NULL;
DROP TRIGGER chk_orders_status_update;
DROP TRIGGER chk_orders_status_insert;
-- +goose StatementBegin
CREATE TRIGGER chk_orders_status_insert BEFORE INSERT ON orders
WHEN NEW.status NOT IN ('created', 'paid', 'expired', 'refund_required', 'refunded')
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: chk_orders_status');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER chk_orders_status_update BEFORE UPDATE OF status ON orders
WHEN NEW.status NOT IN ('created', 'paid', 'expired', 'refund_required', 'refunded')
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: chk_orders_status');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER chk_orders_status_update;
DROP TRIGGER chk_orders_status_insert;
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
ALTER TABLE orders DROP COLUMN refunded_at;
ALTER TABLE orders DROP COLUMN refunded_by;
